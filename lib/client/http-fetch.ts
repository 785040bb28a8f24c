/**
 * The client's transport: the part of `fetch` it uses, over node's own `http` module. Node's global fetch (undici)
 * costs a command line ~20 ms to load and, once it connected, a 40-80 ms wait at exit while V8 finishes compiling
 * its WebAssembly HTTP parser in the background (docs/decisions.md, "Speed, session 19"); a `platform` command makes
 * one or two requests to a daemon on loopback and pays both every time. The global fetch satisfies `HttpFetch`, so
 * an embedder may pass it (or any other) instead.
 */
import { Agent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { parseDuration } from '../duration.js';

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
  /** The body as a web stream (the SSE client reads it so); null for an answer that has none (HEAD, 204, 304). */
  readonly body: ReadableStream<Uint8Array> | null;
  text(): Promise<string>;
  /** The body's bytes as sent (a job's log is not always UTF-8), as fetch's. */
  arrayBuffer(): Promise<ArrayBuffer>;
  json(): Promise<unknown>;
}

export type HttpFetch = (url: string, init?: HttpRequestInit) => Promise<HttpResponse>;

/**
 * Connections kept to one daemon for requests: a caller that reads thousands of runs at once (`build --json`'s
 * details) queues them here rather than opening thousands of sockets (a process has 1,024 on many machines). An
 * event stream holds its connection for as long as it is followed, so it gets one of its own, outside the pool.
 */
const MAX_SOCKETS = 16;
const agents: { http?: Agent; https?: Agent } = {};

/**
 * Closes the pooled connections no request uses: a client about to stop the server closes its own first, so the
 * server does not keep them open for the request they might still carry (stopping-connections.ts).
 */
export function closeIdleConnections(): void {
  agents.http?.destroy();
  agents.https?.destroy();
  delete agents.http;
  delete agents.https;
}

/** How many redirects a request follows, as fetch does (a proxy in front of `--server-url` may redirect). */
const MAX_REDIRECTS = 5;

/**
 * How long a request waits while the server sends nothing, neither its answer's headers nor the next piece of its
 * body, before it fails: undici's wait for headers, which the client had with node's fetch. A daemon answers on
 * loopback in milliseconds, but a `gc` of a long history may take minutes. PLATFORM_REQUEST_TIMEOUT sets it; an
 * event stream, quiet between events, waits as long as it is followed.
 */
export const DEFAULT_QUIET_LIMIT_MS = 300_000;

export interface HttpFetchOptions {
  /** Default: PLATFORM_REQUEST_TIMEOUT (a duration: 90s, 5m), else DEFAULT_QUIET_LIMIT_MS. */
  quietLimitMs?: number;
}

/** `fetch`'s contract for what the client sends (a string body, plain headers, an abort signal), over node:http(s). */
export function createHttpFetch(options: HttpFetchOptions = {}): HttpFetch {
  return async (url, init = {}) => {
    const quietLimitMs = options.quietLimitMs ?? quietLimitFromEnv();
    return fetchFollowing(new URL(url), init, MAX_REDIRECTS, quietLimitMs);
  };
}

/** PLATFORM_REQUEST_TIMEOUT as milliseconds; throws a message naming it when it is no duration. */
export function quietLimitFromEnv(): number {
  const text = process.env.PLATFORM_REQUEST_TIMEOUT;
  return text ? parseDuration(text, 'PLATFORM_REQUEST_TIMEOUT') : DEFAULT_QUIET_LIMIT_MS;
}

export const nodeHttpFetch: HttpFetch = createHttpFetch();

/** A request that got nothing from the server for the quiet limit: the server is stuck, or far slower than it should be. */
export class ServerSilentError extends Error {
  constructor(method: string, target: URL, quietLimitMs: number) {
    super(
      `The server at ${target.origin} sent nothing for ${formatSeconds(quietLimitMs)} in answer to ${method} ${target.pathname} ` +
        `(PLATFORM_REQUEST_TIMEOUT=${formatSeconds(2 * quietLimitMs).replace(' ', '')} waits longer).`,
    );
    this.name = 'ServerSilentError';
  }
}

