/**
 * Is the daemon that `.platform/server.json` describes really there? A client trusts the file only if the pid is
 * alive, `/health` answers on the port, and `/api/status` says it is that pid, serving this workspace, at this
 * version. Anything else is stale and says why (and whether the process must be stopped before a new one starts).
 */
import { existsSync, realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import { isPidAlive } from '../executor/process-executor.js';
import type { ServerStatus } from '../server/routes/status-routes.js';
import { VERSION } from '../version.js';
import { readServerInfo, serverInfoPath, type ServerInfo } from './server-info.js';

export type { ServerStatus } from '../server/routes/status-routes.js';

export type Probe =
  | { state: 'running'; url: string; info: ServerInfo; status: ServerStatus }
  | { state: 'absent' }
  | {
      state: 'stale';
      /** undefined when server.json exists but cannot be read as one. */
      info: ServerInfo | undefined;
      reason: string;
      /**
       * The pid is this workspace's daemon, alive but unusable (another version, or not answering as it should):
       * it must be stopped before a new one starts, or the new one could not open the event log.
       */
      stopFirst: boolean;
    };

const PROBE_TIMEOUT_MS = 2_000;

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

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

async function get(url: string, timeoutMs: number): Promise<Response> {
  return fetch(url, { signal: AbortSignal.timeout(timeoutMs), headers: { accept: 'application/json' } });
}

/** `GET /api/status` of the server at `url`; throws when it does not answer or is not a platform server. */
export async function fetchStatus(url: string, timeoutMs = PROBE_TIMEOUT_MS): Promise<ServerStatus> {
  const res = await get(`${url}/api/status`, timeoutMs);
  if (!res.ok) {
    await res.body?.cancel();
    throw new Error(`GET ${url}/api/status answered ${res.status}`);
  }
  const body = (await res.json()) as Partial<ServerStatus>;
  if (typeof body.pid !== 'number' || typeof body.workspace_root !== 'string' || typeof body.version !== 'string') {
    throw new Error(`GET ${url}/api/status did not answer with a platform server status`);
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

export async function probeServer(root: string): Promise<Probe> {
  const info = readServerInfo(root);
  if (!info) {
    return existsSync(serverInfoPath(root))
      ? { state: 'stale', info: undefined, reason: 'server.json cannot be read', stopFirst: false }
      : { state: 'absent' };
  }
  const stale = (reason: string, stopFirst = false): Probe => ({ state: 'stale', info, reason, stopFirst });
  if (!sameDir(info.workspace_root, root)) return stale(`it describes a server of another workspace (${info.workspace_root})`);
  if (!isPidAlive(info.pid)) return stale(`its pid ${info.pid} is not running`);
  const url = serverUrl(info.port);
  if (!(await healthy(url))) return stale(`pid ${info.pid} does not answer on port ${info.port}`);
  let status: ServerStatus;
  try {
    status = await fetchStatus(url);
  } catch {
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

/** SIGTERM (a graceful shutdown: running job runs are recorded canceled), then waits for the process to exit. */
export async function terminateServer(pid: number, timeoutMs = 40_000): Promise<void> {
  try {
    process.kill(pid, 'SIGTERM');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return;
    throw err;
  }
  if (!(await waitForExit(pid, timeoutMs))) {
    throw new Error(`The server (pid ${pid}) did not exit within ${Math.round(timeoutMs / 1000)} s of SIGTERM; see .platform/server.log, or kill it with 'kill -9 ${pid}'.`);
  }
}
