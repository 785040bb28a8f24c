/**
 * A typed client of the daemon's HTTP API over fetch: the REST endpoints, the SSE streams and the
 * PlatformService RPCs (Connect protocol, JSON). Errors come out as:
 *
 * - `ClientError`: the server answered with an error status; carries the status and the server's message
 *   (`{"error"}` for REST, `{code, message}` for Connect).
 * - `NoServerError`: nothing answered at the base URL (connection refused, unknown host...).
 *
 * A write (POST/DELETE) refused with 503 because the orchestrator's queue is full is retried with backoff,
 * honouring `Retry-After`; the caller only sees the eventual answer. A request the server did not carry out because it
 * was stopping (or whose connection was refused) is sent again to the server `reconnect` finds, when given one.
 */
import type { GcReport } from '../api/gc.js';
import type { ServerStatus } from '../api/server-status.js';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Observable } from 'rxjs';
import type { CreateWantBody, CreateWantReply } from '../api/create-want.js';
import type { ConnectErrorBody, ErrorBody } from '../api/error-body.js';
import type { LogEnd, LogStream } from '../api/job-run-log.js';
import type { EventPage, Page, PageParams } from '../api/page.js';
import type { GraphAnalyzeResponseJson, JobConfigJson, JobConfigResponseJson, JobGraphJson, TaskJson } from '../api/platform-service.js';
import type { JobRunStatus, PartitionStatus, WantStatus } from '../api/statuses.js';
import type { EventView, JobRunView, PartitionView, WantView } from '../api/views.js';
import type { BackfillView, CreateBackfillBody, CreateBackfillReply } from '../api/backfills.js';
import type { ScheduleChangeReply, ScheduleView } from '../api/schedules.js';
import type { WantTreeNode, WantTreeReply } from '../api/want-tree.js';
import type { PartitionLookupBody, PartitionLookupReply } from '../api/partition-lookup.js';
import type { CreateTaintBody, LineageReply, PartitionDetailView, TaintReply, TaintView } from '../api/partitions-change.js';
import { NoServerError } from './server-connection.js';
import { sseStream, type SseMessage } from './sse-client.js';
import { ServerSilentError, nodeHttpFetch, withToken, type HttpFetch, type HttpResponse } from './http-fetch.js';

// The CLI takes the API's types from the client it holds (it could equally import api/).
export type { BackfillView, CreateBackfillBody, CreateBackfillReply, ScheduleChangeReply, ScheduleView };
export type { CreateWantBody, EventView, JobConfigJson, JobGraphJson, JobRunView, LogEnd, Page, TaskJson, WantView };
export type { SseMessage, WantTreeNode, WantTreeReply };

/** An error body as parsed, before it is checked: any field of either kind of error may be there, of any type. */
type UncheckedErrorBody = { [K in keyof (ErrorBody & ConnectErrorBody)]?: unknown };

export class ClientError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** The parsed error body, when it was JSON. */
    readonly body?: unknown,
    readonly wantId?: string,
    /** The Connect error code (`invalid_argument`, ...) of a PlatformService error. */
    readonly code?: string,
  ) {
    super(message);
    this.name = 'ClientError';
  }
}

/**
 * The server answered that it is stopping (503, `stopping: true`; Connect `unavailable`): the request was not carried
 * out, and running the command again (against the next server) is safe. Exit status 75 (EX_TEMPFAIL: try again), as a
 * follow whose server went away.
 */
export class ServerStoppingError extends NoServerError {
  readonly exitCode = 75;
  readonly status = 503;

  constructor(url: string, message: string) {
    // A NoServerError: what follows a stream (build, logs -f, events -f) takes it as the server gone, as it is.
    super(url, message);
    this.name = 'ServerStoppingError';
  }
}

/** Nothing listened at the URL: the request was never sent, so sending it elsewhere is safe. */
export class ConnectionRefusedError extends NoServerError {
  constructor(url: string, message: string) {
    super(url, message);
    this.name = 'ConnectionRefusedError';
  }
}

