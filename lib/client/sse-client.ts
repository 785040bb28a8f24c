/**
 * Server-Sent Events over fetch, as an RxJS Observable: subscribing opens the request, every dispatched message
 * is emitted as `{event, id, data}`, the observable completes when the server ends the stream and errors when
 * the request or the connection fails. Unsubscribing aborts the request.
 *
 * There is no automatic reconnect: a caller that wants to resume passes the last id it saw as `lastEventId`
 * (sent as the `Last-Event-ID` header, which is how the server resumes a stream).
 */
import { Observable } from 'rxjs';

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
  fetch?: typeof fetch;
  /** Turns a non-2xx response into the error the observable fails with (default: `HTTP <status>`). */
  responseError?: (response: Response) => Promise<Error>;
  /** Turns a failed request (connection refused, reset...) into the error the observable fails with. */
  requestError?: (error: unknown) => Error;
}

/** Incremental parser of the `text/event-stream` format (WHATWG HTML, "Server-sent events"). */
export class SseParser {
  private buffer = '';
  private data: string[] = [];
  private hasData = false;
  private event = '';
  private lastId: string | undefined;
  private first = true;
  /** A chunk ended on '\r': a '\n' starting the next chunk belongs to the same line end. */
  private pendingCr = false;

  /** Feeds decoded text; returns the messages it completed. */
  push(text: string): SseMessage[] {
    if (this.first && text.length > 0) {
      this.first = false;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    if (this.pendingCr && text.startsWith('\n')) text = text.slice(1);
    this.pendingCr = false;
    this.buffer += text;
    const out: SseMessage[] = [];
    let start = 0;
    for (let i = 0; i < this.buffer.length; i++) {
      const c = this.buffer.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      const line = this.buffer.slice(start, i);
      if (c === 13) {
        if (i + 1 < this.buffer.length) {
          if (this.buffer.charCodeAt(i + 1) === 10) i++;
        } else {
          this.pendingCr = true;
        }
      }
      start = i + 1;
      const message = this.line(line);
      if (message) out.push(message);
    }
    this.buffer = this.buffer.slice(start);
    return out;
  }

  /** The last id the stream set, for resuming. */
  get lastEventId(): string | undefined {
    return this.lastId;
  }

  private line(line: string): SseMessage | undefined {
    if (line === '') return this.dispatch();
    if (line.startsWith(':')) return undefined;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'event':
        this.event = value;
        break;
      case 'data':
        this.data.push(value);
        this.hasData = true;
        break;
      case 'id':
        if (!value.includes('\u0000')) this.lastId = value === '' ? undefined : value;
        break;
      default:
        // `retry` and unknown fields: ignored (there is no automatic reconnect here).
        break;
    }
    return undefined;
  }

  private dispatch(): SseMessage | undefined {
    const message = this.hasData ? { event: this.event || 'message', id: this.lastId, data: this.data.join('\n') } : undefined;
    this.data = [];
    this.hasData = false;
    this.event = '';
    return message;
  }
}

export function sseStream(url: string, options: SseOptions = {}): Observable<SseMessage> {
  return new Observable<SseMessage>((subscriber) => {
    const controller = new AbortController();
    const doFetch = options.fetch ?? fetch;
    const headers: Record<string, string> = { Accept: 'text/event-stream', ...options.headers };
    if (options.lastEventId !== undefined && options.lastEventId !== '') headers['Last-Event-ID'] = String(options.lastEventId);
    (async () => {
      let response: Response;
      try {
        response = await doFetch(url, { headers, signal: controller.signal });
      } catch (err) {
        if (controller.signal.aborted) return;
        throw options.requestError ? options.requestError(err) : err;
      }
      if (!response.ok) {
        throw options.responseError ? await options.responseError(response) : new Error(`HTTP ${response.status} from ${url}`);
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
