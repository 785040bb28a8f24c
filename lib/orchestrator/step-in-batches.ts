/**
 * `concatMap` over batches: inputs that arrive while a step is scheduled or running wait, and the next step takes
 * all of them at the moment it starts. So a burst of a thousand inputs costs one or two steps, not a thousand.
 *
 * With `overlap: n`, a step may `release` the loop before it ends (the orchestrator's does once its events are
 * planned and handed to the log): the next step may then start while it waits, up to n steps beyond the oldest
 * one still running. Steps start in order and each waits for its predecessors' release, so no two plan at once.
 * A step that releases with `release(false)` gives its slot back at once (it wrote nothing and only waits to act).
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
  /** How many steps may start after the oldest running one (each once the one before it released). Default 0. */
  overlap?: number;
}

export function stepInBatches<T, R>(
  step: (batch: T[], release: (holdsSlot?: boolean) => void) => Observable<R>,
  scheduler: SchedulerLike,
  options: StepInBatchesOptions<T> = {},
): OperatorFunction<T, R> {
  const overlap = options.overlap ?? 0;
  return (source) =>
    new Observable<R>((subscriber) => {
      let waiting: T[] = [];
      let sourceDone = false;
      let pendingStart: Subscription | undefined;
      /** Steps started and not ended, and those of them that hold a slot of the overlap. */
      let alive = 0;
      let running = 0;
      /** Their subscriptions, for teardown, once subscribe returned. */
      const subscriptions = new Set<Subscription>();
      /** The newest step has not released the loop yet. */
      let holding = false;

      const finish = () => {
        if (waiting.length > 0) options.leftover?.(waiting);
        waiting = [];
        subscriber.complete();
      };

      let scheduled = false;
      const mayStart = () => !scheduled && !holding && running <= overlap && waiting.length > 0 && !sourceDone;

      const startStep = () => {
        scheduled = false;
        pendingStart = undefined;
        holding = true;
        const batch = waiting;
        waiting = [];
        let ended = false;
        let released = false;
        let counted = true;
        alive++;
        running++;
        const release = (holdsSlot = true) => {
          if (released || ended) return;
          released = true;
          holding = false;
          if (!holdsSlot) {
            counted = false;
            running--;
          }
          if (mayStart()) schedule();
        };
        let sub: Subscription | undefined;
        sub = step(batch, release).subscribe({
          next: (value) => subscriber.next(value),
          error: (err: unknown) => subscriber.error(err),
          complete: () => {
            ended = true;
            alive--;
            if (counted) running--;
            if (sub) subscriptions.delete(sub);
            if (!released) holding = false;
            if (sourceDone) {
              if (alive === 0) finish();
            } else if (mayStart()) schedule();
          },
        });
        // A step that ended synchronously has already left (its subscription is closed).
        if (!ended) subscriptions.add(sub);
      };

      const schedule = () => {
        scheduled = true;
        const start = scheduler.schedule(startStep);
        // A scheduler may run the step before `schedule` returns.
        if (scheduled) pendingStart = start;
      };

      const inputs = source.subscribe({
        next: (value) => {
          waiting.push(value);
          if (mayStart()) schedule();
        },
        error: (err: unknown) => subscriber.error(err),
        complete: () => {
          sourceDone = true;
          // A step asked for but not begun never starts: completion means "no new step".
          pendingStart?.unsubscribe();
          pendingStart = undefined;
          scheduled = false;
          if (alive === 0) finish();
        },
      });

      return () => {
        inputs.unsubscribe();
        pendingStart?.unsubscribe();
        for (const sub of subscriptions) sub.unsubscribe();
      };
    });
}
