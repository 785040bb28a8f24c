/** Server-Sent Events fed straight from an observable; the stream ends when it completes or the server stops. */
import type { Request, Response } from 'express';
import { type Observable, Subject, finalize, interval, merge, map, takeUntil } from 'rxjs';
import { errorMessage } from '../errors.js';
import { errorBody } from './http-error.js';
import type { SseClients } from './sse-clients.js';

export interface SseMessage {
  event?: string;
  id?: number | string;
  data: string;
}

const HEARTBEAT_MS = 15_000;
/** What a stream may have waiting in the socket for a client that does not read. */
export const MAX_UNREAD_BYTES = 8 * 1024 * 1024;

export function sendSse(
  req: Request,
  res: Response,
  messages$: Observable<SseMessage>,
  stop$: Observable<unknown>,
  clients?: SseClients,
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
  const frames$ = merge(messages$.pipe(map(frame), finalize(() => ended$.next())), heartbeat$).pipe(
    takeUntil(merge(stop$, overflow$)),
  );
  const subscription = frames$.subscribe({
    next: (text) => {
      res.write(text);
      // A client that stopped reading must not make the server hold an ever-growing buffer: its stream ends
      // (it can resume from the last id it saw with Last-Event-ID).
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

function frame(m: SseMessage): string {
  let out = '';
  if (m.event) out += `event: ${m.event}\n`;
  if (m.id !== undefined) out += `id: ${m.id}\n`;
  for (const line of m.data.split('\n')) out += `data: ${line}\n`;
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
