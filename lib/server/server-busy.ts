/**
 * Whether the daemon is busy, as a stream: a request is in flight, a job run is running, or it keeps schedules. What the idle timeout
 * waits on. An SSE stream (events, a followed log) counts as activity when it opens, not for as long as it stays
 * open: a forgotten dashboard tab or `events --follow` must not keep a daemon alive for ever (as before).
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { type Observable, combineLatest, concat, distinctUntilChanged, fromEvent, map, mergeMap, of, scan, startWith, take } from 'rxjs';
import type { BuildState } from '../state/build-state.js';

/** The API's streams: `/api/events/stream` and a log with `follow=true`. */
function isStream(req: IncomingMessage): boolean {
  const url = req.url ?? '';
  return url.startsWith('/api/events/stream') || /[?&]follow=true(&|$)/.test(url);
}

/** How many requests are in flight: one more at each request, one less when its response closes (sent or aborted). */
function requestsInFlight$(server: Server): Observable<number> {
  return fromEvent(server, 'request', (req: IncomingMessage, res: ServerResponse) => ({ req, res })).pipe(
    mergeMap(({ req, res }) => concat(of(1), isStream(req) ? of(-1) : fromEvent(res, 'close').pipe(take(1), map(() => -1)))),
    scan((count, step) => count + step, 0),
    startWith(0),
  );
}

/**
 * `scheduled$`: whether the graph has schedules; a daemon with schedules is always busy, since only it makes their
 * wants (it would otherwise stop after the idle timeout and miss the ticks).
 */
export function serverBusy$(server: Server, state$: Observable<BuildState>, scheduled$: Observable<boolean> = of(false)): Observable<boolean> {
  const requests$ = requestsInFlight$(server).pipe(map((n) => n > 0));
  const running$ = state$.pipe(map((s) => s.job_runs_by_status.running.size > 0));
  return combineLatest([requests$, running$, scheduled$]).pipe(
    map(([requesting, running, scheduled]) => requesting || running || scheduled),
    distinctUntilChanged(),
  );
}
