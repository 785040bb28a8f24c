/**
 * The snapshot on disk: `.platform/snapshot.json`, written atomically. A snapshot is only a shortcut: one
 * that is unreadable, of another format or program version, or ahead of the log is ignored (a full replay
 * follows), never trusted.
 */
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SNAPSHOT_FORMAT, type Snapshot } from './snapshot.js';

/**
 * What a snapshot is valid for: a hash of the state stage's own compiled code (reduce and its records). A
 * program version would not do: the fold can change between two builds of the same version.
 */
export function stateCodeFingerprint(): string {
  const dir = dirname(fileURLToPath(import.meta.url));
  const files = readdirSync(dir).filter((n) => n.endsWith('.js')).sort();
  // Run from sources (no compiled files here), there is nothing to vouch for a snapshot: none is trusted.
  if (files.length === 0) return '';
  const hash = createHash('sha256');
  for (const name of files) hash.update(name).update(readFileSync(join(dir, name)));
  return hash.digest('hex').slice(0, 16);
}

interface SnapshotFile {
  version: string;
  /** The timestamp of the event at `snapshot.last_event_id`: a snapshot of another log of the same length fails it. */
  last_event_timestamp: number;
  snapshot: Snapshot;
}

/** The log as far as a snapshot needs to know it: its newest id, and the timestamp of any event. */
export interface LogProbe {
  latestId(): number;
  timestampOf(id: number): Promise<number | undefined>;
}

export async function readSnapshot(path: string, version: string, log: LogProbe): Promise<Snapshot | undefined> {
  if (version === '') return undefined;
  let parsed: SnapshotFile;
  try {
    parsed = JSON.parse(await readFile(path, 'utf8')) as SnapshotFile;
  } catch {
    return undefined;
  }
  const snap = parsed?.snapshot;
  if (parsed?.version !== version || snap?.format !== SNAPSHOT_FORMAT) return undefined;
  if (!Number.isSafeInteger(snap.last_event_id) || snap.last_event_id < 0 || snap.last_event_id > log.latestId()) return undefined;
  if (snap.last_event_id > 0 && (await log.timestampOf(snap.last_event_id)) !== parsed.last_event_timestamp) return undefined;
  return snap;
}

export async function writeSnapshot(path: string, version: string, snapshot: Snapshot, lastEventTimestamp: number): Promise<void> {
  if (version === '') return;
  const tmp = `${path}.${process.pid}.tmp`;
  const file: SnapshotFile = { version, last_event_timestamp: lastEventTimestamp, snapshot };
  await writeFile(tmp, JSON.stringify(file));
  await rename(tmp, path);
}
