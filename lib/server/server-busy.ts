/**
 * Whether the daemon is busy, as a stream: a request is in flight (an open SSE stream is one until it ends) or
 * a job run is running. What the idle timeout waits on.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { type Observable, combineLatest, concat, distinctUntilChanged, fromEvent, map, mergeMap, of, scan, startWith, take } from 'rxjs';
import type { BuildState } from '../state/build-state.js';

/** How many requests are in flight: one more at each request, one less when its response closes (sent or aborted). */
function requestsInFlight$(server: Server): Observable<number> {
  return fromEvent(server, 'request', (_req: IncomingMessage, res: ServerResponse) => res).pipe(
    mergeMap((res) => concat(of(1), fromEvent(res, 'close').pipe(take(1), map(() => -1)))),
    scan((count, step) => count + step, 0),
    startWith(0),
  );
}

export function serverBusy$(server: Server, state$: Observable<BuildState>): Observable<boolean> {
  const requests$ = requestsInFlight$(server).pipe(map((n) => n > 0));
  const running$ = state$.pipe(map((s) => s.job_runs_by_status.running.size > 0));
  return combineLatest([requests$, running$]).pipe(
    map(([requesting, running]) => requesting || running),
    distinctUntilChanged(),
  );
}
