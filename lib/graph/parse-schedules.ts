/** The `schedules` of platform.json, checked as strictly as the jobs: every mistake names the schedule and field. */
import type { ScheduleDefinition } from './schedule-definition.js';
import { TEMPLATE_VARIABLES, checkCron, parseOffset } from './schedule-time.js';
import { templateVariables } from './template.js';
import { errorMessage } from '../errors.js';

const SCHEDULE_KEYS = ['name', 'cron', 'timezone', 'partitions', 'offset', 'priority', 'ttl_seconds', 'sla_seconds', 'catchup'];
const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;
const MAX_CATCHUP = 1000;

type Fail = (path: string, message: string) => never;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const wholeNumber = (v: unknown, min: number, max: number): v is number => typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max;

export function parseSchedules(raw: unknown, fail: Fail): ScheduleDefinition[] {
  if (raw === undefined) return [];
  if (!Array.isArray(raw)) fail('schedules', 'must be an array of {"name", "cron", "partitions"} objects.');
  const seen = new Set<string>();
  return (raw as unknown[]).map((item, i) => {
    const at = `schedules[${i}]`;
    if (!isObject(item)) return fail(at, 'each schedule must be an object like {"name": "daily", "cron": "0 3 * * *", "partitions": ["daily/revenue/date=${date}"]}.');
    const name = item.name;
    if (typeof name !== 'string' || !NAME.test(name)) {
      fail(`${at}.name`, `must be a name of letters, digits, '_', '.' or '-' that starts with a letter or digit (it becomes the want's source "schedule:<name>"), got ${JSON.stringify(name)}.`);
    }
    const where = `${at} (schedule "${name as string}")`;
    if (seen.has(name as string)) fail(where, `duplicate name "${name as string}"; every schedule needs its own.`);
    seen.add(name as string);
    for (const key of Object.keys(item)) {
      if (!SCHEDULE_KEYS.includes(key)) fail(`${where}.${key}`, `unknown key; a schedule takes ${SCHEDULE_KEYS.join(', ')}.`);
    }
    const timezone = item.timezone ?? 'UTC';
    if (typeof timezone !== 'string' || !validZone(timezone)) fail(`${where}.timezone`, `must be an IANA time zone like "Europe/Paris" or "UTC", got ${JSON.stringify(timezone)}.`);
    const cron = item.cron;
    if (typeof cron !== 'string') return fail(`${where}.cron`, `must be a cron string like "0 3 * * *" (5 fields) or "*/30 * * * * *" (6, seconds first).`);
    try {
      checkCron(cron, timezone as string);
    } catch (err) {
      fail(`${where}.cron`, `${JSON.stringify(cron)} is not a cron expression: ${errorMessage(err)}.`);
    }
    const partitions = item.partitions;
    if (!Array.isArray(partitions) || partitions.length === 0 || partitions.some((p) => typeof p !== 'string' || p.trim() === '')) {
      fail(`${where}.partitions`, 'must be a non-empty array of ref templates like "daily/revenue/date=${date}".');
    }
    (partitions as string[]).forEach((p, k) => {
      for (const v of templateVariables(p)) {
        if (!(TEMPLATE_VARIABLES as readonly string[]).includes(v)) {
          fail(`${where}.partitions[${k}]`, `\${${v}} is not a schedule variable; use ${TEMPLATE_VARIABLES.map((x) => `\${${x}}`).join(', ')}.`);
        }
      }
    });
    let offset_ms = 0;
    const offset = item.offset ?? '';
    if (typeof offset !== 'string') fail(`${where}.offset`, `must be a string like "-1d" or "+2h", got ${JSON.stringify(offset)}.`);
    if (offset !== '') {
      try {
        offset_ms = parseOffset(offset as string);
      } catch (err) {
        fail(`${where}.offset`, `${errorMessage(err)}.`);
      }
    }
    const priority = item.priority ?? 0;
    if (!wholeNumber(priority, -1_000_000, 1_000_000)) fail(`${where}.priority`, `must be a whole number (higher runs first), got ${JSON.stringify(priority)}.`);
    const seconds = (key: 'ttl_seconds' | 'sla_seconds') => {
      const v = item[key] ?? 0;
      if (!wholeNumber(v, 0, Number.MAX_SAFE_INTEGER)) fail(`${where}.${key}`, `must be a whole number of seconds, got ${JSON.stringify(v)}.`);
      return v as number;
    };
    const catchup = item.catchup ?? 1;
    if (!wholeNumber(catchup, 0, MAX_CATCHUP)) {
      fail(
        `${where}.catchup`,
        `must be a whole number from 0 to ${MAX_CATCHUP} (how many of the latest missed ticks are made up for at start; 0: none, only ticks that fall due while the daemon runs are made), got ${JSON.stringify(catchup)}.`,
      );
    }
    // The ttl counts from the data timestamp, the tick moved by the offset: one no longer than the offset takes back is
    // over when the tick's want is made, and every want is canceled at birth (the schedule does nothing, and looks well).
    const ttl = seconds('ttl_seconds');
    if (ttl > 0 && offset_ms < 0 && ttl * 1000 <= -offset_ms) {
      fail(
        `${where}.ttl_seconds`,
        `is ${ttl} s, no more than the offset ${JSON.stringify(offset)} takes back: it counts from the tick moved by the offset, so every tick's want would be expired when made. Give more than ${-offset_ms / 1000} s, or 0 for none.`,
      );
    }
    return {
      name: name as string,
      cron,
      timezone: timezone as string,
      partitions: partitions as string[],
      offset_ms,
      offset: offset as string,
      priority: priority as number,
      ttl_seconds: seconds('ttl_seconds'),
      sla_seconds: seconds('sla_seconds'),
      catchup: catchup as number,
    };
  });
}

function validZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}
