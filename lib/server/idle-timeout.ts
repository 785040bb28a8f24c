/**
 * The daemon's idle timeout as an operator over whether it is busy: each time it stops being busy a timer of
 * `timeoutMs` starts, and any busy spell (a request, a job run) drops that timer, so the next quiet spell
 * starts a fresh one. The first timer to run out emits how long the server was idle, once.
 */
import {
  type Observable,
  type OperatorFunction,
  type SchedulerLike,
  NEVER,
  asyncScheduler,
  defer,
  distinctUntilChanged,
  pipe,
  switchMap,
  of,
  take,
  timer,
} from 'rxjs';
import { MAX_TIMER_MS } from '../system/timer-ceiling.js';

export function idleTimeout(timeoutMs: number, scheduler: SchedulerLike = asyncScheduler): OperatorFunction<boolean, number> {
  return pipe(
    distinctUntilChanged(),
    switchMap((busy) =>
      busy
        ? NEVER
        : defer(() => {
            const since = scheduler.now();
            // A timer longer than setTimeout's ceiling (~24.8 days) would fire at once: wait in legs no longer
            // than that until the whole timeout has passed.
            const leg = (): Observable<number> =>
              timer(Math.min(MAX_TIMER_MS, timeoutMs - (scheduler.now() - since)), scheduler).pipe(
                switchMap(() => (scheduler.now() - since >= timeoutMs ? of(scheduler.now() - since) : leg())),
              );
            return leg();
          }),
    ),
    take(1),
  );
}
