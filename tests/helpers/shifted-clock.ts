/**
 * A scheduler for the orchestrator (PlatformOptions.scheduler) whose clock reads a chosen time and goes on from
 * there at the real pace: a platform opened at 22:43:30, closed, and opened again at 22:45:30 was down across the
 * 22:44 and 22:45 ticks, without the test waiting two minutes. Timers run on asyncScheduler, as the loop's do.
 */
import { type SchedulerAction, type SchedulerLike, type Subscription, asyncScheduler } from 'rxjs';

export class ShiftedClock implements SchedulerLike {
  private readonly offset: number;

  /** The clock reads `at` (epoch ms) now. */
  constructor(at: number) {
    this.offset = at - Date.now();
  }

  now(): number {
    return Date.now() + this.offset;
  }

  schedule<T>(work: (this: SchedulerAction<T>, state?: T) => void, delay = 0, state?: T): Subscription {
    return asyncScheduler.schedule(work, delay, state);
  }
}