/** Whether an error answer is a stopping server's: nothing of the request was carried out. */
function isStopping(status: number, body: unknown): boolean {
  if (status !== 503 || typeof body !== 'object' || body === null) return false;
  const b = body as UncheckedErrorBody;
  return b.stopping === true || b.code === 'unavailable';
}

export interface RetryPolicy {
  /** Attempts in all, the first included. */
  maxAttempts: number;
  /** First backoff when the server gives no Retry-After; doubled per attempt. */
  baseDelayMs: number;
  /** Upper bound of one wait (also caps Retry-After). */
  maxDelayMs: number;
}

export interface PlatformClientOptions {
  /** The transport (default: node's http, nodeHttpFetch); the global `fetch` will do as well. */
  fetch?: HttpFetch;
  retry?: Partial<RetryPolicy>;
  /** Told before each wait on a busy server (for a progress note). */
  onRetry?: (info: { attempt: number; delayMs: number; message: string }) => void;
  /** The workspace daemon the URL came from (server.json), when it was discovered: named when it does not answer. */
  daemon?: DaemonRef;
  /** The daemon's token (from server.json): sent as `Authorization: Bearer` with every request. */
  token?: string;
  /** A 401's message in place of the server's: why no token was sent, and how to send it (the CLI's, for `--server-url`). */
  unauthorizedMessage?: string;
  /**
   * The server to send a request to once this one did not carry it out (it was stopping, or refused the connection):
   * the CLI's finds the workspace's next daemon, starting it. Not given: those errors reach the caller. Not used for
   * streams: a follow sees its server go (and says so).
   */
  reconnect?: () => Promise<ServerTarget>;
  /** Told when a request is sent again to another server, and why. */
  onResend?: (info: { from: string; to: string; reason: string }) => void;
}

/** Where requests go: a server's base URL, its token, and the workspace daemon it is when it was discovered. */
export interface ServerTarget {
  url: string;
  token?: string;
  daemon?: DaemonRef;
}

export interface DaemonRef {
  pid: number;
  /** Its `.platform/server.log`. */
  logPath: string;
}

const DEFAULT_RETRY: RetryPolicy = { maxAttempts: 30, baseDelayMs: 250, maxDelayMs: 10_000 };
/** Servers one request is sent to after the first: a daemon that stops as soon as it starts is not chased for ever. */
const MAX_RESENDS = 3;

export class PlatformClient {
  private base: string;
  private doFetch: HttpFetch;
  private daemon: DaemonRef | undefined;
  private token: string | undefined;
  private readonly retry: RetryPolicy;

  constructor(
    baseUrl: string,
    private readonly options: PlatformClientOptions = {},
  ) {
    this.base = baseUrl.replace(/\/+$/, '');
    this.doFetch = withToken(options.fetch ?? nodeHttpFetch, options.token);
    this.daemon = options.daemon;
    this.token = options.token;
    this.retry = { ...DEFAULT_RETRY, ...options.retry };
  }

  /** The server's base URL (another one once a request was sent again to the next daemon). */
  get baseUrl(): string {
    return this.base;
  }

  /**
   * A client of the server this one talks to now, which never sends a request elsewhere: for what follows that
   * server's work (a build's progress), where its going away is the news, not a reason to start the next one.
   */
  pinned(): PlatformClient {
    const { reconnect: _reconnect, onResend: _onResend, token: _token, daemon: _daemon, ...options } = this.options;
    return new PlatformClient(this.base, { ...options, ...(this.token ? { token: this.token } : {}), ...(this.daemon ? { daemon: this.daemon } : {}) });
  }

  // ---- wants

  listWants(params: PageParams & { status?: WantStatus | string } = {}): Promise<Page<WantView>> {
    return this.getJson(`/api/wants${query({ ...pageParams(params), status: params.status })}`);
  }

  createWant(body: CreateWantBody): Promise<CreateWantReply> {
    return this.write('POST', '/api/wants', body);
  }

  /** Removes what retention lets go, old job logs and events (`dryRun`: only says what it would remove). */
  gc(dryRun: boolean): Promise<GcReport> {
    return this.write('POST', '/api/gc', { dry_run: dryRun });
  }

