/**
 * A scheduler whose work runs on the event loop's next turn (Node's `setImmediate`), after the I/O that is ready.
 * RxJS's `asapScheduler` runs its work as a microtask: a chain of steps that write nothing (a sweep's slices over
 * waiting wants) then ran back to back without ever letting a request in, and a restart with 100,000 waiting wants
 * answered `/health` only after the whole start-up pass, ~6 s later (docs/BENCHMARKS.md, session 9). Work with a
 * delay goes to `asyncScheduler`. Only for work that does not reschedule itself through its action (a step's start).
 */
import { Subscription, asyncScheduler, type SchedulerAction, type SchedulerLike } from 'rxjs';

export const nextTurnScheduler: SchedulerLike = {
  now: () => Date.now(),
  schedule<T>(work: (this: SchedulerAction<T>, state?: T) => void, delay = 0, state?: T): Subscription {
    if (delay > 0) return asyncScheduler.schedule(work, delay, state);
    const handle = setImmediate(() => work.call(undefined as unknown as SchedulerAction<T>, state));
    return new Subscription(() => clearImmediate(handle));
  },
};
