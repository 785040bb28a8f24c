/**
 * Every event after `afterId`, then every new one as it is appended: the backlog is read page by page from the
 * log while live events are buffered, so nothing falls in the gap between the two and nothing comes twice.
 */
import { Observable } from 'rxjs';
import type { BuildEvent } from './build-event.js';
import type { EventLog } from './event-log.js';

const PAGE = 1000;
/** Live events held while the backlog is read. */
const MAX_BUFFERED = 100_000;

/**
 * `ready` is awaited before each backlog page: a consumer that writes to a slow socket holds the reading back
 * there, so a client replaying a long history from 0 costs a page of memory, not the history.
 */
export function tailEvents(log: EventLog, afterId: number, ready: () => Promise<void> = async () => {}): Observable<BuildEvent> {
  return new Observable<BuildEvent>((subscriber) => {
    let last = afterId;
    let caughtUp = false;
    const buffered: BuildEvent[] = [];
    const forward = (e: BuildEvent) => {
      if (e.event_id <= last) return;
      last = e.event_id;
      subscriber.next(e);
    };
    const live = log.appended$.subscribe({
      next: (e) => {
        if (caughtUp) return forward(e);
        buffered.push(e);
        // A consumer so slow that the live events outgrow this while it reads the backlog is told to come back.
        if (buffered.length > MAX_BUFFERED) {
          subscriber.error(new Error(`fell more than ${MAX_BUFFERED} events behind; resume after event ${last}`));
        }
      },
      complete: () => subscriber.complete(),
    });
    (async () => {
      for (;;) {
        await ready();
        if (subscriber.closed) return;
        const page = await log.list(last, PAGE);
        if (subscriber.closed) return;
        page.forEach(forward);
        if (page.length < PAGE) break;
      }
      caughtUp = true;
      buffered.splice(0).forEach(forward);
    })().catch((err: unknown) => subscriber.error(err));
    return () => live.unsubscribe();
  });
}