  /** The dashboard's URL: a one-time link that signs the browser in where the daemon requires its token. */
  uiLink(): Promise<{ url: string }> {
    return this.write('POST', '/api/ui_link');
  }

  /** Who the server is and what it holds (`GET /api/status`): also whether platform.json is refused (`graph_problem`). */
  serverStatus(): Promise<ServerStatus> {
    return this.getJson('/api/status');
  }

  getWant(id: string): Promise<WantView> {
    return this.getJson(`/api/wants/${encodeURIComponent(id)}`);
  }

  /** The want and the wants derived from it, breadth first, at most `limit` (default 200, at most 1,000). */
  wantTree(id: string, params: { limit?: number } = {}): Promise<WantTreeReply> {
    return this.getJson(`/api/wants/${encodeURIComponent(id)}/tree${query({ limit: params.limit })}`);
  }

  cancelWant(id: string): Promise<WantView> {
    return this.write('DELETE', `/api/wants/${encodeURIComponent(id)}`);
  }

  // ---- partitions and job runs

  listPartitions(params: PageParams & { status?: PartitionStatus | string; prefix?: string } = {}): Promise<Page<PartitionView>> {
    return this.getJson(`/api/partitions${query({ ...pageParams(params), status: params.status, prefix: params.prefix })}`);
  }

  /** Job runs, oldest first; `want_id`: only that want's (queued or joined by it), in the order it got them. */
  listJobRuns(params: PageParams & { status?: JobRunStatus | string; want_id?: string } = {}): Promise<Page<JobRunView>> {
    return this.getJson(`/api/job_runs${query({ ...pageParams(params), status: params.status, want_id: params.want_id })}`);
  }

  /** A partition's status, staleness, current build, history (newest first) and downstream. */
  getPartition(ref: string, params: { builds_limit?: number; builds_offset?: number } = {}): Promise<PartitionDetailView> {
    return this.getJson(`/api/partitions/${encodeURIComponent(ref)}${query({ builds_limit: params.builds_limit, builds_offset: params.builds_offset })}`);
  }

  /** Many partitions by ref in one read (at most PARTITION_LOOKUP_MAX); `unknown`: the refs never seen. */
  lookupPartitions(refs: readonly string[]): Promise<PartitionLookupReply> {
    // A read sent as a POST (the refs do not fit a URL): retried on a 503 like a write, which is as safe.
    return this.write('POST', '/api/partitions/lookup', { refs: [...refs] } satisfies PartitionLookupBody);
  }

  lineage(ref: string, params: { direction?: 'upstream' | 'downstream'; depth?: number } = {}): Promise<LineageReply> {
    return this.getJson(`/api/partitions/${encodeURIComponent(ref)}/lineage${query({ direction: params.direction, depth: params.depth })}`);
  }

  // ---- taints

  createTaint(body: CreateTaintBody): Promise<TaintReply> {
    return this.write('POST', '/api/taints', body);
  }

  listTaints(params: PageParams = {}): Promise<Page<TaintView>> {
    return this.getJson(`/api/taints${query(pageParams(params))}`);
  }

  getTaint(id: string, params: { partitions_offset?: number; partitions_limit?: number } = {}): Promise<TaintView> {
    return this.getJson(`/api/taints/${encodeURIComponent(id)}${query(params)}`);
  }

  // ---- backfills

  createBackfill(body: CreateBackfillBody): Promise<CreateBackfillReply> {
    return this.write('POST', '/api/backfills', body);
  }

  listBackfills(params: PageParams = {}): Promise<Page<BackfillView>> {
    return this.getJson(`/api/backfills${query(pageParams(params))}`);
  }

  getBackfill(id: string): Promise<BackfillView> {
    return this.getJson(`/api/backfills/${encodeURIComponent(id)}`);
  }

  cancelBackfill(id: string): Promise<BackfillView> {
    return this.write('DELETE', `/api/backfills/${encodeURIComponent(id)}`);
  }

  // ---- schedules

