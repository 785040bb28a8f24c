/**
 * Server-Sent Events over HTTP, as an RxJS Observable: subscribing opens the request, every dispatched message
 * is emitted as `{event, id, data}`, the observable completes when the server ends the stream and errors when
 * the request or the connection fails. Unsubscribing aborts the request.
 *
 * There is no automatic reconnect: a caller that wants to resume passes the last id it saw as `lastEventId`
 * (sent as the `Last-Event-ID` header, which is how the server resumes a stream).
 */
import { createParser, type EventSourceParser } from 'eventsource-parser';
import { Observable } from 'rxjs';
import { nodeHttpFetch, type HttpFetch, type HttpResponse } from './http-fetch.js';

export interface SseMessage {
  /** The `event:` field; `message` when the server sent none. */
  event: string;
  /** The last `id:` seen on the stream so far (as EventSource's `lastEventId`); undefined before any. */
  id: string | undefined;
  data: string;
}

export interface SseOptions {
  /** Sent as `Last-Event-ID`: the server resumes after this id. */
  lastEventId?: string | number;
  headers?: Record<string, string>;
  /** The transport (default: node's http). */
  fetch?: HttpFetch;
  /** Turns a non-2xx response into the error the observable fails with (default: `HTTP <status>`). */
  responseError?: (response: HttpResponse) => Promise<Error>;
  /** Turns a failed request (connection refused, reset...) into the error the observable fails with. */
  requestError?: (error: unknown) => Error;
}

/**
 * Incremental parser of the `text/event-stream` format, over eventsource-parser. It adds what that parser leaves
 * to its caller: the id that persists from one message to the next (EventSource's `lastEventId`), `message` as
 * the default event name, and a leading BOM in already decoded text. One difference from the standard: an `id:`
 * in a block without data is dropped with it (our server never sends one).
 */
export class SseParser {
  private lastId: string | undefined;
  private first = true;
  private readonly completed: SseMessage[] = [];
  private readonly parser: EventSourceParser = createParser({
    onEvent: (m) => {
      if (m.id !== undefined) this.lastId = m.id === '' ? undefined : m.id;
      this.completed.push({ event: m.event ?? 'message', id: this.lastId, data: m.data });
    },
  });

  /** Feeds decoded text; returns the messages it completed. */
  push(text: string): SseMessage[] {
    if (this.first && text.length > 0) {
      this.first = false;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    this.parser.feed(text);
    return this.completed.splice(0);
  }

  /** The last id the stream set, for resuming. */
  get lastEventId(): string | undefined {
    return this.lastId;
  }
}

export function sseStream(url: string, options: SseOptions = {}): Observable<SseMessage> {
  return new Observable<SseMessage>((subscriber) => {
    const controller = new AbortController();
    const doFetch = options.fetch ?? nodeHttpFetch;
    const headers: Record<string, string> = { Accept: 'text/event-stream', ...options.headers };
    if (options.lastEventId !== undefined && options.lastEventId !== '') headers['Last-Event-ID'] = String(options.lastEventId);
    (async () => {
      let response: HttpResponse;
      try {
        response = await doFetch(url, { headers, signal: controller.signal });
      } catch (err) {
        if (controller.signal.aborted) return;
        throw options.requestError ? options.requestError(err) : err;
      }
      if (!response.ok) {
        if (options.responseError) throw await options.responseError(response);
        // Read, so that the connection is let go of (an unread answer holds its socket, and a command's process).
        await response.text().catch(() => '');
        throw new Error(`HTTP ${response.status} from ${url}`);
      }
      if (!response.body) {
        subscriber.complete();
        return;
      }
      const parser = new SseParser();
      const decoder = new TextDecoder();
      const reader = response.body.getReader();
      try {
        for (;;) {
          let chunk: Awaited<ReturnType<typeof reader.read>>;
          try {
            chunk = await reader.read();
          } catch (err) {
            if (controller.signal.aborted) return;
            throw options.requestError ? options.requestError(err) : err;
          }
          if (chunk.done) break;
          for (const message of parser.push(decoder.decode(chunk.value, { stream: true }))) {
            if (subscriber.closed) return;
            subscriber.next(message);
          }
        }
        for (const message of parser.push(decoder.decode())) subscriber.next(message);
      } finally {
        reader.releaseLock();
      }
      subscriber.complete();
    })().catch((err: unknown) => {
      if (!controller.signal.aborted) subscriber.error(err);
    });
    return () => controller.abort();
  });
}
