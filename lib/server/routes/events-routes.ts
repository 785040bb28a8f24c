import { Router } from 'express';
import { map } from 'rxjs';
import type { EventPage } from '../../api/page.js';
import type { EventView } from '../../api/views.js';
import { eventView } from '../views.js';
import { HttpError } from '../http-error.js';
import { EventsCompactedError } from '../../events/events-compacted-error.js';
import { EVENT_PAGE_BYTES, EventIdSchema, EventListQuerySchema, EventStreamQuerySchema, LastEventIdSchema, MAX_EVENTS_PER_READ } from '../../api/schemas/events.js';
import { validateQuery, validateValue } from '../validate.js';
import type { ServerContext } from '../server-context.js';
import { sendSse, writable, type SseMessage } from '../sse.js';
import type { BuildEvent } from '../../events/build-event.js';


/** Events decoded a slice at a time for a page, so the byte budget stops the reading too. */
const EVENT_READ_SLICE = 256;

/**
 * An event's message, made once for every stream it goes to: a live event is the same object for each of them, and
 * fifty clients made fifty views and JSON texts of every event of a step (a backfill took twice as long).
 */
const messages = new WeakMap<BuildEvent, SseMessage>();
function sseOfEvent(e: BuildEvent): SseMessage {
  let m = messages.get(e);
  if (!m) {
    m = { event: e.type, id: e.event_id, data: JSON.stringify(eventView(e)) };
    messages.set(e, m);
  }
  return m;
}

export function eventsRoutes({ platform, shutdown$, sse }: ServerContext): Router {
  const router = Router();

  router.get('/api/events', async (req, res) => {
    // Without an offset, from the first event still in the log (1 unless a compaction removed older ones).
    // Other lists take an order; this one is a cursor over ids, and a script asking for newest first must not get oldest.
    if (req.query.order !== undefined) {
      throw new HttpError(400, `/api/events does not take 'order': it reads events by id after 'offset', oldest first. For the newest N, read from offset=latest_id-N (latest_id is in every page).`);
    }
    const { offset = platform.log.firstId() - 1, limit = MAX_EVENTS_PER_READ } = validateQuery(EventListQuerySchema, req.query);
    // A page ends early once it holds EVENT_PAGE_BYTES (with one event at least): an event carries a run's whole
    // config, and ten thousand of a large fan-in made a page of hundreds of MB. The next page is read from the last
    // id. Read a slice at a time, so what the budget leaves out is not decoded either.
    const parts: string[] = [];
    let bytes = 0;
    let cursor = offset;
    let full = false;
    while (!full && parts.length < limit) {
      const events = await platform.log.list(cursor, Math.min(EVENT_READ_SLICE, limit - parts.length));
      if (events.length === 0) break;
      for (const e of events) {
        const json = JSON.stringify(eventView(e));
        const size = Buffer.byteLength(json);
        if (parts.length > 0 && bytes + size > EVENT_PAGE_BYTES) {
          full = true;
          break;
        }
        parts.push(json);
        bytes += size;
        cursor = e.event_id;
      }
    }
    const rest: Omit<EventPage, 'data'> = { latest_id: platform.log.latestId(), first_id: platform.log.firstId(), offset, limit };
    res.type('application/json').send(`{"data":[${parts.join(',')}],${JSON.stringify(rest).slice(1)}`);
  });

  // Resumes after `Last-Event-ID` (what EventSource sends on reconnect) or `?after=`; a new stream starts now.
  router.get('/api/events/stream', (req, res) => {
    const header = req.get('Last-Event-ID');
    let after: number;
    if (header !== undefined) {
      after = Number(validateValue(LastEventIdSchema, header, 'Last-Event-ID'));
      if (!Number.isSafeInteger(after)) throw new HttpError(400, `Last-Event-ID must be an event id up to ${Number.MAX_SAFE_INTEGER}, got ${header}.`);
    } else {
      after = validateQuery(EventStreamQuerySchema, req.query).after ?? platform.log.latestId();
    }
    // A resume from below a compaction would skip events silently: the client is told, with where to go on from.
    if (after + 1 < platform.log.firstId() && after < platform.log.latestId()) throw new EventsCompactedError(after + 1, platform.log.firstId());
    // An id this log never gave (kept from a log since restored from a backup, or from another workspace): resumed
    // after it, the stream would say nothing, then skip every event up to it.
    const latest = platform.log.latestId();
    if (after > latest) {
      const given = header !== undefined ? `Last-Event-ID ${header}` : `after=${after}`;
      throw new HttpError(400, `${given} is past the latest event of this log (${latest}): it is no id this server sent. Resume with an id of at most ${latest}, or with none for new events only.`);
    }
    const since = (id: number) => platform.eventsSince(id, writable(res)).pipe(map(sseOfEvent));
    sendSse(req, res, since(after), shutdown$, sse, since);
  });

  router.get('/api/events/:id', async (req, res) => {
    const raw = req.params.id;
    // Digits past the largest safe integer turn into another number as they are read (9007199254740993 became
    // ...992 in the message): say the id as sent, and the largest.
    if (/^\d+$/.test(raw) && !Number.isSafeInteger(Number(raw))) {
      throw new HttpError(400, `An event id is at most ${Number.MAX_SAFE_INTEGER}, got ${raw.length > 40 ? `${raw.slice(0, 37)}... (${raw.length} digits)` : raw}.`);
    }
    const id = validateValue(EventIdSchema, /^\d+$/.test(raw) ? Number(raw) : raw, 'An event id');
    const event = await platform.log.get(id);
    if (!event) throw new HttpError(404, `No event with id ${req.params.id}; the latest is ${platform.log.latestId()}.`);
    res.json(eventView(event) satisfies EventView);
  });

  return router;
}