  listSchedules(params: PageParams = {}): Promise<Page<ScheduleView>> {
    return this.getJson(`/api/schedules${query(pageParams(params))}`);
  }

  /** One schedule by name; 404 (an ApiError) when platform.json has none of that name. */
  getSchedule(name: string): Promise<ScheduleView> {
    return this.getJson(`/api/schedules/${encodeURIComponent(name)}`);
  }

  /** Pauses a schedule (`changed: false` when it was paused already); 404 (an ApiError) for an unknown name. */
  pauseSchedule(name: string, reason?: string): Promise<ScheduleChangeReply> {
    return this.write('POST', `/api/schedules/${encodeURIComponent(name)}/pause`, reason !== undefined ? { reason } : {});
  }

  /** Resumes a paused schedule: what fell due while it was paused is skipped (`changed: false` when it ran). */
  resumeSchedule(name: string): Promise<ScheduleChangeReply> {
    return this.write('POST', `/api/schedules/${encodeURIComponent(name)}/resume`);
  }

  getJobRun(id: string): Promise<JobRunView> {
    return this.getJson(`/api/job_runs/${encodeURIComponent(id)}`);
  }

  /** The log so far, as text; with `tail`, only its last lines. */
  async logText(id: string, stream: LogStream = 'stdout', tail?: number): Promise<string> {
    const res = await this.send('GET', `/api/job_runs/${encodeURIComponent(id)}/logs/${stream}${query({ tail })}`);
    return this.read(() => res.text());
  }

  /**
   * The log so far as the job wrote it, byte for byte (`logText` decodes it: bytes that are no UTF-8 read as U+FFFD,
   * so a binary log printed from it was not the job's); with `tail`, only its last lines.
   */
  async logBytes(id: string, stream: LogStream = 'stdout', tail?: number): Promise<Buffer> {
    const res = await this.send('GET', `/api/job_runs/${encodeURIComponent(id)}/logs/${stream}${query({ tail })}`);
    return this.read(async () => Buffer.from(await res.arrayBuffer()));
  }

  /**
   * The log as SSE: `log` messages (one line each, its id the byte offset after it), then one `end` message with a
   * `LogEnd` as data. From `tail` lines before the end when given; `lastEventId` (a log message's id) resumes
   * after that line instead.
   */
  followLog(id: string, stream: LogStream = 'stdout', params: { tail?: number; lastEventId?: string } = {}): Observable<SseMessage> {
    return this.sse(`/api/job_runs/${encodeURIComponent(id)}/logs/${stream}${query({ follow: 'true', tail: params.tail })}`, params.lastEventId);
  }

  // ---- events

  /** Events after id `offset` (0 = from the first), at most `limit`; also the latest id. */
  listEvents(params: { offset?: number; limit?: number } = {}): Promise<EventPage> {
    return this.getJson(`/api/events${query({ offset: params.offset, limit: params.limit })}`);
  }

  getEvent(id: number): Promise<EventView> {
    return this.getJson(`/api/events/${id}`);
  }

  /**
   * Events as SSE (`event` = the event type, `id` = the event id, `data` = the event as JSON): those after
   * `after` (default: from now on), then live ones. `lastEventId` resumes a stream the same way.
   */
  eventStream(params: { after?: number; lastEventId?: number | string } = {}): Observable<SseMessage> {
    return this.sse(`/api/events/stream${query({ after: params.after })}`, params.lastEventId);
  }

  // ---- misc

  async health(): Promise<boolean> {
    try {
      const res = await this.sendOnce('GET', '/health');
      return (await this.read(() => res.text())).trim() === 'OK';
    } catch (err) {
      if (err instanceof NoServerError || err instanceof ClientError) return false;
      throw err;
    }
  }

  async metrics(): Promise<string> {
    const res = await this.send('GET', '/metrics');
    return this.read(() => res.text());
  }

  // ---- PlatformService (Connect protocol, JSON)

  analyzeGraph(outputRefs: string[]): Promise<GraphAnalyzeResponseJson> {
    return this.connect('AnalyzeGraph', { outputRefs });
  }