const formatSeconds = (ms: number): string => (ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`);

async function fetchFollowing(target: URL, init: HttpRequestInit, redirects: number, quietLimitMs: number): Promise<HttpResponse> {
  // https (TLS) only where a --server-url asks for it: loading it costs every command ~4 ms.
  const https = target.protocol === 'https:' ? await import('node:https') : undefined;
  const send = https ? https.request : httpRequest;
  const streaming = Object.entries(init.headers ?? {}).some(([name, value]) => name.toLowerCase() === 'accept' && value.includes('text/event-stream'));
  const agent = streaming
    ? false
    : https
      ? (agents.https ??= new https.Agent({ keepAlive: true, maxSockets: MAX_SOCKETS }))
      : (agents.http ??= new Agent({ keepAlive: true, maxSockets: MAX_SOCKETS }));
  let res: NodeResponse;
  let reset: ReusedSocketClosed | undefined;
  for (let tries = 0; ; tries++) {
    try {
      res = await requestOnce(send, agent, target, init, streaming ? undefined : quietLimitMs);
      break;
    } catch (err) {
      // A kept-alive connection the server closed as the request went out on it (its keep-alive timeout, or a stop):
      // the request was not read, so it goes again on a new connection, as node's docs advise (request.reusedSocket).
      // A platform server never closes a connection under a request it read (stopping-connections.ts), but a server
      // that died (kill -9) did not say so: when the next try finds nothing listening, the reset is what is told, not
      // the refusal, which would read as "never sent" and have the request sent to the next server (platform-client).
      if (err instanceof ReusedSocketClosed && tries < MAX_SOCKETS) {
        reset = err;
        continue;
      }
      throw reset ? reset.cause : err instanceof ReusedSocketClosed ? err.cause : err;
    }
  }
  const location = res.redirect;
  if (location === undefined || redirects === 0) return res;
  await res.discard();
  const to = new URL(location, target);
  // As fetch does: 307 and 308 repeat the request as it was, 301-303 turn a POST into a GET without its body, and
  // the daemon's token is not sent on to another origin.
  const method = init.method ?? 'GET';
  const keep = res.status === 307 || res.status === 308 || method === 'GET' || method === 'HEAD';
  const headers = to.origin === target.origin ? init.headers : withoutAuthorization(init.headers);
  return fetchFollowing(to, keep ? { ...init, headers } : { ...init, headers, method: 'GET', body: undefined }, redirects - 1, quietLimitMs);
}

function withoutAuthorization(headers: Record<string, string> | undefined): Record<string, string> | undefined {
  return headers && Object.fromEntries(Object.entries(headers).filter(([name]) => name.toLowerCase() !== 'authorization'));
}

function requestOnce(send: typeof httpRequest, agent: Agent | false, target: URL, init: HttpRequestInit, quietLimitMs: number | undefined): Promise<NodeResponse> {
  return new Promise<NodeResponse>((resolve, reject) => {
    const { signal } = init;
    if (signal?.aborted) return reject(signal.reason);
    if (target.protocol !== 'http:' && target.protocol !== 'https:') {
      return reject(new TypeError(`Cannot fetch ${target.href}: only http: and https: URLs are supported`));
    }
    const headers: Record<string, string | number> = { ...init.headers };
    if (init.body !== undefined) headers['Content-Length'] = Buffer.byteLength(init.body);
    const method = init.method ?? 'GET';
    const req = send(target, { method, headers, agent });
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
    if (quietLimitMs !== undefined) {
      // The socket's idle timer: it runs while the answer's headers are awaited and again between pieces of its body.
      req.setTimeout(quietLimitMs, () => {
        const err = new ServerSilentError(method, target, quietLimitMs);
        if (answered) answered.destroy(err);
        else req.destroy(err);
      });
    }
    req.once('error', (err: NodeJS.ErrnoException) => {
      signal?.removeEventListener('abort', abort);
      const closed = err.code === 'ECONNRESET' || err.code === 'EPIPE';
      reject(req.reusedSocket && !answered && closed && !signal?.aborted ? new ReusedSocketClosed(err) : err);
    });
    req.once('response', (res) => {
      answered = res;
      res.once('close', () => signal?.removeEventListener('abort', abort));
      resolve(new NodeResponse(res, method));
    });
    req.end(init.body);
  });
}

/** A request whose kept-alive connection was closed before any answer came: `cause` is the socket's error. */
class ReusedSocketClosed extends Error {
  constructor(override readonly cause: Error) {
    super(cause.message);
  }
}

class NodeResponse implements HttpResponse {
  readonly status: number;
  readonly statusText: string;
  readonly ok: boolean;
  private used = false;
  private stream: ReadableStream<Uint8Array> | undefined;

  constructor(
    private readonly res: IncomingMessage,
    private readonly method: string,
  ) {
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

  /** Where a redirect points, for a 301, 302, 303, 307 or 308 that names one. */
  get redirect(): string | undefined {
    return [301, 302, 303, 307, 308].includes(this.status) ? (this.res.headers.location ?? undefined) : undefined;
  }

  /** As fetch's: null for an answer without one (to HEAD, a 204 or a 304); read once, by one reader. */
  get body(): ReadableStream<Uint8Array> | null {
    if (this.method === 'HEAD' || this.status === 204 || this.status === 304) return null;
    if (this.stream) return this.stream;
    this.take();
    this.stream = Readable.toWeb(this.res) as ReadableStream<Uint8Array>;
    return this.stream;
  }

  async text(): Promise<string> {
    return (await this.bytes()).toString('utf8');
  }

  async arrayBuffer(): Promise<ArrayBuffer> {
    const bytes = await this.bytes();
    return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  }

  private async bytes(): Promise<Buffer> {
    this.take();
    const chunks: Buffer[] = [];
    for await (const chunk of this.res) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  }

  async json(): Promise<unknown> {
    return JSON.parse(await this.text()) as unknown;
  }

  /** Drops an answer nobody reads, so its socket goes back to the pool (an unread one holds it, and the process). */
  async discard(): Promise<void> {
    if (!this.used) this.res.resume();
    this.used = true;
    if (this.res.complete || this.res.destroyed) return;
    await new Promise<void>((resolve) => this.res.once('close', resolve).once('end', resolve));
  }

  private take(): void {
    // As fetch: a body is read once; a second read would get nothing, or half of it.
    if (this.used) throw new TypeError('Body is unusable: it has already been read');
    this.used = true;
  }
}

/** The transport, adding the daemon's token to every request (the client's calls and the probe's alike). */
export function withToken(f: HttpFetch, token: string | undefined): HttpFetch {
  if (!token) return f;
  return (url, init) => f(url, { ...init, headers: { ...init?.headers, Authorization: `Bearer ${token}` } });
}
