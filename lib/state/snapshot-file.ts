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
  const hash = createHash('sha256');
  for (const name of readdirSync(dir).filter((n) => n.endsWith('.js')).sort()) {
    hash.update(name).update(readFileSync(join(dir, name)));
  }
  return hash.digest('hex').slice(0, 16);
}

interface SnapshotFile {
  version: string;
  snapshot: Snapshot;
}

export async function readSnapshot(path: string, version: string, latestEventId: number): Promise<Snapshot | undefined> {
  let parsed: SnapshotFile;
  try {
    parsed = JSON.parse(await readFile(path, 'utf8')) as SnapshotFile;
  } catch {
    return undefined;
  }
  const snap = parsed?.snapshot;
  if (parsed?.version !== version || snap?.format !== SNAPSHOT_FORMAT) return undefined;
  if (!Number.isSafeInteger(snap.last_event_id) || snap.last_event_id < 0 || snap.last_event_id > latestEventId) return undefined;
  return snap;
}

export async function writeSnapshot(path: string, version: string, snapshot: Snapshot): Promise<void> {
  const tmp = `${path}.${process.pid}.tmp`;
  const file: SnapshotFile = { version, snapshot };
  await writeFile(tmp, JSON.stringify(file));
  await rename(tmp, path);
}
