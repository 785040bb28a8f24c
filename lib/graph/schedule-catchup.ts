/**
 * Which due ticks of a schedule a scan makes and which it skips, pure: after downtime (or a scan that came late) the
 * latest `catchup` due ticks are made and the older ones are skipped; with `catchup: 0` no missed tick is made, only
 * one that fell due while the daemon ran. Skipped ticks are counted, so the planner records them rather than drop
 * them silently.
 *
 * Cost: the ticks made are found walking back from now (at most `catchup` steps), the skipped ones counted walking
 * forward from the first of them, at most MAX_COUNTED_TICKS steps. cron-parser takes 25-300 us a step (measured:
 * `* * * * *` in UTC 25 us, in Europe/Paris 100 us; `0 3 * * *` 80-300 us), so a gap costs a scan at most ~0.1 s
 * for a cron that ticks often enough to reach the bound, once: the skip is recorded and never counted again. A scan
 * takes at most CRON_STEPS_PER_SCAN of them over all its schedules (the rest wait for the next scan).
 */
import { CronExpressionParser } from 'cron-parser';
import type { ScheduleDefinition } from './schedule-definition.js';
import { firstTickAfter } from './schedule-time.js';

/** Skipped ticks counted one by one, at most, in one gap: beyond it the count is a lower bound (`count_at_least`). */
export const MAX_COUNTED_TICKS = 1000;

/**
 * Cron steps one scan may take over all its schedules: a schedule is begun only while some are left (so one scan
 * takes at most this plus one schedule's gap), the rest wait for the next scan. 20 minutely schedules in
 * Europe/Paris after a day down were 20,000 steps, 1.9 s of the loop in one step.
 */
export const CRON_STEPS_PER_SCAN = 2000;

/** What is left of a scan's cron steps; each step of an iterator takes one. */
export interface CronBudget {
  left: number;
}

/** A run of consecutive ticks skipped: how many, and the first and latest of them (epoch ms). */
export interface SkippedTicks {
  count: number;
  /** More ticks than MAX_COUNTED_TICKS were in the gap: `count` is that bound, not the exact number. */
  count_at_least: boolean;
  first_tick: number;
  latest_tick: number;
}

export interface CatchUp {
  /** Ticks to make wants for, oldest first. */
  make: number[];
  /** The due ticks older than those, skipped; undefined when none is. */
  skipped: SkippedTicks | undefined;
}

type Cron = Pick<ScheduleDefinition, 'cron' | 'timezone'>;

/**
 * The ticks after `after` (the schedule's start, or its latest tick made or skipped) up to `now`: the latest
 * `catchup` of them are made, the rest skipped. `upSince` is since when the schedule has been served (the daemon's
 * start, or its return to platform.json): a tick before it fell due while nothing served it, and was missed.
 * `catchup: 0` makes none of those and all of the ticks due since (one, the loop waking at each; more only when it
 * was held up). `budget` counts the cron steps taken.
 */
export function catchUp(s: Cron & Pick<ScheduleDefinition, 'catchup'>, after: number, now: number, upSince: number, budget: CronBudget = { left: Infinity }): CatchUp {
  const first = firstTickAfter(s, after);
  if (first === undefined || first > now) return { make: [], skipped: undefined };
  const it = CronExpressionParser.parse(s.cron, { tz: s.timezone, currentDate: now + 1 });
  // There is one (first <= now), and it is after `after` (first is the earliest tick after it).
  let t = step(() => it.prev(), budget);
  // `catchup: 0`: every tick that fell due since the daemon started is made (a scan held up is not downtime); none
  // from before.
  const room = s.catchup > 0 ? s.catchup : MAX_COUNTED_TICKS;
  const since = s.catchup > 0 ? Number.NEGATIVE_INFINITY : upSince;
  const make: number[] = [];
  while (t !== undefined && t > after && t >= since && make.length < room) {
    make.push(t);
    t = step(() => it.prev(), budget);
  }
  make.reverse();
  // `t` is the latest due tick not made, if any is left after `after`.
  return { make, skipped: t !== undefined && t > after ? countTicks(s, first, t, budget) : undefined };
}

/**
 * The ticks to make wants for now, oldest first (`catchUp` without what it skips); `upSince` by default: a daemon
 * that was always up, for which `catchup: 0` makes the latest due tick as `catchup: 1` does.
 */
export function dueTicks(s: Cron & Pick<ScheduleDefinition, 'catchup'>, after: number, now: number, upSince = Number.NEGATIVE_INFINITY): number[] {
  return catchUp(s, after, now, upSince).make;
}

/** Every tick after `after` up to `now`, as skipped (a schedule resumed: what fell due while it was paused). */
export function ticksBetween(s: Cron, after: number, now: number): SkippedTicks | undefined {
  const first = firstTickAfter(s, after);
  if (first === undefined || first > now) return undefined;
  const latest = step(() => CronExpressionParser.parse(s.cron, { tz: s.timezone, currentDate: now + 1 }).prev());
  return latest === undefined || latest < first ? undefined : countTicks(s, first, latest);
}

/** The ticks from `first` to `latest` (both ticks of the cron), counted one by one up to MAX_COUNTED_TICKS. */
function countTicks(s: Cron, first: number, latest: number, budget: CronBudget = { left: Infinity }): SkippedTicks {
  const it = CronExpressionParser.parse(s.cron, { tz: s.timezone, currentDate: first });
  let count = 1;
  let t = first;
  while (t < latest) {
    if (count >= MAX_COUNTED_TICKS) return { count, count_at_least: true, first_tick: first, latest_tick: latest };
    const next = step(() => it.next(), budget);
    // The cron has no tick after `t` (cannot happen while `latest` is ahead, but never loop on it).
    if (next === undefined || next > latest) break;
    t = next;
    count++;
  }
  return { count, count_at_least: false, first_tick: first, latest_tick: latest };
}

/** One step of cron-parser's iterator; undefined past the cron's last tick (it throws there). */
function step(move: () => { getTime(): number }, budget?: CronBudget): number | undefined {
  if (budget) budget.left--;
  try {
    return move().getTime();
  } catch {
    return undefined;
  }
}
