/**
 * A step that cannot fail for good: when it throws, `onFailure` says what of its batch is left to do (the
 * commands were answered with the fault; job-run news must still be recorded) and that rest is tried again after
 * `delayMs` on the loop's scheduler, until it succeeds or the loop stops, when the rest is emitted for the final
 * step. Nothing is pushed back into shared buffers: the batch travels with the retry.
 */
import { type Observable, type SchedulerLike, catchError, concatMap, defer, ignoreElements, map, race, take, timer } from 'rxjs';

export interface RetryingStepOptions<B> {
  delayMs: number;
  scheduler: SchedulerLike;
  /** Must replay (a ReplaySubject): a step failing after the stop was asked for then ends at once. */
  stop$: Observable<unknown>;
  /** Called once per failure; returns the part of the batch to try again. */
  onFailure: (batch: B, err: unknown) => B;
}

export function retryingStep<B>(run: (batch: B) => PromiseLike<unknown> | Observable<unknown>, options: RetryingStepOptions<B>): (batch: B) => Observable<B> {
  const attempt = (batch: B): Observable<B> =>
    defer(() => run(batch)).pipe(
      ignoreElements(),
      catchError((err: unknown) => {
        const rest = options.onFailure(batch, err);
        return race(
          timer(options.delayMs, options.scheduler).pipe(concatMap(() => attempt(rest))),
          options.stop$.pipe(
            take(1),
            map(() => rest),
          ),
        );
      }),
    );
  return attempt;
}
