/**
 * Starts the workspace's daemon in the background: `node <repo>/bin/platform serve --port 0 -C <root>`, detached
 * (its own session, so Ctrl-C on the client leaves it alone), stdout and stderr appended to `.platform/server.log`,
 * then waits until a server.json appears that answers for this workspace and version. Call it holding the
 * daemon lock (see daemon-lock.ts), so that two clients never start two servers.
 */
import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, statSync, watch, writeSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseDuration } from '../duration.js';
import { isPidAlive } from '../system/pid-liveness.js';
import { fileHolder } from '../system/file-holder.js';
import { VERSION } from '../version.js';
import { probeServer, type Probe } from './server-probe.js';
import { readStartingInfo, removeStartingInfo, startingProgress, writeSpawnedInfo, type StartingInfo } from './server-starting.js';
import { platformDir } from './workspace.js';

export const DEFAULT_START_TIMEOUT_MS = 15_000;

export class DaemonStartError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DaemonStartError';
  }
}

/** The daemon being started was stopped on purpose before it was ready: nothing was carried out (exit 75: try again). */
export class DaemonStoppedWhileStartingError extends DaemonStartError {
  readonly exitCode = 75;
}

export function serverLogPath(root: string): string {
  return join(platformDir(root), 'server.log');
}

/** `PLATFORM_START_TIMEOUT` (a duration: 30s, 2m) when set, else 15 s. */
export function startTimeoutMs(): number {
  const env = process.env.PLATFORM_START_TIMEOUT;
  return env ? parseDuration(env, 'PLATFORM_START_TIMEOUT') : DEFAULT_START_TIMEOUT_MS;
}

/** The CLI entry of this installation: bin/platform next to dist/. */
function platformBin(): string {
  const bin = fileURLToPath(new URL('../../../bin/platform', import.meta.url));
  if (existsSync(bin)) return bin;
  if (process.argv[1] && existsSync(process.argv[1])) return process.argv[1];
  throw new DaemonStartError(`Cannot find the platform executable to start the server (looked for ${bin}).`);
}

/** The last `n` lines the log got since byte `from` (this start's output, not an older server's). */
export function logTail(path: string, from = 0, n = 20): string {
  try {
    const text = readFileSync(path).subarray(from).toString('utf8');
    const lines = text.split('\n').filter((l) => l.trim() !== '');
    return lines.slice(-n).map((l) => `  ${l}`).join('\n');
  } catch {
    return '';
  }
}

export interface StartedDaemon {
  pid: number;
  probe: Extract<Probe, { state: 'running' }>;
}

/**
 * Starts the workspace's daemon and waits until it answers. The wait is `timeoutMs` without news: a daemon that
 * replays a long log (server-starting.ts) is waited for as long as it goes on, each step of it told to `onStarting`.
 */
export async function startDaemon(root: string, timeoutMs = startTimeoutMs(), onStarting?: (s: StartingInfo) => void): Promise<StartedDaemon> {
  const logPath = serverLogPath(root);
  const from = existsSync(logPath) ? statSync(logPath).size : 0;
  const fd = openSync(logPath, 'a');
  let child;
  try {
    writeSync(fd, `--- ${new Date().toISOString()} platform ${VERSION}: starting the server (for client pid ${process.pid}) ---\n`);
    child = spawn(process.execPath, [platformBin(), 'serve', '--port', '0', '--require-token', '-C', root], {
      cwd: root,
      detached: true,
      stdio: ['ignore', fd, fd],
      env: process.env,
    });
  } finally {
    closeSync(fd);
  }
  let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  let spawnError: Error | undefined;
  child.once('exit', (code, signal) => (exited = { code, signal }));
  child.once('error', (err) => (spawnError = err));
  child.unref();
  if (child.pid) writeSpawnedInfo(root, child.pid);

  const seeLog = (): string => {
    const tail = logTail(logPath, from);
    return `See ${logPath}${tail ? `; its last lines:\n${tail}` : ' (it is empty).'}`;
  };
  const ended = (): DaemonStartError | undefined => {
    if (spawnError) return new DaemonStartError(`Could not start the platform server: ${spawnError.message}`);
    if (!exited) return undefined;
    // Ours, had it ended before it wrote its own (its log is held by another daemon, say): no start is under way.
    if (child.pid) removeStartingInfo(root, child.pid);
    const how = exited.signal ? `was killed by ${exited.signal}` : `exited with code ${exited.code}`;
    const tail = logTail(logPath, from);
    // Stopped on purpose (platform stop, a signal) while it replayed its log: no failure, and the command did not run.
    if (exited.code === 0 && /stopped by \S+ while starting/.test(tail)) {
      return new DaemonStoppedWhileStartingError(`The platform server for ${root} was stopped while it started (platform stop, or a signal), so this command was not carried out; run it again to start a new one. ${seeLog()}`);
    }
    // LevelDB's LOCK: a server of this workspace runs although no server.json names it (the file was deleted).
    const hint = /\bLOCK\b|held by another process/.test(tail) ? `\n${logHolderHint(root)}` : '';
    return new DaemonStartError(`The platform server for ${root} ${how} before it was ready. ${seeLog()}${hint}`);
  };
  return waitForStart(root, child.pid ?? 0, timeoutMs, onStarting, ended, seeLog);
}

