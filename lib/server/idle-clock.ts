/**
 * The idle clock as an observable: every check interval it compares now with the last activity and emits
 * once, with the idle time, when the server has been idle past the timeout and no job run is going.
 */
import { type Observable, filter, interval, map, take } from 'rxjs';

export class IdleClock {
  private last: number;

  constructor(private readonly now: () => number = Date.now) {
    this.last = now();
  }

  touch(): void {
    this.last = this.now();
  }

  idleMs(): number {
    return this.now() - this.last;
  }
}

export function idle$(clock: IdleClock, timeoutMs: number, checkMs: number, busy: () => boolean): Observable<number> {
  return interval(checkMs).pipe(
    map(() => {
      // Work in progress counts as activity: a long build must not be cut off by its own quiet.
      if (busy()) clock.touch();
      return clock.idleMs();
    }),
    filter((idle) => idle > timeoutMs),
    take(1),
  );
}
