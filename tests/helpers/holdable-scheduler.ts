/**
 * A scheduler for the orchestrator (PlatformOptions.scheduler) that tests can hold: while held, nothing scheduled
 * on it runs (no step starts, no retry or deadline fires); release runs what waited, in order, on asyncScheduler.
 */
import { type SchedulerAction, type SchedulerLike, Subscription, asyncScheduler } from 'rxjs';

export class HoldableScheduler implements SchedulerLike {
  private held: Array<() => void> | undefined;

  now(): number {
    return asyncScheduler.now();
  }

  schedule<T>(work: (this: SchedulerAction<T>, state?: T) => void, delay = 0, state?: T): Subscription {
    if (!this.held) return asyncScheduler.schedule(work, delay, state);
    const subscription = new Subscription();
    this.held.push(() => {
      if (!subscription.closed) subscription.add(asyncScheduler.schedule(work, delay, state));
    });
    return subscription;
  }

  /** Holds everything scheduled from now on until the returned function is called. */
  hold(): () => void {
    this.held ??= [];
    return () => {
      const waiting = this.held ?? [];
      this.held = undefined;
      for (const run of waiting) run();
    };
  }
}
