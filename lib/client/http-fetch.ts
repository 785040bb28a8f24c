/**
 * The client's transport: the part of `fetch` it uses, over node's own `http` module. Node's global fetch (undici)
 * costs a command line ~20 ms to load and, once it connected, a 40-80 ms wait at exit while V8 finishes compiling
 * its WebAssembly HTTP parser in the background (docs/decisions.md, "Speed, session 19"); a `platform` command makes
 * one or two requests to a daemon on loopback and pays both every time. The global fetch satisfies `HttpFetch`, so
 * an embedder may pass it (or any other) instead.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { Readable } from 'node:stream';

export interface HttpRequestInit {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  signal?: AbortSignal;
}

/** What the client reads of an answer: a `Response` has all of it. */
export interface HttpResponse {
  readonly status: number;
  readonly statusText: string;
  readonly ok: boolean;
  readonly headers: { get(name: string): string | null };
  /** The body as a web stream (the SSE client reads it so); null when it has none. */
  readonly body: ReadableStream<Uint8Array> | null;
  text(): Promise<string>;
  json(): Promise<unknown>;
}

export type HttpFetch = (url: string, init?: HttpRequestInit) => Promise<HttpResponse>;

/** `fetch`'s contract for what the client sends (a string body, plain headers, an abort signal), over node:http(s). */
export const nodeHttpFetch: HttpFetch = (url, init = {}) =>
  new Promise<HttpResponse>((resolve, reject) => {
    const { signal } = init;
    if (signal?.aborted) return reject(signal.reason);
    const target = new URL(url);
    if (target.protocol !== 'http:' && target.protocol !== 'https:') {
      return reject(new TypeError(`Cannot fetch ${url}: only http: and https: URLs are supported`));
    }
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    const headers: Record<string, string | number> = { ...init.headers };
    if (init.body !== undefined) headers['Content-Length'] = Buffer.byteLength(init.body);
    const req = send(target, { method: init.method ?? 'GET', headers });
    let answered: IncomingMessage | undefined;
    const abort = (): void => {
      // As fetch: the request rejects with the signal's reason, a body being read errors with it.
      if (answered) answered.destroy(signal!.reason as Error);
      else {
        req.destroy();
        reject(signal!.reason);
      }
    };
    signal?.addEventListener('abort', abort, { once: true });
    req.once('error', (err) => {
      signal?.removeEventListener('abort', abort);
      reject(err);
    });
    req.once('response', (res) => {
      answered = res;
      res.once('close', () => signal?.removeEventListener('abort', abort));
      resolve(new NodeResponse(res));
    });
    req.end(init.body);
  });

class NodeResponse implements HttpResponse {
  readonly status: number;
  readonly statusText: string;
  readonly ok: boolean;
  private stream: ReadableStream<Uint8Array> | undefined;

  constructor(private readonly res: IncomingMessage) {
    this.status = res.statusCode ?? 0;
    this.statusText = res.statusMessage ?? '';
    this.ok = this.status >= 200 && this.status < 300;
  }

  readonly headers = {
    get: (name: string): string | null => {
      const value = this.res.headers[name.toLowerCase()];
      return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
    },
  };

  get body(): ReadableStream<Uint8Array> | null {
    this.stream ??= Readable.toWeb(this.res) as ReadableStream<Uint8Array>;
    return this.stream;
  }

  async text(): Promise<string> {
    const chunks: Buffer[] = [];
    for await (const chunk of this.res) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  }

  async json(): Promise<unknown> {
    return JSON.parse(await this.text()) as unknown;
  }
}
