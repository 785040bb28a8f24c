/**
 * Is the daemon that `.platform/server.json` describes really there? A client trusts the file only if the pid is
 * alive, `/health` answers on the port, and `/api/status` says it is that pid, serving this workspace, at this
 * version. A live pid whose command line is this workspace's `platform serve` but that does not answer is
 * `unresponsive` (shutting down, or stalled): its server.json must stay, and the client waits for it. Anything
 * else is stale and says why (and whether the process must be stopped before a new one starts).
 */
import { existsSync, readFileSync, readlinkSync, realpathSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { isPidAlive } from '../system/pid-liveness.js';
import type { ServerStatus } from '../api/server-status.js';
import { VERSION } from '../version.js';
import { platformDirId, readServerInfo, serverInfoPath, type ServerInfo } from './server-info.js';
import { findWorkspaceRoot } from './workspace.js';
import { createHttpFetch, withToken, type HttpResponse } from './http-fetch.js';

export type { ServerStatus } from '../api/server-status.js';

export type Probe =
  | { state: 'running'; url: string; info: ServerInfo; status: ServerStatus }
  | { state: 'absent' }
  | {
      /**
       * This workspace's daemon (the pid is alive and its command line is `platform serve` for this workspace)
       * does not answer: it is shutting down, or stalled. Never remove its server.json nor start another server
       * beside it (the new one could not open the event log): wait until it answers again or exits.
       */
      state: 'unresponsive';
      info: ServerInfo;
      reason: string;
    }
  | {
      state: 'stale';
      /** undefined when server.json exists but cannot be read as one. */
      info: ServerInfo | undefined;
      reason: string;
      /**
       * The pid is this workspace's daemon, alive but of another version: it must be stopped before a new one
       * starts, or the new one could not open the event log.
       */
      stopFirst: boolean;
    };

export type StaleProbe = Extract<Probe, { state: 'stale' }>;

const PROBE_TIMEOUT_MS = 2_000;

/** The same directory, symlinks resolved (a temp dir under a symlinked /tmp is still the same workspace). */
export function sameDir(a: string, b: string): boolean {
  const real = (p: string): string => {
    try {
      return realpathSync(p);
    } catch {
      return resolve(p);
    }
  };
  return real(a) === real(b);
}

export function serverUrl(port: number): string {
  return `http://127.0.0.1:${port}`;
}

async function get(url: string, timeoutMs: number, token?: string): Promise<HttpResponse> {
  // Its own limit, not PLATFORM_REQUEST_TIMEOUT: a probe answers whether a daemon is there, whatever a request may wait.
  return withToken(createHttpFetch({ quietLimitMs: timeoutMs }), token)(url, { signal: AbortSignal.timeout(timeoutMs), headers: { accept: 'application/json' } });
}

/** The server answered `/api/status`, but not with a platform server's status (an older version, or not ours). */
export class NotAStatusError extends Error {
  constructor(
    message: string,
    /** The HTTP status it answered with, when not a success; undefined for a success that was no platform status. */
    readonly status?: number,
  ) {
    super(message);
  }
}

/** The server answered `/api/status` with a 401: it requires a token the request did not carry (or not its own). */
export class TokenRefusedError extends NotAStatusError {}

/** `GET /api/status` of the server at `url`; throws when it does not answer or is not a platform server. */
export async function fetchStatus(url: string, timeoutMs = PROBE_TIMEOUT_MS, token?: string): Promise<ServerStatus> {
  const res = await get(`${url}/api/status`, timeoutMs, token);
  if (!res.ok) {
    await res.body?.cancel();
    if (res.status === 401) throw new TokenRefusedError(`the server at ${url} requires its token`);
    throw new NotAStatusError(`GET ${url}/api/status answered ${res.status}`, res.status);
  }
  const body = (await res.json().catch(() => ({}))) as Partial<ServerStatus>;
  if (typeof body.pid !== 'number' || typeof body.workspace_root !== 'string' || typeof body.version !== 'string') {
    throw new NotAStatusError(`GET ${url}/api/status did not answer with a platform server status`);
  }
  return body as ServerStatus;
}

async function healthy(url: string): Promise<boolean> {
  try {
    const res = await get(`${url}/health`, PROBE_TIMEOUT_MS);
    await res.body?.cancel();
    return res.ok;
  } catch {
    return false;
  }
}

/** The `-C` / `--workspace` value of a command line, if it has one. */
function workspaceArg(args: readonly string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '-C' || a === '--workspace') return args[i + 1];
    if (a.startsWith('--workspace=')) return a.slice('--workspace='.length);
    if (a.startsWith('-C') && a.length > 2) return a.slice(2);
  }
  return undefined;
}

/**
 * Whether `pid` runs `platform serve` for the workspace `root`, by its command line (`/proc/<pid>/cmdline`): our
 * bin (any path ending in `platform`) with `serve`, and a `-C` naming this workspace if it has one (a serve
 * without -C serves the workspace it was started in, which server.json names). False when it cannot be read.
 */
