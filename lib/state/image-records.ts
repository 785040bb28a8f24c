/**
 * The records of an image written by another version of platform, read as a compaction base's are: after an upgrade
 * that changed the state code, a start reads the image's records and builds every index again (snapshot.ts
 * `fromSnapshot`), instead of replaying the whole log (~3 s against ~20 s at a million events).
 *
 * Only what the records format (snapshot.ts, SNAPSHOT_FORMAT) holds is read, by the names every image has given its
 * maps since images said their records format (`records_format` in the header): the record maps, `job_fingerprints`,
 * `window_open` and the scalars. The indexes an image holds are this code's own and are never read here.
 */
import type { CreatedCounts } from './build-state.js';
import { numbersOf, packer } from './state-image.js';
import type { SnapshotLine } from './snapshot.js';

/** Each record map of an image and the line kind its records make. */
const RECORD_MAPS: Readonly<Record<string, SnapshotLine[0]>> = {
  wants: 'want',
  partitions: 'partition',
  job_runs: 'job_run',
  builds: 'build',
  taints: 'taint',
  schedules: 'schedule',
};

interface Section {
  readonly name: string;
  readonly keys: unknown[][];
  readonly values: unknown[][];
  readonly encoded: Array<[Uint8Array, number[]]>;
}

/**
 * The records format lines of an image's pieces (those `stateFromImage` reads), in the order `snapshotLines` writes
 * them. Throws on anything that is not a whole image (the caller then replays the log).
 */
export function recordLinesOfImage(pieces: Iterable<unknown>, onRecords?: (done: number, total: number) => void): Iterable<SnapshotLine> {
  const sections = new Map<string, Section>();
  let current: Section | undefined;
  let scalars: { last_event_id: number; wants_sla_missed: number; created: CreatedCounts } | undefined;
  let structures: unknown[] | undefined;
  const strings: string[] = [];
  for (const piece of pieces) {
    if (!Array.isArray(piece)) throw new Error('an image line that is not a list');
    const [kind, a, b] = piece as [unknown, unknown, unknown];
    if (kind === 'scalars') scalars = a as typeof scalars;
    else if (kind === 'structures') structures = a as unknown[];
    else if (kind === 'strings' && Array.isArray(a)) for (const s of a) strings.push(s as string);
    else if (kind === 'map' && typeof a === 'string') {
      current = { name: a, keys: [], values: [], encoded: [] };
      sections.set(a, current);
    } else if (!current) throw new Error(`an image line of kind '${String(kind)}' outside a map`);
    else if (kind === 'keys' || kind === 'values') {
      const numbers = numbersOf(a);
      if (!numbers) throw new Error(`a line of ${String(kind)} of the map ${current.name} that is not one`);
      (kind === 'keys' ? current.keys : current.values).push(numbers);
    } else if (kind === 'encoded' && a instanceof Uint8Array && Array.isArray(b)) current.encoded.push([a, b as number[]]);
    else throw new Error(`an image line of unknown kind '${String(kind)}'`);
  }
  if (!scalars || typeof scalars.last_event_id !== 'number') throw new Error('an image without its scalars');
  if (!Array.isArray(structures)) throw new Error('an image without its record shapes');
  const unpacker = packer(structures);
  const stringAt = (ref: unknown): string => {
    const s = typeof ref === 'number' ? strings[ref] : undefined;
    if (s === undefined) throw new Error(`a reference to no string: ${String(ref)}`);
    return s;
  };
  const section = (name: string): Section => {
    const s = sections.get(name);
    if (!s) throw new Error(`an image without the map ${name}`);
    return s;
  };
  const records = Object.entries(RECORD_MAPS).map(([name, kind]) => [section(name), kind] as const);
  const fingerprints = section('job_fingerprints');
  const windowOpen = section('window_open');
  const { created, wants_sla_missed } = scalars;
  let total = 0;
  for (const [{ encoded }] of records) for (const [, starts] of encoded) total += starts.length;
  // Made as they are read: a million lines held at once were most of the start's collections.
  function* lines(): Generator<SnapshotLine> {
    let done = 0;
    for (const [{ encoded }, kind] of records) {
      for (const [chunk, starts] of encoded) {
        // A slice of records at a time: a million take seconds, which whoever waits for the start is told of.
        onRecords?.(done, total);
        done += starts.length;
        for (let j = 0; j < starts.length; j++) {
          const record = unpacker.unpack(chunk, { start: starts[j]!, end: j + 1 < starts.length ? starts[j + 1]! : chunk.length }) as Record<string, unknown>;
          if (kind === 'want') withLists(record);
          yield [kind, record] as SnapshotLine;
        }
      }
    }
    const values = fingerprints.values.flat();
    let i = 0;
    for (const key of fingerprints.keys.flat()) yield ['job_fingerprint', [stringAt(key), stringAt(values[i++])]];
    for (const key of windowOpen.keys.flat()) yield ['window_open', stringAt(key)];
    yield ['created', created];
    yield ['wants_sla_missed', wants_sla_missed];
  }
  return lines();
}

/**
 * A want as the records format holds it: its runs and derived wants as lists. An image keeps them as the fold does,
 * full chunks and a tail (append-list.ts), of whatever chunk size its version used.
 */
function withLists(want: Record<string, unknown>): void {
  // In place: the record was just decoded, and is nobody else's.
  want.job_run_ids = flatList(want.job_run_ids);
  want.child_want_ids = flatList(want.child_want_ids);
}

function flatList(list: unknown): unknown[] {
  if (Array.isArray(list)) return list;
  const { chunks, tail } = (list ?? {}) as { chunks?: unknown; tail?: unknown };
  if (!Array.isArray(chunks) || !Array.isArray(tail) || !chunks.every((c) => Array.isArray(c))) throw new Error('a want whose lists are neither lists nor chunks and a tail');
  return [...(chunks as unknown[][]).flat(), ...tail];
}
