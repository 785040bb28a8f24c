/**
 * The daemon's idle timeout as an operator over whether it is busy: the server times out once it has been quiet
 * (not busy) for `timeoutMs` since its last busy spell ended; it then emits how long it was idle, once.
 *
 * One timer at a time, re-armed lazily: a busy spell only records when it ended, and the timer, when it fires, waits
 * again for what is left. A timer per quiet spell (switchMap to timer) cost ~4 KB of allocation a request, since
 * every request is a busy spell of its own on a daemon read one request at a time (docs/BENCHMARKS.md, session 9).
 */
import { Observable, type OperatorFunction, type SchedulerLike, type Subscription, asyncScheduler } from 'rxjs';
import { MAX_TIMER_MS } from '../system/timer-ceiling.js';

export function idleTimeout(timeoutMs: number, scheduler: SchedulerLike = asyncScheduler): OperatorFunction<boolean, number> {
  return (busy$) =>
    new Observable<number>((subscriber) => {
      let busy = true;
      let quietSince = 0;
      let timer: Subscription | undefined;
      // A timer longer than setTimeout's ceiling (~24.8 days) would fire at once: legs no longer than that.
      const arm = (): void => {
        const left = timeoutMs - (scheduler.now() - quietSince);
        timer = scheduler.schedule(fire, Math.min(MAX_TIMER_MS, Math.max(0, left)));
      };
      const fire = (): void => {
        timer = undefined;
        if (busy) return; // re-armed when the busy spell ends
        const idle = scheduler.now() - quietSince;
        if (idle < timeoutMs) return arm();
        subscriber.next(idle);
        subscriber.complete();
      };
      const source = busy$.subscribe({
        next: (now) => {
          if (now === busy) return;
          busy = now;
          if (busy) return;
          quietSince = scheduler.now();
          if (!timer) arm();
        },
        error: (err: unknown) => subscriber.error(err),
      });
      return () => {
        source.unsubscribe();
        timer?.unsubscribe();
      };
    });
}
