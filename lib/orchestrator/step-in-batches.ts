/**
 * `concatMap` over batches: inputs that arrive while a step is scheduled or running wait, and the next step takes
 * all of them at the moment it starts. So a burst of a thousand inputs costs one or two steps, not a thousand,
 * and a step never runs concurrently with another.
 *
 * Why not `buffer(throttle(() => stepDone$, {leading, trailing}))`: throttle subscribes to its duration only
 * after emitting, so a step that completes synchronously signals "done" before anyone listens and the loop stalls
 * for good; and it cuts the batch when the step is asked for, not when it starts, so inputs that arrive while a
 * step waits for its turn on the scheduler would be left for another step. This operator cuts the batch when the
 * scheduler runs the step (a held scheduler in tests holds the whole loop).
 */
import { Observable, type OperatorFunction, type SchedulerLike, type Subscription } from 'rxjs';

export interface StepInBatchesOptions<T> {
  /** When the source completes with inputs no step took: they are handed here (none starts after completion). */
  leftover?: (inputs: T[]) => void;
  /**
   * How long the step for these waiting inputs may wait for more to come (ms; 0: the next turn). Asked of the waiting
   * inputs when the step is scheduled, then of each input that comes while it waits, alone: one that may not wait
   * starts the step at once. So inputs may wait only if each may (not asked of the whole list again at every input:
   * a burst of n inputs would cost n^2/2).
   */
  delayFor?: (waiting: readonly T[]) => number;
}

export function stepInBatches<T, R>(
  step: (batch: T[]) => Observable<R>,
  scheduler: SchedulerLike,
  options: StepInBatchesOptions<T> = {},
): OperatorFunction<T, R> {
  return (source) =>
    new Observable<R>((subscriber) => {
      let waiting: T[] = [];
      // idle: nothing to do; scheduled: a step will start on the scheduler; stepping: a step is running.
      let phase: 'idle' | 'scheduled' | 'stepping' = 'idle';
      let sourceDone = false;
      let pendingStart: Subscription | undefined;
      /** The start scheduled waits for more inputs (`delayFor`). */
      let delayed = false;
      let current: Subscription | undefined;

      const finish = () => {
        if (waiting.length > 0) options.leftover?.(waiting);
        waiting = [];
        subscriber.complete();
      };

      const startStep = () => {
        phase = 'stepping';
        pendingStart = undefined;
        const batch = waiting;
        waiting = [];
        current = step(batch).subscribe({
          next: (value) => subscriber.next(value),
          error: (err: unknown) => subscriber.error(err),
          complete: () => {
            phase = 'idle';
            current = undefined;
            if (sourceDone) finish();
            else if (waiting.length > 0) schedule();
          },
        });
      };

      const schedule = () => {
        phase = 'scheduled';
        const delay = options.delayFor?.(waiting) ?? 0;
        delayed = delay > 0;
        pendingStart = scheduler.schedule(startStep, delay);
      };

      const inputs = source.subscribe({
        next: (value) => {
          waiting.push(value);
          if (phase === 'idle') schedule();
          else if (phase === 'scheduled' && delayed && !(options.delayFor!([value]) > 0)) {
            pendingStart!.unsubscribe();
            schedule();
          }
        },
        error: (err: unknown) => subscriber.error(err),
        complete: () => {
          sourceDone = true;
          if (phase === 'stepping') return;
          // A step asked for but not begun never starts: completion means "no new step".
          pendingStart?.unsubscribe();
          pendingStart = undefined;
          finish();
        },
      });

      return () => {
        inputs.unsubscribe();
        pendingStart?.unsubscribe();
        current?.unsubscribe();
      };
    });
}
