/**
 * `.platform/server-starting.json`: how far a daemon that is starting got, while it replays its event log (after an
 * upgrade, or a snapshot lost: a million events take ~30 s here). Written by the daemon every 250 ms of a start
 * that takes longer than that, removed once its state is read; read by a client waiting for it, which shows it and waits
 * as long as it goes on, and by `platform status`.
 */
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { StartProgress } from '../state/store-start.js';
import { platformDir } from './workspace.js';
import { groupDigits } from '../group-digits.js';
import { isPidAlive } from '../system/pid-liveness.js';

export interface StartingInfo extends StartProgress {
  pid: number;
  started_at: string;
}

function startingInfoPath(root: string): string {
  return join(platformDir(root), 'server-starting.json');
}

export function writeStartingInfo(root: string, info: StartingInfo): void {
  const path = startingInfoPath(root);
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(info)}\n`);
  renameSync(tmp, path);
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
    };
  } catch {
    return undefined;
  }
}

/** Removes the file only if it is this process's. */
export function removeStartingInfo(root: string, pid: number): void {
  if (readStartingInfo(root)?.pid === pid) rmSync(startingInfoPath(root), { force: true });
}

/** Removes a file left by a daemon killed while it started (its pid gone): a live one's stays. */
export function removeStaleStartingInfo(root: string): void {
  const info = readStartingInfo(root);
  if (info && !isPidAlive(info.pid)) rmSync(startingInfoPath(root), { force: true });
}

/** `replaying its event log (no snapshot used: damaged): 120,000 of 1,000,000 events` */
export function startingWords(s: StartingInfo): string {
  const why = s.snapshot_unused === null ? 'from the snapshot' : `no snapshot used: ${s.snapshot_unused === 'missing' ? 'there is none' : s.snapshot_unused}`;
  return `replaying its event log (${why}): ${groupDigits(s.events_replayed)} of ${groupDigits(s.events_to_replay)} events`;
}
