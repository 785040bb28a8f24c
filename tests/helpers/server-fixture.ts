/**
 * Shared setup for the server, state and lifecycle tests: a temp workspace, a real Platform (LevelDB event log,
 * orchestrator, process executor) with a small job graph of `bash -c` jobs, the real HTTP server on port 0, and
 * a teardown that closes all of it and removes the directory. Plus small clients: `rawRequest` (node:http, so
 * Host and Origin can be set freely), an SSE reader over fetch, and polling helpers. The clients check every
 * answer against the API's OpenAPI document (contract.ts): one that breaks it fails the test that asked.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ExecutionContext } from 'ava';
import { assertContract, checkedResponse } from './contract.js';
import {
  Platform,
  parseGraph,
  startHttpServer,
  type HttpServerOptions,
  type PlatformOptions,
  type RunningServer,
} from '../../lib/index.js';

/** The repository root (this file runs from dist/tests/helpers/). */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
export const CLI = join(REPO_ROOT, 'bin', 'platform');

/**
 * The test job graph (platform.json shape). Every job is a real process:
 * - `ok/<name>`: writes `out/<name>` in the workspace, prints `hello from <name>`, exits 0.
 * - `fail/<name>`: prints to stderr, exits 3 (no retries).
 * - `slow/<name>`: sleeps 30 s (long enough to be canceled or interrupted).
 * - `needs/<name>`: MATERIALIZE input `fail/<name>`, so its want ends `upstream_failed`.
 */
