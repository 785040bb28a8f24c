/**
 * Which server a command talks to. `--server-url` when given; otherwise the workspace's daemon, found like Bazel's
 * or Nx's client finds theirs: read `.platform/server.json` and trust it only if the pid is alive and the server
 * answers as this workspace's, at this version (server-probe.ts). If not, start one (start-daemon.ts) under an
 * exclusive lock (daemon-lock.ts), so two clients starting at once end with one server, and a stale server.json
 * (dead pid, another workspace, another version, no answer) is replaced, never talked to.
 */
import { resolve } from 'node:path';
import { removeServerInfo, serverInfoPath, type ServerInfo } from './server-info.js';
import { lockHolder, tryAcquireDaemonLock } from './daemon-lock.js';
import { DaemonStartError, serverLogPath, startDaemon, startTimeoutMs } from './start-daemon.js';
import { probeServer, sleep, terminateServer, type Probe, type ServerStatus } from './server-probe.js';
import { findWorkspaceRoot } from './workspace.js';
import { rmSync } from 'node:fs';

export { DaemonStartError } from './start-daemon.js';

export interface ConnectOptions {
  serverUrl?: string;
  workspace?: string;
  /** Start the daemon when none answers (default true). */
  autoStart?: boolean;
  /** How long a started daemon gets to answer; default PLATFORM_START_TIMEOUT or 15 s. */
  startTimeoutMs?: number;
  /** Told when this call started a daemon; default: one line on stderr. */
  onStarted?: (info: ServerInfo) => void;
}

export class NoServerError extends Error {
  constructor(readonly url: string, detail: string) {
    super(`No server at ${url}: ${detail}`);
    this.name = 'NoServerError';
  }
}

export interface ServerConnection {
  /** Base URL, no trailing slash. */
  url: string;
  /** The workspace root (absent with --server-url). */
  root?: string;
  /** The daemon's server.json (absent with --server-url). */
  info?: ServerInfo;
  status?: ServerStatus;
  /** True when this call started the daemon. */
  started: boolean;
}

/** -C <dir> works like `git -C`: as if run in <dir>, so the workspace is <dir> or the nearest one above it. */
export function workspaceRootFor(workspace: string | undefined): string {
  return findWorkspaceRoot(workspace ? resolve(workspace) : process.cwd());
}

/** What is wrong with a workspace's server.json, for messages. */
export function describeProbe(probe: Probe): string {
  if (probe.state === 'absent') return 'no .platform/server.json';
  if (probe.state === 'stale') return `.platform/server.json is stale: ${probe.reason}`;
  return `pid ${probe.info.pid} on port ${probe.info.port}`;
}

export async function resolveServerUrl(opts: ConnectOptions): Promise<string> {
  return (await connectServer(opts)).url;
}

export async function connectServer(opts: ConnectOptions): Promise<ServerConnection> {
  if (opts.serverUrl) return { url: opts.serverUrl.replace(/\/+$/, ''), started: false };
  const root = workspaceRootFor(opts.workspace);
  const probe = await probeServer(root);
  if (probe.state === 'running') return connection(root, probe, false);
  if (opts.autoStart === false) {
    throw new NoServerError(root, `${describeProbe(probe)}. Any command that needs the server starts it ('platform start'), or run 'platform serve'.`);
  }
  return ensureServer(root, opts);
}

function connection(root: string, probe: Extract<Probe, { state: 'running' }>, started: boolean): ServerConnection {
  return { url: probe.url, root, info: probe.info, status: probe.status, started };
}

function announce(info: ServerInfo): void {
  process.stderr.write(`platform: started the workspace server (pid ${info.pid}, port ${info.port}); its log is .platform/server.log\n`);
}

/**
 * Check-and-start under the daemon lock. The holder re-checks (a racing client may have just started a server),
 * clears a stale server.json (stopping the old process first if it is this workspace's daemon of another
 * version), starts the daemon and waits for it. The others poll until a server answers or the lock frees up.
 */
async function ensureServer(root: string, opts: ConnectOptions): Promise<ServerConnection> {
  const timeoutMs = opts.startTimeoutMs ?? startTimeoutMs();
  // The holder may need to stop an old server (up to 40 s) and then start one.
  const deadline = Date.now() + timeoutMs + 60_000;
  for (;;) {
    const lock = tryAcquireDaemonLock(root);
    if (lock) {
      try {
        const probe = await probeServer(root);
        if (probe.state === 'running') return connection(root, probe, false);
        if (probe.state === 'stale') await clearStale(root, probe);
        const started = await startDaemon(root, timeoutMs);
        (opts.onStarted ?? announce)(started.probe.info);
        return connection(root, started.probe, true);
      } finally {
        lock.release();
      }
    }
    await sleep(100);
    const probe = await probeServer(root);
    if (probe.state === 'running') return connection(root, probe, false);
    if (Date.now() >= deadline) {
      const holder = lockHolder(root);
      throw new DaemonStartError(
        `Timed out waiting for ${holder ? `another platform client (pid ${holder.pid})` : 'another platform client'} to start the ` +
          `workspace server (it holds ${root}/.platform/daemon.lock). See ${serverLogPath(root)}.`,
      );
    }
  }
}

async function clearStale(root: string, probe: Extract<Probe, { state: 'stale' }>): Promise<void> {
  if (!probe.info) {
    rmSync(serverInfoPath(root), { force: true });
    return;
  }
  if (probe.stopFirst) {
    process.stderr.write(`platform: stopping the workspace server pid ${probe.info.pid}: ${probe.reason}\n`);
    await terminateServer(probe.info.pid);
  }
  removeServerInfo(root, probe.info.pid);
}
