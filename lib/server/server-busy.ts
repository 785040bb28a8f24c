/**
 * Whether the daemon is busy, as a stream: a request is in flight, a job run is running, or it keeps schedules. What the idle timeout
 * waits on. An SSE stream (events, a followed log) counts as activity when it opens, not for as long as it stays
 * open: a forgotten dashboard tab or `events --follow` must not keep a daemon alive for ever (as before).
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { Observable, combineLatest, distinctUntilChanged, map, of } from 'rxjs';
import type { BuildState } from '../state/build-state.js';

/** The API's streams: `/api/events/stream` and a log with `follow=true`. */
function isStream(req: IncomingMessage): boolean {
  const url = req.url ?? '';
  return url.startsWith('/api/events/stream') || /[?&]follow=true(&|$)/.test(url);
}

/**
 * Whether a request is in flight: true at a request when none was, false when the last one's response closes (sent
 * or aborted). A plain counter, told only at its changes: it runs on every request, thousands a second under load.
 */
function requesting$(server: Server): Observable<boolean> {
  return new Observable<boolean>((subscriber) => {
    let inFlight = 0;
    const done = () => {
      if (--inFlight === 0) subscriber.next(false);
    };
    const onRequest = (req: IncomingMessage, res: ServerResponse) => {
      if (isStream(req)) {
        // Counted when it opens, not while it stays open.
        if (inFlight === 0) {
          subscriber.next(true);
          subscriber.next(false);
        }
        return;
      }
      if (inFlight++ === 0) subscriber.next(true);
      res.once('close', done);
    };
    subscriber.next(false);
    server.on('request', onRequest);
    return () => server.off('request', onRequest);
  });
}

/**
 * `scheduled$`: whether the graph has schedules; a daemon with schedules is always busy, since only it makes their
 * wants (it would otherwise stop after the idle timeout and miss the ticks).
 */
export function serverBusy$(server: Server, state$: Observable<BuildState>, scheduled$: Observable<boolean> = of(false)): Observable<boolean> {
  const requests$ = requesting$(server);
  const running$ = state$.pipe(map((s) => s.job_runs_by_status.running.size > 0));
  return combineLatest([requests$, running$, scheduled$]).pipe(
    map(([requesting, running, scheduled]) => requesting || running || scheduled),
    distinctUntilChanged(),
  );
}