export const TEST_GRAPH = {
  max_concurrent_job_runs: 8,
  jobs: [
    {
      label: 'ok',
      outputs: ['ok/(?<name>[a-z0-9_-]+)'],
      exec: ['bash', '-c', 'mkdir -p out && echo "built $1" > "out/$1" && echo "hello from $1"', 'ok'],
      args: ['${name}'],
    },
    {
      label: 'fail',
      outputs: ['fail/(?<name>[a-z0-9_-]+)'],
      exec: ['bash', '-c', 'echo "failing on purpose" >&2; exit 3'],
    },
    {
      label: 'slow',
      outputs: ['slow/(?<name>[a-z0-9_-]+)'],
      exec: ['bash', '-c', 'echo started; sleep 30'],
    },
    {
      label: 'needs',
      outputs: ['needs/(?<name>[a-z0-9_-]+)'],
      inputs: [{ partition_ref: 'fail/${name}', dep_type: 'MATERIALIZE' }],
      exec: ['bash', '-c', 'echo never'],
    },
  ],
};

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** A fresh temp directory (realpath'd), removed when the test ends (after every later-registered teardown). */
export async function makeWorkspace(t: ExecutionContext, prefix = 'platform-test-'): Promise<string> {
  const dir = await realpath(await mkdtemp(join(tmpdir(), prefix)));
  t.teardown(() => rm(dir, { recursive: true, force: true, maxRetries: 3 }));
  return dir;
}

export interface ServerFixture {
  readonly dir: string;
  readonly platform: Platform;
  readonly server: RunningServer;
  readonly url: string;
  /** Lines the server logged (stdout and stderr side). */
  readonly logLines: string[];
  readonly errorLines: string[];
  /** fetch against the server: `api('/api/wants')`. */
  api(path: string, init?: RequestInit): Promise<Response>;
  /** POST /api/wants with a JSON body. */
  postWant(body: unknown): Promise<Response>;
  /** GET and parse JSON, failing loudly on a non-2xx. */
  getJson<T = any>(path: string): Promise<T>;
  /** Closes the server (which closes the platform). Idempotent. */
  close(): Promise<void>;
}

export interface FixtureOptions {
  /** Reuse this workspace (e.g. to reopen after a restart); default a new temp dir. */
  dir?: string;
  /** platform.json-shaped graph; default TEST_GRAPH. */
  graph?: unknown;
  platform?: PlatformOptions;
  server?: Partial<HttpServerOptions>;
}

/** Opens a Platform on a workspace and serves it on 127.0.0.1:<free port>; closed (and the dir removed) at teardown. */
export async function startServer(t: ExecutionContext, options: FixtureOptions = {}): Promise<ServerFixture> {
  const dir = options.dir ?? (await makeWorkspace(t));
  const errorLines: string[] = [];
  const logLines: string[] = [];
  const platform = await Platform.open(dir, {
    graph: parseGraph(options.graph ?? TEST_GRAPH, 'test'),
    tickMs: 100,
    cancelRunsOnClose: true,
    logError: (m) => errorLines.push(m),
    ...options.platform,
  });
  let server: RunningServer;
  try {
    server = await startHttpServer(platform, {
      port: 0,
      log: (l) => logLines.push(l),
      logError: (l) => errorLines.push(l),
      drainMs: 5_000,
      ...options.server,
    });
  } catch (err) {
    await platform.close();
    throw err;
  }
  const url = server.url;
  // Every answer is checked against the API's OpenAPI document (helpers/contract.ts).
  const api = async (path: string, init?: RequestInit) => checkedResponse(init?.method ?? 'GET', path, await fetch(`${url}${path}`, init));
  const fixture: ServerFixture = {
    dir,
    platform,
    server,
    url,
    logLines,
    errorLines,
    api,
    postWant: (body) =>
      api('/api/wants', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
    getJson: async (path) => {
      const res = await api(path);
      const text = await res.text();
      if (!res.ok) throw new Error(`GET ${path} -> ${res.status}: ${text}`);
      return JSON.parse(text);
    },
    close: () => server.close(),
  };
  t.teardown(() => fixture.close());
  return fixture;
}

/** Polls `check` until it returns a truthy value (returned) or the time is up (throws with `what`). */
export async function waitFor<T>(
  what: string,
  check: () => T | Promise<T>,
  { timeoutMs = 8_000, intervalMs = 25 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<NonNullable<T>> {
  const end = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v) return v as NonNullable<T>;
      last = v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (last: ${String(last)})`);
    await sleep(intervalMs);
  }
}

const TERMINAL = new Set(['successful', 'failed', 'upstream_failed', 'canceled']);

/** Waits until the want (over HTTP) has one of `statuses` (default: any terminal status); returns its detail. */
export async function waitForWant(f: ServerFixture, wantId: string, statuses?: string[]): Promise<any> {
  return waitFor(`want ${wantId} to reach ${statuses?.join('|') ?? 'a terminal status'}`, async () => {
    const w = await f.getJson(`/api/wants/${wantId}`);
    return (statuses ? statuses.includes(w.status) : TERMINAL.has(w.status)) ? w : undefined;
  });
}

/** POSTs a want and returns its id, failing on anything but 201. */
export async function createWant(f: ServerFixture, partitions: string[], extra: Record<string, unknown> = {}): Promise<string> {
  const res = await f.postWant({ partitions, ...extra });
  const body = (await res.json()) as { want_id?: string; error?: string };
  if (res.status !== 201 || !body.want_id) throw new Error(`POST /api/wants ${JSON.stringify(partitions)} -> ${res.status}: ${JSON.stringify(body)}`);
  return body.want_id;
}

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * One HTTP request over a fresh connection with node:http, so any header (Host, Origin) goes out as given.
 * `body` may be a Buffer (raw bytes) or a string.
 */
export function rawRequest(
  url: string,
  { method = 'GET', headers = {}, body }: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {},
): Promise<RawResponse> {
  return new Promise((resolvePromise, reject) => {
    const req = httpRequest(url, { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const answer = { status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') };
        try {
          assertContract(method, url, answer.status, answer.headers['content-type'], answer.body);
        } catch (err) {
          return reject(err);
        }
        resolvePromise(answer);
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

export interface SseFrame {
  event?: string;
  id?: string;
  data: string;
}

/** An SSE stream read with fetch: frames arrive in order; `next()` waits for the next one. */
export class SseReader {
  private buffer = '';
  private readonly frames: SseFrame[] = [];
  private waiters: Array<() => void> = [];
  private done = false;
  /** Resolves when the server ends the stream (or the reader is closed). */
  readonly ended: Promise<void>;
  private constructor(
    readonly response: Response,
    private readonly controller: AbortController,
  ) {
    this.ended = this.pump();
  }

  /** Opens the stream; the response status and headers are there when this resolves. */
  static async open(url: string, headers: Record<string, string> = {}): Promise<SseReader> {
    const controller = new AbortController();
    const res = await checkedResponse('GET', url, await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: controller.signal }));
    return new SseReader(res, controller);
  }

  get isDone(): boolean {
    return this.done;
  }

  private async pump(): Promise<void> {
    const body = this.response.body;
    if (!body) {
      this.finish();
      return;
    }
    const decoder = new TextDecoder();
    try {
      for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
        this.buffer += decoder.decode(chunk, { stream: true });
        let cut: number;
        while ((cut = this.buffer.indexOf('\n\n')) >= 0) {
          const block = this.buffer.slice(0, cut);
          this.buffer = this.buffer.slice(cut + 2);
          const frame = parseFrame(block);
          if (frame) this.frames.push(frame);
        }
        this.wake();
      }
    } catch {
      // Aborted by close(), or the connection dropped: either way the stream is over.
    }
    this.finish();
  }

  private finish(): void {
    this.done = true;
    this.wake();
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const fn of w) fn();
  }

  /** The next frame; rejects if the stream ends first or nothing comes within `timeoutMs`. */
  async next(timeoutMs = 5_000): Promise<SseFrame> {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const f = this.frames.shift();
      if (f) return f;
      if (this.done) throw new Error('SSE stream ended');
      const left = end - Date.now();
      if (left <= 0) throw new Error(`no SSE frame within ${timeoutMs} ms`);
      await new Promise<void>((r) => {
        const timer = setTimeout(r, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          r();
        });
      });
    }
  }

  /** Frames already received and not yet taken. */
  pending(): number {
    return this.frames.length;
  }

  close(): void {
    this.controller.abort();
  }
}

function parseFrame(block: string): SseFrame | undefined {
  const frame: SseFrame = { data: '' };
  const data: string[] = [];
  let any = false;
  for (const line of block.split('\n')) {
    if (line === '' || line.startsWith(':')) continue;
    const i = line.indexOf(':');
    const field = i < 0 ? line : line.slice(0, i);
    const value = i < 0 ? '' : line.slice(i + 1).replace(/^ /, '');
    any = true;
    if (field === 'event') frame.event = value;
    else if (field === 'id') frame.id = value;
    else if (field === 'data') data.push(value);
  }
  if (!any) return undefined;
  frame.data = data.join('\n');
  return frame;
}

export interface CliProcess {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code and signal. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Waits for stdout to match; returns the match. */
  waitForStdout(re: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
}

/** Runs `node bin/platform <args>` with cwd `cwd`; killed (SIGKILL) at teardown if it is still running. */
export function runCli(t: ExecutionContext, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): CliProcess {
  const child = spawn(process.execPath, [CLI, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1', ...env } });
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
  // 'close', not 'exit': the output may still be on its way when the process exits.
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
    child.once('close', (code, signal) => r({ code, signal })),
  );
  let running = true;
  void exited.then(() => (running = false));
  t.teardown(async () => {
    if (running) {
      child.kill('SIGKILL');
      await exited;
    }
  });
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    waitForStdout: (re, timeoutMs = 8_000) =>
      waitFor(`stdout to match ${re} (stdout: ${JSON.stringify(out)}, stderr: ${JSON.stringify(err)})`, () => out.match(re) ?? undefined, {
        timeoutMs,
      }),
  };
}
