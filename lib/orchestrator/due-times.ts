/**
 * Deadlines (epoch ms: a retry falling due, a ttl running out) to the moments they fall due: one timer per
 * distinct pending deadline, however often steps name it again, on the loop's scheduler (virtual in tests).
 */
import { MAX_TIMER_MS } from '../system/timer-ceiling.js';
import { type OperatorFunction, type SchedulerLike, groupBy, ignoreElements, endWith, mergeMap, timer } from 'rxjs';

export function dueTimes(scheduler: SchedulerLike): OperatorFunction<number, number> {
  return (deadlines$) =>
    deadlines$.pipe(
      // A group lives until its deadline's timer fires; the same deadline named again meanwhile joins it. The
      // extra millisecond: a timer may fire a hair early, and a step before the deadline would find nothing due.
      // Capped at setTimeout's ceiling (~24.8 days; a longer delay fires at once): a far deadline then wakes one
      // step early, which names it again.
      groupBy((at) => at, { duration: (group) => timer(Math.min(MAX_TIMER_MS, Math.max(0, group.key - scheduler.now()) + 1), scheduler) }),
      mergeMap((group) => group.pipe(ignoreElements(), endWith(group.key))),
    );
}
