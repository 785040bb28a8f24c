/** Server-Sent Events fed straight from an observable; the stream ends when it completes or the server stops. */
import type { Request, Response } from 'express';
import { EMPTY, type Observable, Subject, defer, finalize, from, interval, merge, map, repeat, takeUntil, tap } from 'rxjs';
import { errorMessage } from '../errors.js';
import { errorBody } from './http-error.js';
import type { SseClients } from './sse-clients.js';

export interface SseMessage {
  event?: string;
  id?: number | string;
  data: string;
}

const HEARTBEAT_MS = 15_000;
/**
 * What a stream may have waiting in the socket for a client that does not read. Per client: at 8 MiB, 50 streams whose
 * clients had stopped reading held ~650 MB through one 40,000-partition backfill (QA, session 30). Past it, a stream
 * goes on from its last id once the client reads (`resume`: the event log's from the log, a log follow's from the
 * file), so a smaller cap loses nothing.
 */
export const MAX_UNREAD_BYTES = 1024 * 1024;

/**
 * `resume`, for a stream of numbered messages that can be read again from a point (the event log): a burst larger
 * than the socket may hold for the client (one step's events can be tens of MB, each run's config in it) does not end
 * the stream; it goes on after the last id written, read from the source at the client's pace once the socket
 * drained. Without it, a client that stopped reading gets its stream ended (it can resume with Last-Event-ID).
 */
export function sendSse(
  req: Request,
  res: Response,
  messages$: Observable<SseMessage>,
  stop$: Observable<unknown>,
  clients?: SseClients,
  resume?: (afterId: number) => Observable<SseMessage>,
): void {
  clients?.track(res);
  res.status(200);
  res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
  res.setHeader('Cache-Control', 'no-cache');
  res.setHeader('Connection', 'keep-alive');
  res.setHeader('X-Accel-Buffering', 'no');
  res.flushHeaders();
  // A comment line now and then keeps proxies and idle sockets from dropping a quiet stream.
  // The heartbeat stops with the messages, so a finished stream completes and the response ends.
  const ended$ = new Subject<void>();
  const heartbeat$ = interval(HEARTBEAT_MS).pipe(map(() => ': heartbeat\n\n'), takeUntil(ended$));
  const overflow$ = new Subject<void>();
  let lastId: number | undefined;
  // One pass over a source: its frames until it completes or the socket overflows. Cut with `resume`, the stream goes
  // on from the last id written once the client read what the socket holds: the server holds at most MAX_UNREAD_BYTES
  // and a page for a client, however far behind it is. The passes follow one another (repeat), never nest: a stream
  // cut a thousand times costs an event what it cost at the first.
  let cut = false;
  let first = true;
  const pass$ = defer(() => {
    cut = false;
    const m$ = first ? messages$ : resume!(lastId!);
    first = false;
    return m$.pipe(
      takeUntil(overflow$.pipe(tap(() => (cut = true)))),
      map((m) => {
        if (typeof m.id === 'number') lastId = m.id;
        return frame(m);
      }),
    );
  });
  const passes$ = pass$.pipe(repeat({ delay: () => (cut && resume && lastId !== undefined ? from(writable(res)()) : EMPTY) }));
  const frames$ = merge(passes$.pipe(finalize(() => ended$.next())), heartbeat$).pipe(takeUntil(stop$));
  const subscription = frames$.subscribe({
    next: (text) => {
      res.write(text);
      // A client that stopped reading must not make the server hold an ever-growing buffer.
      if (res.writableLength > MAX_UNREAD_BYTES) overflow$.next();
    },
    error: (err: unknown) => {
      res.write(frame({ event: 'error', data: JSON.stringify(errorBody(errorMessage(err))) }));
      res.end();
    },
    complete: () => res.end(),
  });
  req.on('close', () => subscription.unsubscribe());
}

/** Frames of messages sent to many streams (a live event's), made once. */
const frames = new WeakMap<SseMessage, string>();

function frame(m: SseMessage): string {
  const made = frames.get(m);
  if (made !== undefined) return made;
  const text = frameText(m);
  frames.set(m, text);
  return text;
}

function frameText(m: SseMessage): string {
  let out = '';
  if (m.event) out += `event: ${m.event}\n`;
  if (m.id !== undefined) out += `id: ${m.id}\n`;
  // Every line ending SSE knows ends a data line: a bare '\r' sent inside one (a progress bar's redraw in a log) ended
  // the line for every parser there, and what followed it was read as a field and dropped. Sent as data lines, a
  // reader gets it all, the '\r' as a line break.
  for (const line of m.data.split(/\r\n|\r|\n/)) out += `data: ${line}\n`;
  return `${out}\n`;
}

/** Resolves once the response can take more without buffering (or is gone): a pace for backlog readers. */
export function writable(res: Response): () => Promise<void> {
  return () =>
    !res.writableNeedDrain || res.destroyed
      ? Promise.resolve()
      : new Promise<void>((resolve) => {
          const done = () => {
            res.off('drain', done);
            res.off('close', done);
            resolve();
          };
          res.on('drain', done);
          res.on('close', done);
        });
}
