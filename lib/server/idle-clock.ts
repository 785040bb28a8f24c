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

/** `90` (seconds), `90s`, `5m`, `3h`, `250ms` -> milliseconds. */
export function parseDuration(text: string, option: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text.trim());
  if (!m) throw new Error(`${option} must be a duration like 90, 90s, 5m or 3h; got '${text}'.`);
  const n = Number(m[1]);
  const unit = m[2] ?? 's';
  const factor = unit === 'ms' ? 1 : unit === 's' ? 1000 : unit === 'm' ? 60_000 : 3_600_000;
  const ms = Math.round(n * factor);
  if (ms <= 0) throw new Error(`${option} must be more than zero; got '${text}'.`);
  return ms;
}
