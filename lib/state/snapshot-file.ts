/**
 * The snapshot on disk: `.platform/snapshot.jsonl`, written atomically (a temporary file, fsynced, renamed). JSON
 * lines: a header, one record a line, an end line with the count. Written a chunk of lines at a time, each an
 * asynchronous write, so a snapshot of a million records never holds the event loop (and never builds one string
 * larger than a chunk); read back as a stream of lines. A snapshot is only a shortcut: one that is unreadable,
 * truncated, of another format or program version, or ahead of the log is ignored (a full replay follows), never
 * trusted.
 */
import { createHash } from 'node:crypto';
import { createReadStream, readFileSync, readdirSync } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { BuildState } from './build-state.js';
import { SNAPSHOT_FORMAT, addLine, snapshotFromLines, snapshotLines, type Snapshot, type SnapshotLine } from './snapshot.js';

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

/** The first line of a snapshot file. */
export interface SnapshotHeader {
  version: string;
  format: number;
  last_event_id: number;
  /** The timestamp of the event at `last_event_id`: a snapshot of another log of the same length fails it. */
  last_event_timestamp: number;
}

/** The log as far as a snapshot needs to know it: its newest id, and the timestamp of any event. */
export interface LogProbe {
  latestId(): number;
  timestampOf(id: number): Promise<number | undefined>;
}

/** Lines written with one write call: large enough to be cheap, small enough never to hold the loop long. */
const LINES_PER_WRITE = 2000;

export async function readSnapshot(path: string, version: string, log: LogProbe): Promise<Snapshot | undefined> {
  if (version === '') return undefined;
  let header: SnapshotHeader | undefined;
  let snap: Snapshot | undefined;
  let ended = false;
  let count = 0;
  const input = createReadStream(path, { encoding: 'utf8' });
  try {
    for await (const text of createInterface({ input, crlfDelay: Infinity })) {
      if (ended) return undefined;
      if (!header) {
        header = JSON.parse(text) as SnapshotHeader;
        if (header?.version !== version || header.format !== SNAPSHOT_FORMAT) return undefined;
        snap = snapshotFromLines(header.last_event_id, []);
        continue;
      }
      const line = JSON.parse(text) as SnapshotLine | ['end', number];
      if (line[0] === 'end') {
        if (line[1] !== count) return undefined;
        ended = true;
        continue;
      }
      addLine(snap!, line);
      count++;
    }
  } catch {
    return undefined;
  } finally {
    input.destroy();
  }
  if (!header || !snap || !ended) return undefined;
  const id = header.last_event_id;
  if (!Number.isSafeInteger(id) || id < 0 || id > log.latestId()) return undefined;
  if (id > 0 && (await log.timestampOf(id)) !== header.last_event_timestamp) return undefined;
  return snap;
}

/** Writes `state` as the snapshot, a chunk of lines at a time; the state is immutable, so steps go on meanwhile. */
export async function writeSnapshot(path: string, version: string, state: BuildState, lastEventTimestamp: number): Promise<void> {
  if (version === '') return;
  const tmp = `${path}.${process.pid}.tmp`;
  const header: SnapshotHeader = { version, format: SNAPSHOT_FORMAT, last_event_id: state.last_event_id, last_event_timestamp: lastEventTimestamp };
  const file = await open(tmp, 'w');
  try {
    let chunk: string[] = [JSON.stringify(header)];
    let count = 0;
    for (const line of snapshotLines(state)) {
      chunk.push(JSON.stringify(line));
      count++;
      if (chunk.length >= LINES_PER_WRITE) {
        await file.write(`${chunk.join('\n')}\n`);
        chunk = [];
      }
    }
    chunk.push(JSON.stringify(['end', count]));
    await file.write(`${chunk.join('\n')}\n`);
    await file.sync();
  } catch (err) {
    await file.close().catch(() => undefined);
    await rm(tmp, { force: true });
    throw err;
  }
  await file.close();
  await rename(tmp, path);
}
