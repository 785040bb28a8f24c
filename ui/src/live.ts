/**
 * The page's one connection to the daemon's event stream. The browser's EventSource reconnects by itself and
 * sends Last-Event-ID, so a restarted daemon resumes where the page left off; the connection state feeds the
 * banner. Events are handed to listeners in batches, one per animation frame: a burst of a thousand events a second
 * is a handful of renders, not a thousand.
 */
import type { EventView } from '../../lib/api/views.js';
import { EVENT_TYPES } from '../../lib/events/build-event.js';

/** `refused`: the daemon answers, but not this page (401: it was started again with a new token). */
export type Connection = 'connecting' | 'live' | 'lost' | 'gone' | 'refused';

/**
 * Lost this long, the page says the daemon may be at another address: one started again by the CLI listens on a new
 * port, and this page would try the old one for ever while saying it reconnects.
 */
const GONE_AFTER_MS = 15_000;
let lostSince = 0;

/**
 * `resync`: the stream came back without resuming (the page had no event id to resume from, or the daemon's log is
 * not the one it followed): events may have been missed, so whatever a page shows is to be read again.
 */
type BatchListener = (events: readonly EventView[], resync: boolean) => void;
type ConnectionListener = (c: Connection) => void;

const batchListeners = new Set<BatchListener>();
const connectionListeners = new Set<ConnectionListener>();
let connection: Connection = 'connecting';
let buffer: EventView[] = [];
let scheduled = false;
let source: EventSource | undefined;

function setConnection(c: Connection): void {
  if (c === connection) return;
  connection = c;
  for (const l of connectionListeners) l(c);
}

function flush(): void {
  scheduled = false;
  const batch = buffer;
  buffer = [];
  if (batch.length === 0) return;
  for (const l of batchListeners) l(batch, false);
}

function resync(): void {
  for (const l of batchListeners) l([], true);
}

let lastId = '';

function receive(m: MessageEvent<string>): void {
  if (m.lastEventId) lastId = m.lastEventId;
  try {
    buffer.push(JSON.parse(m.data) as EventView);
  } catch {
    return;
  }
  if (!scheduled) {
    scheduled = true;
    requestAnimationFrame(flush);
  }
}

function open(): void {
  source = new EventSource(lastId ? `/api/events/stream?after=${lastId}` : '/api/events/stream');
  source.onopen = () => {
    // Back after a loss with no id to resume from: a new stream sends only what comes from now, and what the daemon
    // did between its start and this reconnect (a catch-up, the runs it found ended) was never sent to this page.
    if (lostSince && !lastId) resync();
    lostSince = 0;
    setConnection('live');
  };
  source.onerror = () => {
    lostSince ||= Date.now();
    setConnection(Date.now() - lostSince >= GONE_AFTER_MS ? 'gone' : 'lost');
    // An EventSource hears no status: a daemon that answers every request with 401 looked lost for ever (QA, session
    // 32). One read says which it is.
    fetch('/api/status')
      .then((r) => {
        if (r.status === 401 && lostSince) setConnection('refused');
      })
      .catch(() => undefined);
  };
  // Each event is sent under its type's name.
  for (const type of EVENT_TYPES) source.addEventListener(type, receive);
}

export function startLive(): void {
  if (source) return;
  open();
  // A stream the browser gave up on (it does after some errors) is opened again, resuming from the last id seen.
  setInterval(() => {
    if (lostSince && Date.now() - lostSince >= GONE_AFTER_MS && connection !== 'refused') setConnection('gone');
    if (source?.readyState !== EventSource.CLOSED) return;
    if (!lastId) return open();
    // Resuming from below a compaction (retention.events_keep) is refused with 410: go on from now instead of
    // asking again for events that are gone.
    fetch(`/api/events?offset=${lastId}&limit=1`)
      .then(async (r) => {
        if (r.status === 410) lastId = '';
        // A log that never reached that id (a daemon of another workspace on this port, or this one's log restored
        // from a backup) refuses to resume from it (400) for ever: go on from now, and read everything again (the
        // open after a loss with no id does). The page said 'gone' while the daemon answered it (QA, session 36).
        else if (r.ok && ((await r.json()) as { latest_id: number }).latest_id < Number(lastId)) lastId = '';
      })
      .catch(() => undefined)
      .finally(open);
  }, 3000);
}

export function onEvents(l: BatchListener): () => void {
  batchListeners.add(l);
  return () => batchListeners.delete(l);
}

export function onConnection(l: ConnectionListener): () => void {
  connectionListeners.add(l);
  l(connection);
  return () => connectionListeners.delete(l);
}