export function isWorkspaceServe(pid: number, root: string): boolean {
  let argv: string[];
  try {
    argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter((a) => a !== '');
  } catch {
    return false;
  }
  const bin = argv.findIndex((a) => basename(a) === 'platform');
  if (bin < 0) return false;
  const args = argv.slice(bin + 1);
  if (!args.includes('serve')) return false;
  const dir = workspaceArg(args);
  // Without -C it serves the workspace of its working directory: the same .platform, or another's (pid reuse).
  if (dir === undefined) {
    try {
      return platformDirId(findWorkspaceRoot(readlinkSync(`/proc/${pid}/cwd`))) === platformDirId(root);
    } catch {
      return false;
    }
  }
  let cwd = '/';
  try {
    cwd = readlinkSync(`/proc/${pid}/cwd`);
  } catch {
    // a relative -C cannot be resolved then; an absolute one still can
  }
  return sameDir(resolve(cwd, dir), root);
}

export async function probeServer(root: string): Promise<Probe> {
  const info = readServerInfo(root);
  if (!info) {
    return existsSync(serverInfoPath(root))
      ? { state: 'stale', info: undefined, reason: 'server.json cannot be read', stopFirst: false }
      : { state: 'absent' };
  }
  const stale = (reason: string, stopFirst = false): Probe => ({ state: 'stale', info, reason, stopFirst });
  // A live pid that does not answer: if it is this workspace's serve, it is ours to wait for, not to replace.
  const silent = (reason: string): Probe =>
    isWorkspaceServe(info.pid, root) ? { state: 'unresponsive', info, reason } : stale(`pid ${info.pid} gave ${reason}`);
  if (!sameDir(info.workspace_root, root)) {
    // The same .platform under another path: this workspace, moved since its daemon started (or reached then through a
    // link since removed). Alive, that daemon holds the event log, and runs its jobs under a path that is gone: it is
    // stopped before a new one starts, never left running with its server.json removed.
    const moved = info.platform_dir_id !== undefined && info.platform_dir_id === platformDirId(root);
    if (!moved) return stale(`it describes a server of another workspace (${info.workspace_root})`);
    if (!isPidAlive(info.pid)) return stale(`its pid ${info.pid} is not running`);
    // Started with -C naming the old path, or without -C in the workspace (its working directory moved with it).
    if (!isWorkspaceServe(info.pid, info.workspace_root) && !isWorkspaceServe(info.pid, root)) return stale(`its pid ${info.pid} is not a platform server any more`);
    return stale(`it serves this workspace under the path it had when it started, ${info.workspace_root} (moved since), where its jobs would run`, true);
  }
  if (!isPidAlive(info.pid)) return stale(`its pid ${info.pid} is not running`);
  if (info.platform_dir_id !== undefined && info.platform_dir_id !== platformDirId(root)) {
    // This path, another .platform: the one its daemon was started for was moved away since, and this one put here (a
    // copy, `cp -a` with its server.json). That daemon serves the moved one, and opens its files by this path: it is
    // stopped before this workspace's own starts (the moved one's next command starts its own again).
    if (!isWorkspaceServe(info.pid, root)) return stale(`its pid ${info.pid} is not a platform server any more`);
    return stale(`it serves the .platform directory that was at this path when it started, moved away since (this one is another, a copy?)`, true);
  }
  const url = serverUrl(info.port);
  if (!(await healthy(url))) return silent(`no answer to GET /health on port ${info.port}`);
  let status: ServerStatus;
  try {
    status = await fetchStatus(url, PROBE_TIMEOUT_MS, info.token);
  } catch (err) {
    if (!(err instanceof NotAStatusError)) return silent(`no answer to GET /api/status on port ${info.port}`);
    // /health answers but /api/status does not: a platform server from before /api/status, i.e. another version.
    return stale(`the server on port ${info.port} does not report its status (version ${info.version || 'unknown'}, not ${VERSION})`, true);
  }
  // A port now used by another process than the one server.json names: that pid is not a server of ours.
  if (status.pid !== info.pid) return stale(`port ${info.port} is served by pid ${status.pid}, not ${info.pid}`);
  if (!sameDir(status.workspace_root, root)) return stale(`the server on port ${info.port} serves another workspace (${status.workspace_root})`);
  if (status.version !== VERSION) return stale(`the server (pid ${info.pid}) is version ${status.version}, this client is ${VERSION}`, true);
  return { state: 'running', url, info, status };
}

/** Waits until `pid` has exited (a zombie counts as exited); false on timeout. */
export async function waitForExit(pid: number, timeoutMs: number): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  while (isPidAlive(pid)) {
    if (Date.now() >= end) return false;
    await sleep(50);
  }
  return true;
}

/** SIGTERM: stop, leaving running job runs to their supervisors; SIGUSR2: stop and cancel them. Then waits for its exit. */
export async function terminateServer(pid: number, timeoutMs = 40_000, signal: 'SIGTERM' | 'SIGUSR2' = 'SIGTERM'): Promise<void> {
  try {
    process.kill(pid, signal);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return;
    throw err;
  }
  if (!(await waitForExit(pid, timeoutMs))) {
    throw new Error(`The server (pid ${pid}) did not exit within ${Math.round(timeoutMs / 1000)} s of ${signal}; see .platform/server.log, or kill it with 'kill -9 ${pid}'.`);
  }
}
