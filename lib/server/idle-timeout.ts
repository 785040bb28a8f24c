/**
 * The daemon's idle timeout as an operator over whether it is busy: each time it stops being busy a timer of
 * `timeoutMs` starts, and any busy spell (a request, a job run) drops that timer, so the next quiet spell
 * starts a fresh one. The first timer to run out emits how long the server was idle, once.
 */
import {
  type OperatorFunction,
  type SchedulerLike,
  NEVER,
  asyncScheduler,
  defer,
  distinctUntilChanged,
  map,
  pipe,
  switchMap,
  take,
  timer,
} from 'rxjs';

export function idleTimeout(timeoutMs: number, scheduler: SchedulerLike = asyncScheduler): OperatorFunction<boolean, number> {
  return pipe(
    distinctUntilChanged(),
    switchMap((busy) =>
      busy
        ? NEVER
        : defer(() => {
            const since = scheduler.now();
            return timer(timeoutMs, scheduler).pipe(map(() => scheduler.now() - since));
          }),
    ),
    take(1),
  );
}
