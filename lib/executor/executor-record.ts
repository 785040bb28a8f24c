/**
 * Which executor a daemon hands runs to, kept in `.platform/executor.json`, and what a daemon that starts does with
 * it. Runs outlive their daemon (supervised local runs, runs on Redis workers), so a daemon started after the
 * configured executor changed may find runs in flight on another: it must follow them through the executor they were
 * placed on, not declare them lost (a Redis without their job) nor adopt a worker's job as a local one (the job ran
 * twice: QA, session 34). The record is written before the daemon hands over or follows any run, and a daemon only
 * takes another executor than the recorded one when no run is in flight: so every run in flight is on the recorded
 * executor. Where there is no record (a workspace from before it was kept, a log written by an embedder's Platform),
 * the runs' `worker` says local or a queue's worker, but not which Redis.
 */
import { closeSync, fsyncSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { isRedisUrl, redacted } from './redis/redis-url.js';
import { ranHere } from './executor-port.js';
import { someNamed } from '../some-named.js';

export const EXECUTOR_RECORD_FILE = 'executor.json';
/** The queue a daemon's Redis executor uses (redis-names.ts's DEFAULT_QUEUE; not imported: that loads ioredis). */
export const DEFAULT_REDIS_QUEUE = 'platform-runs';

export type ExecutorSpec = { kind: 'local' } | { kind: 'in-process' } | { kind: 'redis'; url: string; queue: string };

/** What `--executor`, $PLATFORM_EXECUTOR or platform.json's `"executor"` say, as a spec. */
export function specOf(choice: string): ExecutorSpec {
  if (choice === 'local' || choice === 'in-process') return { kind: choice };
  return { kind: 'redis', url: choice, queue: DEFAULT_REDIS_QUEUE };
}

/** For a person: `local`, `in-process`, or the Redis URL (password hidden) and queue. */
export function describeExecutor(spec: ExecutorSpec): string {
  return spec.kind === 'redis' ? `${redacted(spec.url)} queue ${spec.queue}` : spec.kind;
}

/** The Redis a URL names, whatever way it is written: host, port, db, TLS and user (not the password). */
function redisIdentity(url: string): string {
  try {
    const u = new URL(url);
    const db = Number(u.pathname.replace(/^\//, '') || '0');
    return `${u.protocol}//${decodeURIComponent(u.username)}@${u.hostname.toLowerCase()}:${u.port || '6379'}/${Number.isInteger(db) ? db : u.pathname}`;
  } catch {
    return url;
  }
}

export function sameExecutor(a: ExecutorSpec, b: ExecutorSpec): boolean {
  if (a.kind !== b.kind) return false;
  if (a.kind === 'redis' && b.kind === 'redis') return a.queue === b.queue && redisIdentity(a.url) === redisIdentity(b.url);
  return true;
}

/** Whether runs the log records on `worker` were placed on a queue's worker (or wait in one), not on this machine. */
export function placedOnQueue(worker: string): boolean {
  return !ranHere(worker);
}

/** Whether the runs an executor of this kind places outlive the daemon (in-process runs end with it). */
function outlivesDaemon(spec: ExecutorSpec): boolean {
  return spec.kind !== 'in-process';
}

/**
 * The record, or undefined when there is none (a log from before it was kept). One that cannot be read or is not a
 * record is an error naming it: taken for none, the configured executor would be guessed for runs placed elsewhere,
 * and they declared lost and run again while they still run.
 */
export function readExecutorRecord(platformDir: string): ExecutorSpec | undefined {
  const path = join(platformDir, EXECUTOR_RECORD_FILE);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new Error(`${path} (where the job runs in flight were placed) cannot be read: ${(err as Error).message}`);
  }
  let raw: Record<string, unknown> | undefined;
  try {
    const v: unknown = JSON.parse(text);
    raw = typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : undefined;
  } catch {
    raw = undefined;
  }
  if (raw?.kind === 'local' || raw?.kind === 'in-process') return { kind: raw.kind };
  if (raw?.kind === 'redis' && typeof raw.url === 'string' && isRedisUrl(raw.url) && typeof raw.queue === 'string') return { kind: 'redis', url: raw.url, queue: raw.queue };
  throw new Error(
    `${path} (where the job runs in flight were placed) is damaged: ${JSON.stringify(text.slice(0, 200))}. Write the executor they are on into it ` +
      `({"kind": "redis", "url": "redis://host:port/db", "queue": "platform-runs"}, or {"kind": "local"}), or delete it to have the configured executor taken for them`,
  );
}

/** Written whole (a temporary file renamed into place, fsynced), before any run is handed over. */
export function writeExecutorRecord(platformDir: string, spec: ExecutorSpec, pid = process.pid): void {
  const path = join(platformDir, EXECUTOR_RECORD_FILE);
  const tmp = `${path}.${pid}.tmp`;
  const fd = openSync(tmp, 'w', 0o600);
  try {
    writeSync(fd, `${JSON.stringify({ ...spec, since: new Date().toISOString(), pid })}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
  try {
    const dir = openSync(platformDir, 'r');
    try {
      fsyncSync(dir);
    } finally {
      closeSync(dir);
    }
  } catch {
    // A directory that cannot be fsynced (some filesystems): the rename stands.
  }
}

export interface InFlightRun {
  job_run_id: string;
  worker: string;
}

export type ExecutorDecision =
  /** Use `use`; `held` when it is not the configured one because runs in flight were placed on it (their ids). */
  | { use: ExecutorSpec; held?: { runs: string[] }; assumed?: string }
  /** Start refused: no executor this daemon can name follows the runs in flight. */
  | { refused: string };

/**
 * The executor a daemon starting now uses: the configured one, unless runs in flight (`running`: the log's running
 * runs) were placed on another, which it then keeps until they have ended.
 */
export function decideExecutor(configured: ExecutorSpec, recorded: ExecutorSpec | undefined, running: readonly InFlightRun[]): ExecutorDecision {
  if (running.length === 0) return { use: configured };
  const onQueue = running.filter((r) => placedOnQueue(r.worker)).map((r) => r.job_run_id);
  const local = running.filter((r) => !placedOnQueue(r.worker)).map((r) => r.job_run_id);
  let placed: ExecutorSpec;
  let assumed: string | undefined;
  if (onQueue.length > 0) {
    if (recorded?.kind === 'redis') placed = recorded;
    else if (configured.kind === 'redis') {
      // A log from before the record was kept: its runs name a queue's worker, not which Redis. The configured one is
      // the best guess (what every daemon before this one used).
      placed = configured;
      assumed = `job runs ${someNamed(onQueue)} were placed on a Redis queue before the daemon recorded which; taken to be the configured ${describeExecutor(configured)}`;
    } else {
      return {
        refused:
          `${onQueue.length} job run${onQueue.length === 1 ? '' : 's'} (${someNamed(onQueue)}) ${onQueue.length === 1 ? 'is' : 'are'} on Redis workers, placed by a daemon that did not record which Redis, ` +
          `and the executor configured now is ${describeExecutor(configured)}, which cannot follow them: following them locally would take a worker's job as a local run, ` +
          `and declaring them lost would run them again while they may still run. Start the daemon on the Redis they were placed on ` +
          `("executor": "redis://host:port/db" in platform.json, or $PLATFORM_EXECUTOR for the command that starts it) to follow them to their end; ` +
          `a Redis that no longer has their jobs records them lost, and they are built again`,
      };
    }
  } else {
    // Runs of an in-process daemon ended with it: nothing to keep, but an executor that can look at this machine's
    // runs (a Redis one cannot) must record them lost, or they would stay running for ever.
    if (recorded?.kind === 'in-process' && configured.kind !== 'redis') return { use: configured };
    placed = { kind: 'local' };
  }
  if (sameExecutor(placed, configured) || !outlivesDaemon(placed)) return { use: configured, ...(assumed ? { assumed } : {}) };
  // Runs placed on both (a log an embedder wrote with two executors): the Redis ones decide, and the orchestrator
  // leaves the others as they are (Executor.canFollow), saying so.
  return { use: placed, held: { runs: onQueue.length > 0 ? onQueue : local }, ...(assumed ? { assumed } : {}) };
}
