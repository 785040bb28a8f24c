/**
 * Which server a command talks to. `--server-url` when given; otherwise the workspace's daemon, found like Bazel's
 * or Nx's client finds theirs: read `.platform/server.json` and trust it only if the pid is alive and the server
 * answers as this workspace's, at this version (server-probe.ts). If not, start one (start-daemon.ts) under an
 * exclusive lock (daemon-lock.ts), so two clients starting at once end with one server, and a stale server.json
 * (dead pid, another workspace, another version) is replaced, never talked to. A daemon of this workspace that is
 * alive but does not answer (shutting down, or stalled) is waited for, never replaced: its server.json stays.
 */
import { rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { removeServerInfo, serverInfoPath, type ServerInfo } from './server-info.js';
import { lockHolder, tryAcquireDaemonLock } from './daemon-lock.js';
import { DaemonStartError, serverLogPath, startDaemon, startTimeoutMs, waitForStartingDaemon } from './start-daemon.js';
import { liveStartingInfo, startingProgress, startingWords, type StartingInfo } from './server-starting.js';
import { probeServer, terminateServer, type Probe, type ServerStatus, type StaleProbe } from './server-probe.js';
import { findWorkspaceRoot } from './workspace.js';
import { workspaceDaemonAt } from './server-url-daemon.js';

export { DaemonStartError } from './start-daemon.js';

/** How long a client waits for this workspace's daemon that is alive but does not answer. */
export const UNRESPONSIVE_WAIT_MS = 40_000;

type UnresponsiveProbe = Extract<Probe, { state: 'unresponsive' }>;

export interface ConnectOptions {
  serverUrl?: string;
  workspace?: string;
  /** Start the daemon when none answers (default true). */
  autoStart?: boolean;
  /** How long a started daemon gets to answer; default PLATFORM_START_TIMEOUT or 15 s. */
  startTimeoutMs?: number;
  /** How long to wait for a daemon of this workspace that is alive but does not answer; default 40 s. */
  unresponsiveWaitMs?: number;
  /** Told when this call started a daemon; default: one line on stderr. */
  onStarted?: (info: ServerInfo) => void;
  /** Told when this call begins to wait for a daemon that does not answer; default: one line on stderr. */
  onWaiting?: (probe: UnresponsiveProbe, waitMs: number) => void;
  /** Told how far the daemon this call started got in replaying its log; default: a line on stderr, kept current. */
  onStarting?: (s: StartingInfo) => void;
}

/** Nothing usable answered: at `url` (a request got no answer), or for the workspace (`url` undefined). */
export class NoServerError extends Error {
  constructor(
    readonly url: string | undefined,
    message: string,
  ) {
    super(message);
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
  if (probe.state === 'unresponsive') return `pid ${probe.info.pid} is alive but does not answer (${probe.reason}); it may be shutting down, or stalled`;
  return `pid ${probe.info.pid} on port ${probe.info.port}`;
}

export async function connectServer(opts: ConnectOptions): Promise<ServerConnection> {
  if (opts.serverUrl) {
    // Never started from here; but the workspace's own daemon at that URL is talked to as discovered: with its token.
    const url = opts.serverUrl.replace(/\/+$/, '');
    const own = workspaceDaemonAt(url, opts.workspace);
    return own ? { url: own.url, root: own.root, info: own.info, started: false } : { url, started: false };
  }
  const root = workspaceRootFor(opts.workspace);
  let probe = await probeServer(root);
  if (probe.state === 'unresponsive') probe = await waitWhileUnresponsive(root, probe, opts);
  if (probe.state === 'running') return connection(root, probe, false);
  if (opts.autoStart === false) {
    throw new NoServerError(
      undefined,
      `No server running for ${root}: ${describeProbe(probe)}. Any command that needs the server starts it ('platform start'), or run 'platform serve'.`,
    );
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
 * How far a starting daemon got, on stderr: one line kept current on a terminal; elsewhere (a log, CI) the first
 * and then one every 10 s, so a long replay is seen without a line a quarter second.
 */
function startingLine(): { show: (s: StartingInfo) => void; end: () => void } {
  const tty = process.stderr.isTTY === true;
  let open = false;
  let last = 0;
  return {
    show: (s) => {
      const text = `platform: the workspace server is starting, ${startingWords(s)}`;
      if (tty) {
        process.stderr.write(`\r\x1b[K${text}`);
        open = true;
      } else if (Date.now() - last >= 10_000) {
        last = Date.now();
        process.stderr.write(`${text}\n`);
      }
    },
    end: () => {
      if (open) process.stderr.write('\n');
      open = false;
    },
  };
}

function announceWaiting(probe: UnresponsiveProbe, waitMs: number): void {
  process.stderr.write(
    `platform: the workspace server (pid ${probe.info.pid}) does not answer (${probe.reason}); it may be shutting down or ` +
      `busy: waiting up to ${Math.round(waitMs / 1000)} s for it to answer or exit\n`,
  );
}

/**
 * Polls a daemon of this workspace that is alive but does not answer, until it answers again or exits (or its
 * server.json changes): returns what the probe then finds. Never removes its server.json; throws when it stays
 * silent for the whole wait.
 */
async function waitWhileUnresponsive(
  root: string,
  first: UnresponsiveProbe,
  opts: ConnectOptions,
): Promise<Exclude<Probe, { state: 'unresponsive' }>> {
  const waitMs = opts.unresponsiveWaitMs ?? UNRESPONSIVE_WAIT_MS;
  (opts.onWaiting ?? announceWaiting)(first, waitMs);
  const deadline = Date.now() + waitMs;
  let probe: Probe = first;
  while (probe.state === 'unresponsive') {
    if (Date.now() >= deadline) {
      const pid = probe.info.pid;
      throw new NoServerError(
        undefined,
        `The server pid ${pid} of this workspace does not answer (${probe.reason}) after ${Math.round(waitMs / 1000)} s; ` +
          `see ${serverLogPath(root)}; 'platform stop' or 'kill ${pid}'.`,
      );
    }
    await sleep(250);
    probe = await probeServer(root);
  }
  return probe;
}

/**
 * Check-and-start under the daemon lock. The holder re-checks (a racing client may have just started a server),
 * clears a stale server.json (stopping the old process first if it is this workspace's daemon of another
 * version), starts the daemon and waits for it. The others poll until a server answers or the lock frees up.
 */
async function ensureServer(root: string, opts: ConnectOptions): Promise<ServerConnection> {
  const timeoutMs = opts.startTimeoutMs ?? startTimeoutMs();
  // The holder may need to wait for or stop an old server (up to 40 s) and then start one.
  let deadline = Date.now() + timeoutMs + (opts.unresponsiveWaitMs ?? UNRESPONSIVE_WAIT_MS) + 20_000;
  let replayedSeen = '';
  for (;;) {
    const lock = tryAcquireDaemonLock(root);
    if (lock) {
      try {
        let probe = await probeServer(root);
        if (probe.state === 'unresponsive') probe = await waitWhileUnresponsive(root, probe, opts);
        if (probe.state === 'running') return connection(root, probe, false);
        if (probe.state === 'stale') await clearStale(root, probe);
        const shown = opts.onStarting ? undefined : startingLine();
        const onStarting = opts.onStarting ?? shown!.show;
        try {
          // One is starting already (its client gone, or `platform serve` by hand): waited for, not a second spawned
          // to fail on the log's lock.
          const starting = liveStartingInfo(root);
          if (starting) return connection(root, (await waitForStartingDaemon(root, starting.pid, timeoutMs, onStarting)).probe, false);
          const started = await startDaemon(root, timeoutMs, onStarting);
          // The progress line ends before the next one begins.
          shown?.end();
          (opts.onStarted ?? announce)(started.probe.info);
          return connection(root, started.probe, true);
        } finally {
          shown?.end();
        }
      } finally {
        lock.release();
      }
    }
    await sleep(100);
    const probe = await probeServer(root);
    if (probe.state === 'running') return connection(root, probe, false);
    // The holder's daemon replays a long log: waited for as long as it goes on.
    const starting = liveStartingInfo(root);
    const progress = starting ? startingProgress(starting) : replayedSeen;
    if (progress !== replayedSeen) {
      replayedSeen = progress;
      deadline = Math.max(deadline, Date.now() + timeoutMs);
    }
    if (Date.now() >= deadline) {
      const holder = lockHolder(root);
      throw new DaemonStartError(
        `Timed out waiting for ${holder ? `another platform client (pid ${holder.pid})` : 'another platform client'} to start the ` +
          `workspace server (it holds ${root}/.platform/daemon.lock). See ${serverLogPath(root)}.`,
      );
    }
  }
}

/**
 * Removes the server.json a stale probe read: only if it still names the same pid (a newer server's file stays),
 * or whatever it holds when it could not be read. Never signals any process.
 */
export function removeStaleServerInfo(root: string, probe: StaleProbe): void {
  if (probe.info) removeServerInfo(root, probe.info.pid);
  else rmSync(serverInfoPath(root), { force: true });
}

async function clearStale(root: string, probe: StaleProbe): Promise<void> {
  if (probe.stopFirst && probe.info) {
    process.stderr.write(`platform: stopping the workspace server pid ${probe.info.pid}: ${probe.reason}\n`);
    await terminateServer(probe.info.pid);
  }
  removeStaleServerInfo(root, probe);
}