/**
 * A daemon of this workspace that another client started and that is still starting (server-starting.ts): waited
 * for as a client waits for its own, rather than a second one spawned to fail on the log's lock.
 */
export async function waitForStartingDaemon(root: string, pid: number, timeoutMs = startTimeoutMs(), onStarting?: (s: StartingInfo) => void): Promise<StartedDaemon> {
  const seeLog = (): string => `See ${serverLogPath(root)}.`;
  const ended = (): DaemonStartError | undefined =>
    isPidAlive(pid) ? undefined : new DaemonStartError(`The platform server for ${root} (pid ${pid}) that was starting ended before it answered. ${seeLog()}`);
  return waitForStart(root, pid, timeoutMs, onStarting, ended, seeLog);
}

/**
 * Until a server of this workspace answers (normally `pid`, starting): `timeoutMs` without news of `pid`'s start
 * fails, as does its end (`ended` says how). A replay of a long log is told to `onStarting` as it goes.
 */
async function waitForStart(
  root: string,
  pid: number,
  timeoutMs: number,
  onStarting: ((s: StartingInfo) => void) | undefined,
  ended: () => DaemonStartError | undefined,
  seeLog: () => string,
): Promise<StartedDaemon> {
  let deadline = Date.now() + timeoutMs;
  // How far `pid` said it got (startingProgress), '' before its first news.
  let seen = '';
  // The server renames server.json into place once it listens: that wakes the wait at once, where a poll every
  // 50 ms cost a start 25 ms on average. The poll stays, for a file system without events.
  const changed = fileChanges(platformDir(root), 'server.json');
  try {
    for (;;) {
      const probe = await probeServer(root);
      // Any live server of this workspace and version will do: normally the one awaited.
      if (probe.state === 'running') return { pid: pid || probe.info.pid, probe };
      const end = ended();
      if (end) throw end;
      const starting = readStartingInfo(root);
      // News: more of the log replayed, or of the snapshot read (a large one on a busy machine takes a while).
      const progress = starting === undefined ? '' : startingProgress(starting);
      if (starting !== undefined && starting.pid === pid && progress !== seen) {
        seen = progress;
        deadline = Date.now() + timeoutMs;
        // Said only of a replay or a long read: a start that reads its state and goes says nothing.
        if (starting.events_to_replay > 0 || (starting.snapshot_bytes ?? 0) > 0) onStarting?.(starting);
      }
      if (Date.now() >= deadline) {
        const still = seen !== '' ? `went ${Math.round(timeoutMs / 1000)} s without news of its start` : `did not answer within ${Math.round(timeoutMs / 1000)} s`;
        throw new DaemonStartError(`The platform server for ${root} (pid ${pid}) ${still} (set PLATFORM_START_TIMEOUT to wait longer). ${seeLog()}`);
      }
      await changed.next(50);
    }
  } finally {
    changed.close();
  }
}

/** Resolves `next(ms)` at the first change of `dir`/`name` since the last call, or after `ms`. */
function fileChanges(dir: string, name: string): { next(ms: number): Promise<void>; close(): void } {
  let seen = false;
  let wake: (() => void) | undefined;
  let watcher: ReturnType<typeof watch> | undefined;
  try {
    watcher = watch(dir, { persistent: false }, (_event, file) => {
      // The server's log is appended in the same directory: its lines are not news.
      if (file !== null && file !== name) return;
      seen = true;
      wake?.();
    });
    watcher.on('error', () => watcher?.close());
  } catch {
    // No events here (or no directory yet): the poll alone.
  }
  return {
    next: async (ms) => {
      if (seen) {
        seen = false;
        return;
      }
      const timer = new AbortController();
      await Promise.race([sleep(ms, undefined, { signal: timer.signal }).catch(() => undefined), new Promise<void>((r) => (wake = r))]);
      timer.abort();
      wake = undefined;
      seen = false;
    },
    close: () => watcher?.close(),
  };
}

/** Who holds the workspace's event log, when a daemon could not open it: a server whose server.json went, or an app. */
function logHolderHint(root: string): string {
  const holder = fileHolder(join(platformDir(root), 'bel', 'LOCK'));
  if (!holder) {
    return `Another process holds this workspace's event log: a server whose .platform/server.json was removed, or an application that embeds platform. Stop it (a server: pgrep -af 'platform serve') and try again.`;
  }
  const what = /\bplatform\b.*\bserve\b/.test(holder.command)
    ? 'a platform server no server.json names (its file was removed, or it serves the workspace under another path)'
    : 'a program that opened it (an application that embeds platform, or a platform command)';
  return `Another process holds this workspace's event log: pid ${holder.pid}, ${what}: ${holder.command || '(its command line cannot be read)'}. Stop it (kill ${holder.pid}) and try again.`;
}
