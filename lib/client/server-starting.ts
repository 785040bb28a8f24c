/**
 * `.platform/server-starting.json`: a daemon that is starting, and how far it got while it replays its event log
 * (after an upgrade, or a snapshot lost: a million events take ~30 s here). Written by the client that spawns it as soon as
 * it has its pid, by the daemon as it begins and every 250 ms of a replay, removed once its state is read (it then holds the log: any other such file is stale);
 * read by a client waiting for it, which shows it and waits as long as it goes on (or, holding the start lock, waits
 * for it rather than start a second daemon), and by `platform status`.
 */
import { existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { groupDigits } from '../group-digits.js';
import type { StartProgress } from '../state/store-start.js';
import { isPidAlive } from '../system/pid-liveness.js';
import { replaceFile } from './replace-file.js';
import { platformDir } from './workspace.js';

export interface StartingInfo extends StartProgress {
  pid: number;
  started_at: string;
}

function startingInfoPath(root: string): string {
  return join(platformDir(root), 'server-starting.json');
}

export function writeStartingInfo(root: string, info: StartingInfo): void {
  replaceFile(startingInfoPath(root), `${JSON.stringify(info)}\n`);
}

/**
 * A start under way: news whose pid is alive and that is recent. A live start writes every 250 ms while it replays,
 * and reads a snapshot in seconds: news older than STALE_MS is of a daemon killed while it started, whose pid another
 * process may have taken since.
 */
export function liveStartingInfo(root: string, now = Date.now()): StartingInfo | undefined {
  const info = readStartingInfo(root);
  if (!info || !isPidAlive(info.pid) || !isServeProcess(info.pid)) return undefined;
  try {
    return now - statSync(startingInfoPath(root)).mtimeMs <= STALE_MS ? info : undefined;
  } catch {
    return undefined;
  }
}

const STALE_MS = 30_000;

/** Whether `pid` runs `platform serve` (its command line, where /proc tells; elsewhere taken on trust). */
function isServeProcess(pid: number): boolean {
  try {
    const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    return args.includes('serve');
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'ENOENT' || !existsSync('/proc/self');
  }
}

/** undefined when absent, unreadable or not of this shape (a half-written file is none). */
export function readStartingInfo(root: string): StartingInfo | undefined {
  try {
    const v = JSON.parse(readFileSync(startingInfoPath(root), 'utf8')) as Partial<StartingInfo>;
    if (typeof v.pid !== 'number' || typeof v.events_replayed !== 'number' || typeof v.events_to_replay !== 'number') return undefined;
    return {
      pid: v.pid,
      started_at: String(v.started_at ?? ''),
      events_replayed: v.events_replayed,
      events_to_replay: v.events_to_replay,
      snapshot_unused: typeof v.snapshot_unused === 'string' ? v.snapshot_unused : null,
      ...(typeof v.snapshot_bytes === 'number' && typeof v.snapshot_bytes_read === 'number'
        ? { snapshot_bytes: v.snapshot_bytes, snapshot_bytes_read: v.snapshot_bytes_read, snapshot_bytes_decoded: typeof v.snapshot_bytes_decoded === 'number' ? v.snapshot_bytes_decoded : 0 }
        : {}),
      ...(typeof v.snapshot_records === 'number' && typeof v.snapshot_records_read === 'number' ? { snapshot_records: v.snapshot_records, snapshot_records_read: v.snapshot_records_read } : {}),
      ...(typeof v.snapshot_indexes === 'number' && typeof v.snapshot_indexes_built === 'number' ? { snapshot_indexes: v.snapshot_indexes, snapshot_indexes_built: v.snapshot_indexes_built } : {}),
    };
  } catch {
    return undefined;
  }
}

/**
 * Written by the client that spawns a daemon, the moment it has its pid: from then on `platform stop` finds the start
 * (a daemon says so itself only once node has loaded it, ~0.3 s later). `spawned_by` marks the file as the client's:
 * until the daemon writes its own, its signal handlers may not be set, and a SIGTERM would kill it mid-start.
 */
export function writeSpawnedInfo(root: string, pid: number): void {
  const info = { pid, started_at: new Date().toISOString(), events_replayed: 0, events_to_replay: 0, snapshot_unused: null, spawned_by: process.pid };
  try {
    // Not over the daemon's own news, had it been quicker than this client.
    if (readStartingInfo(root)?.pid !== pid) replaceFile(startingInfoPath(root), `${JSON.stringify(info)}\n`);
  } catch {
    // Only news: the daemon writes its own as it begins.
  }
}

/** Whether the news of `pid`'s start is its own (it handles signals by then), not its spawning client's. */
export function startAnnounced(root: string, pid: number): boolean {
  try {
    const v = JSON.parse(readFileSync(startingInfoPath(root), 'utf8')) as { pid?: unknown; spawned_by?: unknown };
    return v.pid === pid && v.spawned_by === undefined;
  } catch {
    return false;
  }
}

/** Removes the file only if it is this process's. */
export function removeStartingInfo(root: string, pid: number): void {
  if (readStartingInfo(root)?.pid === pid) rmSync(startingInfoPath(root), { force: true });
}

/** Removes the file whoever wrote it: for the daemon that holds the log (any other start's news is stale). */
export function clearStartingInfo(root: string): void {
  try {
    rmSync(startingInfoPath(root), { force: true });
  } catch {
    // Not a file (nothing a daemon wrote): left as it is; it is read as no news.
  }
}

/** How far a start got, to tell news from the same again: the log replayed, or (before that) the snapshot read. */
export function startingProgress(s: StartingInfo): string {
  return `${s.events_replayed} ${s.snapshot_bytes_read ?? 0} ${s.snapshot_bytes_decoded ?? 0} ${s.snapshot_records_read ?? 0} ${s.snapshot_indexes_built ?? 0}`;
}

/** `replaying its event log (no snapshot used: damaged): 120,000 of 1,000,000 events` */
export function startingWords(s: StartingInfo): string {
  if (s.events_to_replay === 0) {
    const bytes = s.snapshot_bytes ?? 0;
    if (bytes === 0) return 'reading its state';
    // Records and indexes are news only of an image of another version or a compaction base: said as such.
    if (s.snapshot_indexes) return `building its state from its snapshot's records (${megabytes(bytes)} MB): ${s.snapshot_indexes_built ?? 0} of ${s.snapshot_indexes} steps`;
    if (s.snapshot_records) return `reading its snapshot's records (${megabytes(bytes)} MB): ${groupDigits(s.snapshot_records_read ?? 0)} of ${groupDigits(s.snapshot_records)}`;
    const decoded = s.snapshot_bytes_decoded ?? 0;
    return decoded > 0
      ? `reading its snapshot (${megabytes(bytes)} MB): ${megabytes(decoded)} MB decoded`
      : `reading its snapshot: ${megabytes(s.snapshot_bytes_read ?? 0)} of ${megabytes(bytes)} MB`;
  }
  const why = s.snapshot_unused === null ? 'from the snapshot' : `no snapshot used: ${s.snapshot_unused === 'missing' ? 'there is none' : s.snapshot_unused}`;
  return `replaying its event log (${why}): ${groupDigits(s.events_replayed)} of ${groupDigits(s.events_to_replay)} events`;
}

function megabytes(bytes: number): string {
  return (bytes / 1e6).toFixed(1);
}