  getJobConfigs(outputRefs: string[]): Promise<JobConfigResponseJson> {
    return this.connect('GetJobConfigs', { outputRefs });
  }

  // ---- plumbing

  private async getJson<T>(path: string): Promise<T> {
    const res = await this.send('GET', path);
    return this.json<T>(res, 'GET', path);
  }

  /** The request an answer came to, to name it in the error of an answer no daemon gives. */
  private answered(method: string, path: string): AnsweredRequest {
    return { baseUrl: this.baseUrl, method, path, daemon: this.daemon };
  }

  /** An answer's JSON; one that is not (a page of HTML) came from some other server than a daemon. */
  private async json<T>(res: HttpResponse, method: string, path: string): Promise<T> {
    const text = await this.read(() => res.text());
    try {
      return JSON.parse(text) as T;
    } catch {
      throw notADaemon(res, this.answered(method, path));
    }
  }

  /** Reads an answer's body: a server that goes quiet in the middle of it is named as one that never answered. */
  private async read<T>(body: () => Promise<T>): Promise<T> {
    try {
      return await body();
    } catch (err) {
      throw err instanceof ServerSilentError ? networkError(this.baseUrl, err, this.daemon) : err;
    }
  }

  /** A write: retried while the server answers 503 (queue full, or briefly busy). */
  private async write<T>(method: 'POST' | 'DELETE', path: string, body?: unknown): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        const res = await this.send(method, path, body);
        return await this.json<T>(res, method, path);
      } catch (err) {
        if (!(err instanceof RetryableError) || attempt >= this.retry.maxAttempts) {
          throw err instanceof RetryableError ? err.error : err;
        }
        const backoff = Math.min(this.retry.maxDelayMs, this.retry.baseDelayMs * 2 ** (attempt - 1));
        const delayMs = err.retryAfterMs !== undefined ? Math.min(this.retry.maxDelayMs, err.retryAfterMs) : backoff;
        this.options.onRetry?.({ attempt, delayMs, message: err.error.message });
        await sleep(delayMs);
      }
    }
  }

  /** Sends again to the server `reconnect` finds what this one did not carry out (see `notCarriedOut`). */
  private async resending<T>(request: () => Promise<T>): Promise<T> {
    for (let resends = 0; ; resends++) {
      try {
        return await request();
      } catch (err) {
        const reconnect = this.options.reconnect;
        if (!reconnect || resends >= MAX_RESENDS || !notCarriedOut(err)) throw err;
        const from = this.base;
        const reason = err instanceof ServerStoppingError ? 'it was stopping' : 'it refused the connection';
        let next: ServerTarget;
        try {
          next = await reconnect();
        } catch (cause) {
          // The error of the start, said as what became of the command: it was not carried out anywhere.
          if (cause instanceof Error) cause.message = `The request was not carried out (the server ${reason.slice(3)}), and no next server could be reached: ${cause.message}`;
          throw cause;
        }
        const url = next.url.replace(/\/+$/, '');
        // The same server again (it still says it runs): sending there would be refused the same way.
        if (url === from && next.daemon?.pid === this.daemon?.pid) throw err;
        this.base = url;
        this.doFetch = withToken(this.options.fetch ?? nodeHttpFetch, next.token);
        this.token = next.token;
        this.daemon = next.daemon;
        this.options.onResend?.({ from, to: this.base, reason });
      }
    }
  }

  private connect<T>(method: string, body: unknown): Promise<T> {
    return this.resending(() => this.connectOnce<T>(method, body));
  }

  private async connectOnce<T>(method: string, body: unknown): Promise<T> {
    const path = `/platform.v1.PlatformService/${method}`;
    let res: HttpResponse;
    try {
      res = await this.doFetch(`${this.baseUrl}${path}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'Connect-Protocol-Version': '1', Accept: 'application/json' },
        body: JSON.stringify(body),
      });
    } catch (err) {
      throw networkError(this.baseUrl, err, this.daemon);
    }
    const text = await this.read(() => res.text());
    let parsed: unknown;
    try {
      parsed = text === '' ? {} : JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    if (!res.ok) {
      const e = (parsed ?? {}) as UncheckedErrorBody;
      const code = typeof e.code === 'string' ? e.code : undefined;
      const message =
        typeof e.message === 'string' && e.message !== ''
          ? e.message
          : typeof e.error === 'string'
            ? e.error
            : `${method} failed: HTTP ${res.status}${code ? ` (${code})` : ''}`;
      if (parsed === undefined && text.trim() !== '') throw notADaemon(res, this.answered('POST', path));
      if (isStopping(res.status, parsed)) throw new ServerStoppingError(this.baseUrl, message);
      throw this.hinted(new ClientError(res.status, message, parsed, undefined, code));
    }
    if (parsed === undefined) throw notADaemon(res, this.answered('POST', path));
    return parsed as T;
  }

  private send(method: string, path: string, body?: unknown): Promise<HttpResponse> {
    return this.resending(() => this.sendOnce(method, path, body));
  }

  /** One request; a non-2xx answer becomes a ClientError (a 503 a RetryableError), no answer a NoServerError. */
  private async sendOnce(method: string, path: string, body?: unknown): Promise<HttpResponse> {
    const url = `${this.baseUrl}${path}`;
    let res: HttpResponse;
    try {
      res = await this.doFetch(url, {
        method,
        headers: body === undefined ? { Accept: 'application/json' } : { 'Content-Type': 'application/json', Accept: 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch (err) {
      throw networkError(this.baseUrl, err, this.daemon);
    }
    if (res.ok) return res;
    const error = this.hinted(await responseError(res, this.answered(method, path)));
    if (isStopping(res.status, error.body)) throw new ServerStoppingError(this.baseUrl, error.message);
    if (res.status === 503 && (method === 'POST' || method === 'DELETE')) {
      throw new RetryableError(error, retryAfterMs(res.headers.get('Retry-After')));
    }
    throw error;
  }

  private hinted(err: ClientError): ClientError {
    const message = this.options.unauthorizedMessage;
    if (err.status !== 401 || !message) return err;
    return new ClientError(err.status, message, err.body, err.wantId, err.code);
  }

  private sse(path: string, lastEventId?: number | string): Observable<SseMessage> {
    return sseStream(`${this.baseUrl}${path}`, {
      fetch: this.doFetch,
      ...(lastEventId !== undefined ? { lastEventId } : {}),
      responseError: async (res) => {
        const error = this.hinted(await responseError(res, this.answered('GET', path)));
        return isStopping(res.status, error.body) ? new ServerStoppingError(this.baseUrl, error.message) : error;
      },
      requestError: (err) => networkError(this.baseUrl, err, this.daemon),
    });
  }
}

/** The server did not carry the request out, and said so (stopping) or never took it (refused): sending it again is safe. */
function notCarriedOut(err: unknown): boolean {
  return err instanceof ServerStoppingError || err instanceof ConnectionRefusedError;
}

class RetryableError extends Error {
  constructor(
    readonly error: ClientError,
    readonly retryAfterMs: number | undefined,
  ) {
    super(error.message);
  }
}

/** The request an answer came to, to name it when the answer is not a daemon's. */
export interface AnsweredRequest {
  baseUrl: string;
  method: string;
  /** Its path, a query string and all. */
  path: string;
  daemon?: DaemonRef | undefined;
}

/**
 * The server's `{"error"}` (or Connect `{message}`) as a ClientError. An error that is no JSON at all (a page of HTML)
 * is some other server's, when `request` says which request it answered: a message of one line saying so, not its page.
 */
export async function responseError(res: HttpResponse, request?: AnsweredRequest): Promise<ClientError> {
  const text = await res.text().catch(() => '');
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (body === undefined && text.trim() !== '' && request) return notADaemon(res, request);
  const b = (typeof body === 'object' && body !== null ? body : {}) as UncheckedErrorBody;
  const message =
    typeof b.error === 'string'
      ? b.error
      : typeof b.message === 'string'
        ? b.message
        : `HTTP ${res.status} ${res.statusText}${text && body === undefined ? `: ${text.slice(0, 200).trim()}` : ''}`;
  return new ClientError(
    res.status,
    message,
    body,
    typeof b.want_id === 'string' ? b.want_id : undefined,
    typeof b.code === 'string' ? b.code : undefined,
  );
}

/**
 * An answer with a body that is not JSON: every answer of a daemon's API is, so the URL is some other server's
 * (another program on the port, a web server, a proxy's error page). Named in one line, not printed whole.
 */
function notADaemon(res: HttpResponse, { baseUrl, method, path, daemon }: AnsweredRequest): ClientError {
  const type = res.headers.get('content-type')?.split(';')[0]?.trim() || 'no Content-Type';
  const answered = `${method} ${path.split('?')[0]} answered ${res.status} ${type}`;
  const hint = daemon
    ? `the workspace server (pid ${daemon.pid}) found in .platform/server.json may have shut down and another program taken its port; see ${daemon.logPath}.`
    : 'check --server-url.';
  return new ClientError(res.status, `The server at ${baseUrl} is not a platform daemon (${answered}); ${hint}`);
}

/**
 * A request that got no answer: say which server did not answer and why, in words, and what to do: for a
 * discovered daemon, its pid and log; for a URL given by hand, start one or check the URL.
 */
export function networkError(baseUrl: string, err: unknown, daemon?: DaemonRef): Error {
  if (err instanceof ClientError || err instanceof NoServerError) return err;
  if (err instanceof ServerSilentError) {
    const stuck = daemon
      ? `It is the workspace server (pid ${daemon.pid}): if it is stuck, 'platform stop' ends it (see ${daemon.logPath}) and the next command starts a new one.`
      : `Check the server at ${baseUrl}.`;
    return new NoServerError(baseUrl, `${err.message} ${stuck}`);
  }
  const code = errorCode(err);
  const detail =
    code === 'ECONNREFUSED'
      ? 'nothing is listening there (connection refused).'
      : code === 'ENOTFOUND' || code === 'EAI_AGAIN'
        ? 'the host name does not resolve.'
        : code === 'ECONNRESET' || code === 'UND_ERR_SOCKET'
          ? 'the connection was closed (did the server shut down?).'
          : code === 'ETIMEDOUT' || code === 'UND_ERR_CONNECT_TIMEOUT'
            ? 'the connection timed out.'
            : `the request failed (${code ?? innermostMessage(err)}).`;
  const hint = daemon
    ? `It is the workspace server (pid ${daemon.pid}) found in .platform/server.json: it may have shut down or crashed; ` +
      `see ${daemon.logPath}. The next command starts a new one if it is gone.`
    : `Start the daemon with 'platform serve', or check --server-url.`;
  const message = `No server at ${baseUrl}: ${detail} ${hint}`;
  return code === 'ECONNREFUSED' ? new ConnectionRefusedError(baseUrl, message) : new NoServerError(baseUrl, message);
}

function innermostMessage(err: unknown): string {
  let e: unknown = err;
  let message = String(err);
  for (let depth = 0; depth < 4 && e; depth++) {
    if (e instanceof Error && e.message) message = e.message;
    e = (e as { cause?: unknown }).cause;
  }
  return message;
}

function errorCode(err: unknown): string | undefined {
  // fetch wraps the socket error: TypeError('fetch failed', { cause: { code: 'ECONNREFUSED' } }), sometimes nested.
  let e: unknown = err;
  for (let depth = 0; depth < 4 && e; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    const errors = (e as { errors?: unknown }).errors;
    if (Array.isArray(errors) && errors.length > 0) {
      const inner = errorCode(errors[0]);
      if (inner) return inner;
    }
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

function retryAfterMs(header: string | null): number | undefined {
  if (header === null || header.trim() === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(header.trim())) return Math.round(Number(header) * 1000);
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

function pageParams(p: PageParams): Record<string, string | number | undefined> {
  return { offset: p.offset, limit: p.limit, order: p.order };
}

function query(params: Record<string, string | number | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
}
