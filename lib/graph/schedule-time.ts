/**
 * The time arithmetic of schedules, pure: when a cron's next tick is, and what a tick's templates say (which due
 * ticks a scan makes or skips: schedule-catchup.ts). Ticks are epoch ms; the cron is read by cron-parser in the
 * schedule's time zone.
 */
import { CronExpressionParser } from 'cron-parser';
import type { ScheduleDefinition } from './schedule-definition.js';
import { LruCache } from './lru-cache.js';
import { fillTemplate } from './template.js';

export const TEMPLATE_VARIABLES = ['date', 'hour', 'minute', 'week', 'month', 'year'] as const;
export type TemplateVariable = (typeof TEMPLATE_VARIABLES)[number];

/** Throws with cron-parser's reason when the expression is not a 5- or 6-field cron it reads. */
export function checkCron(cron: string, timezone: string): void {
  const fields = cron.trim().split(/\s+/).length;
  if (!cron.trim().startsWith('@') && fields !== 5 && fields !== 6) throw new Error(`has ${fields} fields; a cron has 5 (minute first) or 6 (second first)`);
  if (!cron.trim().startsWith('@')) checkSteps(cron.trim().split(/\s+/));
  CronExpressionParser.parse(cron, { tz: timezone, currentDate: 0 });
}

/** Each field's name and largest value, minute first (a 6-field cron has seconds before). */
const FIELDS: ReadonlyArray<[string, number]> = [['minute', 59], ['hour', 23], ['day of month', 31], ['month', 12], ['day of week', 7]];

/**
 * A step wider than its field (`*\/61` minutes) is read by cron-parser as the field's first value alone (minute 0,
 * every hour): surely not what was meant, so it is refused, naming the field and its range (found by QA, session 32).
 */
function checkSteps(parts: readonly string[]): void {
  const names: ReadonlyArray<[string, number]> = parts.length === 6 ? [['second', 59], ...FIELDS] : FIELDS;
  parts.forEach((part, i) => {
    const [name, max] = names[i]!;
    for (const m of part.matchAll(/\/(\d+)/g)) {
      const step = Number(m[1]);
      if (step === 0 || step > max) throw new Error(`its ${name} field '${part}' steps by ${step}; a step there is 1 to ${max}`);
    }
  });
}

/** The first tick after `now`; undefined when the cron has none. */
export function nextTick(s: Pick<ScheduleDefinition, 'cron' | 'timezone'>, now: number): number | undefined {
  try {
    return CronExpressionParser.parse(s.cron, { tz: s.timezone, currentDate: now }).next().getTime();
  } catch {
    return undefined;
  }
}

// Each full scan (every tick of the loop) asks every schedule whether a tick is due: 0.4-0.9 ms a schedule with
// cron-parser, for an answer that changes only when a tick is made. Remembered per (cron, zone, after), it is a map
// hit; the function stays pure, since the answer depends on nothing else.
const firstTicks = new LruCache<string, number | null>(4096);

/** `nextTick`, remembered: the first tick after `after`. */
export function firstTickAfter(s: Pick<ScheduleDefinition, 'cron' | 'timezone'>, after: number): number | undefined {
  const key = `${s.cron}\0${s.timezone}\0${after}`;
  let t = firstTicks.get(key);
  if (t === undefined) {
    t = nextTick(s, after) ?? null;
    firstTicks.set(key, t);
  }
  return t ?? undefined;
}

/** "-1d", "+2h", "30m", "-15s", "500ms" in ms; throws for anything else. */
export function parseOffset(text: string): number {
  const m = /^([+-]?)(\d+)(ms|s|m|h|d|w)$/.exec(text.trim());
  if (!m) throw new Error(`${JSON.stringify(text)} is not an offset like "-1d", "+2h", "-30m", "15s"`);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 }[m[3] as 'ms' | 's' | 'm' | 'h' | 'd' | 'w'];
  return (m[1] === '-' ? -1 : 1) * Number(m[2]) * unit;
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** The calendar parts of an instant in a time zone. */
function parts(ms: number, timezone: string): { year: number; month: number; day: number; hour: number; minute: number } {
  const f = new Intl.DateTimeFormat('en-US', {
    timeZone: timezone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
  });
  const got: Record<string, number> = {};
  for (const p of f.formatToParts(new Date(ms))) if (p.type !== 'literal') got[p.type] = Number(p.value);
  return { year: got.year!, month: got.month!, day: got.day!, hour: got.hour!, minute: got.minute! };
}

/** ISO 8601 week of a calendar date: 2026-W02. */
function isoWeek(year: number, month: number, day: number): string {
  const d = new Date(Date.UTC(year, month - 1, day));
  const weekday = d.getUTCDay() || 7;
  d.setUTCDate(d.getUTCDate() + 4 - weekday);
  const weekYear = d.getUTCFullYear();
  const week = Math.ceil(((d.getTime() - Date.UTC(weekYear, 0, 1)) / 86_400_000 + 1) / 7);
  return `${weekYear}-W${pad(week)}`;
}

/** The template values of an instant: date 2026-01-05, hour 07, minute 30, week 2026-W02, month 01, year 2026. */
export function templateValues(ms: number, timezone: string): Record<TemplateVariable, string> {
  const p = parts(ms, timezone);
  return {
    date: `${p.year}-${pad(p.month)}-${pad(p.day)}`,
    hour: pad(p.hour),
    minute: pad(p.minute),
    week: isoWeek(p.year, p.month, p.day),
    month: pad(p.month),
    year: String(p.year),
  };
}

/** The refs a tick wants: each template filled from the tick time plus the schedule's offset. */
export function tickRefs(s: Pick<ScheduleDefinition, 'partitions' | 'offset_ms' | 'timezone'>, tick: number): string[] {
  const values = templateValues(tick + s.offset_ms, s.timezone);
  return s.partitions.map((t) => fillTemplate(t, values));
}
