/**
 * The state as it is in memory, map by map: what snapshot.bin holds. A restart turns each map's sorted keys back into
 * a map in O(1) nodes (ordered-map.ts's runs) and leaves each record encoded until it is read (lazy-values.ts):
 * loading is decoding keys, not rebuilding records and fourteen indexes from them, which is what
 * made a restart at a million events take 8 s and 1.4 GB.
 *
 * Unlike the records of snapshot.ts (the compaction base, read by any later program version), an image holds the
 * indexes as this code built them, so it is tied to this code: snapshot-file.ts only reads one written by the same
 * state code. The loaded state equals the fold of the same events (tests/state-snapshot.test.ts).
 */
import { Packr } from 'msgpackr';
import {
  JOB_RUN_STATUSES,
  PARTITION_STATUSES,
  WANT_STATUSES,
  initialState,
  type BuildState,
  type CreatedCounts,
  compareIds,
  copyState,
} from './build-state.js';
import { ImageCarry, type LoadedImage } from './image-carry.js';
import { LazyValues } from './lazy-values.js';
import { OrderedMap, compareNumbers, compareStrings, type Compare, type RunSlice } from './ordered-map.js';

/** Strings in one line of the strings a table kept from the last image. */
const STRINGS_A_LINE = 4096;

/** Entries per piece (a line of a frame); a map's pieces but its last hold exactly this many. */
const PER_PIECE = 256;

/**
 * Record shapes shared by an image's values (beyond them, a record carries its own shape). Not more than 32: above
 * that msgpackr numbers records in two bytes and keeps part of that numbering on the live shape list, which a list
 * read back from the file lacks (records from the 31st shape on then failed to decode; tests/state-snapshot.test.ts).
 */
const MAX_SHARED_STRUCTURES = 32;

/** How a map's values are kept in the image: as they are, or encoded one by one and decoded when read. */
type ValueKind = 'plain' | 'records' | 'sets';

export interface MapSpec {
  readonly compare: Compare<unknown>;
  readonly kind: ValueKind;
}

const byText = compareStrings as Compare<unknown>;
const byId = compareIds as Compare<unknown>;
const plain = (numeric = false): MapSpec => ({ compare: (numeric ? compareNumbers : compareStrings) as Compare<unknown>, kind: 'plain' });
const records = (compare = byText): MapSpec => ({ compare, kind: 'records' });
const sets = (compare = byText): MapSpec => ({ compare, kind: 'sets' });

type StatusIndexField = 'wants_by_status' | 'job_runs_by_status' | 'partitions_by_status';
type ScalarField = 'last_event_id' | 'wants_sla_missed' | 'created';
type MapField = Exclude<keyof BuildState, StatusIndexField | ScalarField>;

/** Every map of the state and how its values are kept; a field missing here fails the image's round trip test. */
const MAPS: Readonly<Record<MapField, MapSpec>> = {
  wants: records(byId),
  want_order: plain(true),
  active_wants_by_ref: sets(),
  run_wants: sets(byId),
  partitions: records(),
  job_runs: records(byId),
  job_run_order: plain(true),
  builds: records(byId),
  build_history: plain(),
  consumers: plain(),
  partitions_by_job: plain(),
  job_fingerprints: plain(),
  taints: records(),
  taint_order: plain(true),
  taints_by_ref: plain(),
  sla_pending: plain(),
  queued_by_priority: plain(),
  window_open: plain(),
  backfills: plain(),
  backfill_order: plain(true),
  schedules: records(),
};

const STATUS_INDEXES: Readonly<Record<StatusIndexField, { statuses: readonly string[]; spec: MapSpec }>> = {
  wants_by_status: { statuses: WANT_STATUSES, spec: plain(true) },
  job_runs_by_status: { statuses: JOB_RUN_STATUSES, spec: plain(true) },
  partitions_by_status: { statuses: PARTITION_STATUSES, spec: plain() },
};

export interface Scalars {
  last_event_id: number;
  wants_sla_missed: number;
  created: CreatedCounts;
}

/** One line of an image: a map starts (its name, size), its keys, its values, the scalars. */
export type ImagePiece =
  | ['strings', string[]]
  | ['map', string, number]
  | ['keys', unknown[] | Uint8Array]
  | ['values', unknown[] | Uint8Array]
  | ['encoded', Uint8Array, number[]]
  | ['structures', unknown[]]
  | ['scalars', Scalars];

export type AnyMap = OrderedMap<unknown, unknown>;

/** A packer of values whose record shapes are `structures` (filled as it packs; saved with the image). */
export const packer = (structures: unknown[]): Packr =>
  new Packr({ structures: structures as object[], maxSharedStructures: MAX_SHARED_STRUCTURES, useRecords: true, structuredClone: false, mapsAsObjects: true });

export const encodeSet = (set: unknown): unknown[] => {
  const flat: unknown[] = [];
  for (const [seq, id] of set as OrderedMap<number, string>) flat.push(seq, id);
  return flat;
};

/** `true` in a line of words (a plain map's value that is not a string). */
const TRUE_WORD = 0xffffffff;
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/**
 * A line of string numbers, seq keys and `true` as 4-byte little-endian words, one block of bytes: msgpackr packs
 * it at once instead of number by number (a frame of such lines packs in a third of the time). Anything else (a
 * number past 32 bits, a big-endian host) keeps the line a list.
 */
function wordsOf(items: unknown[]): unknown[] | Uint8Array {
  if (!LITTLE_ENDIAN) return items;
  const words = new Uint32Array(items.length);
  for (let i = 0; i < items.length; i++) {
    const v = items[i];
    if (v === true) words[i] = TRUE_WORD;
    else if (typeof v === 'number' && Number.isInteger(v) && v >= 0 && v < TRUE_WORD) words[i] = v;
    else return items;
  }
  return new Uint8Array(words.buffer);
}

/** A line of keys or values as read: a list, or a block of words (`wordsOf`); undefined for anything else. */
export function numbersOf(line: unknown): unknown[] | undefined {
  if (Array.isArray(line)) return line;
  if (!(line instanceof Uint8Array) || line.length % 4 !== 0 || !LITTLE_ENDIAN) return undefined;
  const n = line.length / 4;
  // A block read from a frame need not start at a multiple of 4: then it is copied first.
  const words = line.byteOffset % 4 === 0 ? new Uint32Array(line.buffer, line.byteOffset, n) : new Uint32Array(Uint8Array.from(line).buffer);
  const out = new Array<unknown>(n);
  for (let i = 0; i < n; i++) {
    const w = words[i]!;
    out[i] = w === TRUE_WORD ? true : w;
  }
  return out;
}

/**
 * Where the writer of an image may end a frame and let the event loop go, in the middle of a line: yielded
 * between slices of one value too large to pack at once.
 */
export const PAUSE_POINT: unique symbol = Symbol('pause point');

/**
 * Members of a set packed in one go, at most. One set can hold every active want: 100,000 wants waiting on one
 * input are one entry of `active_wants_by_ref` and one of `run_wants`, and packing it whole held the loop ~60 ms
 * (a slice of 1,024 takes ~2.5 ms here).
 */
export const SET_SLICE = 1024;

/**
 * Work between two points where the writer may pause, in set members packed (SET_SLICE): an entry written one by one
 * (its strings looked up) counts 16, and a record packed 32 more. A piece of 256 records packed whole held
 * the loop 3-5 ms, and one of 256 entries of a plain map of new strings 5-18 ms (the first image of a fold), the
 * longest holds of a snapshot whatever the frame's budget (frame-budget.ts).
 */
const PAUSE_WORK = SET_SLICE;
const WORK_A_RECORD = 32;
const WORK_AN_ENTRY = 16;

/**
 * A set's encoding, a slice of members at a time with a pause point between slices: a MessagePack array is its
 * header and then its items, so slices packed apart and joined after one header are the whole array.
 */
function* packSet(p: Packr, set: OrderedMap<number, string>): Generator<typeof PAUSE_POINT, Uint8Array> {
  if (set.size <= SET_SLICE) return p.pack(encodeSet(set));
  const header = Buffer.alloc(5);
  header[0] = 0xdd; // array 32
  header.writeUInt32BE(set.size * 2, 1);
  const parts: Uint8Array[] = [header];
  let items: unknown[] = [];
  const flush = (): void => {
    const packed = p.pack(items);
    // Its own array header off: fixarray (1 byte), array 16 (3) or array 32 (5).
    const first = packed[0]!;
    parts.push(packed.subarray(first >= 0x90 && first <= 0x9f ? 1 : first === 0xdc ? 3 : 5));
    items = [];
  };
  for (const [seq, id] of set) {
    items.push(seq, id);
    if (items.length >= 2 * SET_SLICE) {
      flush();
      yield PAUSE_POINT;
    }
  }
  if (items.length > 0) flush();
  return Buffer.concat(parts);
}

export const decodeSet = (flat: unknown): OrderedMap<number, string> => {
  const items = flat as unknown[];
  const seqs: number[] = [];
  const ids: string[] = [];
  for (let i = 0; i < items.length; i += 2) {
    seqs.push(items[i] as number);
    ids.push(items[i + 1] as string);
  }
  return OrderedMap.fromSortedArrays(compareNumbers, seqs, ids);
};

/** Every map of the state by its name in the image (a status index's maps are `<field>.<status>`). */
export function* namedMaps(state: BuildState): Generator<[string, AnyMap, MapSpec]> {
  for (const [field, spec] of Object.entries(MAPS) as Array<[MapField, MapSpec]>) yield [field, state[field] as AnyMap, spec];
  for (const [field, { statuses, spec }] of Object.entries(STATUS_INDEXES) as Array<[StatusIndexField, (typeof STATUS_INDEXES)[StatusIndexField]]>) {
    const index = state[field] as Readonly<Record<string, AnyMap>>;
    for (const s of statuses) yield [`${field}.${s}`, index[s]!, spec];
  }
}

/**
 * The pieces of an image of `state`, a few hundred entries each, so a writer can pace itself between them; the
 * record shapes its values share come last (they grow as values are packed). With the `carry` of the store's last
 * image, a record or set still encoded as an image of the chain wrote it is copied rather than packed again, and
 * strings keep their numbers (image-carry.ts).
 */
export function* imagePieces(state: BuildState, carry = new ImageCarry()): Generator<ImagePiece | typeof PAUSE_POINT> {
  // Values still encoded as a loaded image kept them are copied as they are, with that image's record shapes first.
  // Only the shapes the image was written with: reading a record that carries its own shape appends it to the
  // loaded list for the while (msgpackr), and a packer started with more than its shared maximum refuses to pack.
  const base = encodingOf(state);
  const structures = carry.begin(base, () => (base ? base.structures.slice(0, base.shared) : []));
  const p = packer(structures);
  const table = carry.table;
  let workSincePause = 0;
  yield ['scalars', { last_event_id: state.last_event_id, wants_sla_missed: state.wants_sla_missed, created: state.created }];
  // The strings the table kept from the last image come first, as every later line may refer to them.
  for (let kept = table.taken(STRINGS_A_LINE); kept.length > 0; kept = table.taken(STRINGS_A_LINE)) yield ['strings', kept];
  for (const [name, map, spec] of namedMaps(state)) {
    yield ['map', name, map.size];
    let keys: unknown[] = [];
    let values: unknown[] = [];
    let encoded: Uint8Array[] = [];
    const numericKeys = spec.compare === compareNumbers;
    const carried = carry.map(name, spec.compare);
    const flush = (): ImagePiece[] => {
      const fresh = table.taken();
      const keyLine: ImagePiece = ['keys', wordsOf(keys)];
      const pieces: ImagePiece[] = fresh.length > 0 ? [['strings', fresh], keyLine] : [keyLine];
      if (spec.kind === 'plain') {
        pieces.push(['values', wordsOf(values)]);
      } else {
        const starts: number[] = [];
        let at = 0;
        for (const e of encoded) {
          starts.push(at);
          at += e.length;
        }
        const chunk = carry.arena.take(at);
        let o = 0;
        for (const e of encoded) {
          chunk.set(e, o);
          o += e.length;
        }
        carried.placed(chunk, starts);
        pieces.push(['encoded', chunk, starts]);
      }
      keys = [];
      values = [];
      encoded = [];
      return pieces;
    };
    const plainMap = spec.kind === 'plain';
    // A stretch of a run the last image wrote is copied as a range; any other stretch comes entry by entry.
    const copied = (slice: RunSlice<unknown, unknown>): boolean =>
      carried.covers(slice.keys, plainMap ? slice.values : undefined) && (plainMap || (slice.values instanceof LazyValues && carry.copies(slice.values.encoding)));
    for (const part of map.keptParts(copied)) {
      if (!Array.isArray(part)) {
        const lazy = part.values as LazyValues<unknown>;
        for (let i = part.lo; i < part.hi; ) {
          const n = Math.min(part.hi - i, PER_PIECE - keys.length);
          carried.copyRange(i, i + n, numericKeys, keys, plainMap ? values : undefined);
          carry.counts.ranged += n;
          if (!plainMap) {
            for (let k = i; k < i + n; k++) encoded.push(lazy.encodedAt(k));
            carry.counts.copied += n;
          }
          i += n;
          if (keys.length === PER_PIECE) yield* flush();
        }
        continue;
      }
      const entry = part;
      const key = entry[0];
      keys.push(numericKeys ? carried.numericKey(key) : carried.stringKey(key));
      workSincePause += WORK_AN_ENTRY;
      if (spec.kind === 'plain') {
        values.push(carried.plainValue(entry[1]));
      } else if (entry.length === 4 && carry.copies(entry[3])) {
        encoded.push(entry[2]);
        carry.counts.copied++;
      } else {
        carry.counts.packed++;
        const value = entry.length === 4 ? map.get(key) : entry[1];
        if (spec.kind === 'sets') {
          const set = value as OrderedMap<number, string>;
          encoded.push(yield* packSet(p, set));
          // Many middling sets in one piece (256 partitions with a thousand waiting wants each) cost what one large
          // set does: the writer may pause after every slice's worth of members, whichever sets they are in.
          workSincePause += set.size;
        } else {
          encoded.push(p.pack(value));
          workSincePause += WORK_A_RECORD;
        }
      }
      if (workSincePause >= PAUSE_WORK) {
        workSincePause = 0;
        yield PAUSE_POINT;
      }
      if (keys.length === PER_PIECE) yield* flush();
    }
    if (keys.length > 0) yield* flush();
  }
  yield ['structures', structures];
  carry.end(state, structures);
}

/** A state's fields from `base`, every map of BuildState (the status indexes' too) made by `load` from its image name. */
export function withMaps(base: Record<string, unknown>, load: (name: string, spec: MapSpec) => AnyMap): BuildState {
  const state: Record<string, unknown> = { ...base };
  for (const [field, spec] of Object.entries(MAPS)) state[field] = load(field, spec);
  for (const [field, { statuses, spec }] of Object.entries(STATUS_INDEXES)) {
    const index: Record<string, AnyMap> = {};
    for (const s of statuses) index[s] = load(`${field}.${s}`, spec);
    state[field] = index;
  }
  // Copied into the fold's own shape of state (build-state.ts's copyState).
  return copyState(state as unknown as BuildState);
}

/** How a map's encoded values are read back, with `unpacker` (the image's record shapes). */
function decoderFor(unpacker: Packr, kind: MapSpec['kind']): (chunk: Uint8Array, start: number, end: number) => unknown {
  return kind === 'sets'
    ? (chunk, start, end) => decodeSet(unpacker.unpack(chunk, { start, end }))
    : (chunk, start, end) => unpacker.unpack(chunk, { start, end }) as unknown;
}

/**
 * The state the carry's last image holds, if that image was of `state`: equal to it, its records and sets still
 * encoded as the image wrote them and decoded when read, as a restart from the image loads it (its keys and plain
 * values are the very ones of `state`). Its encoding is adopted by the carry, so the next image copies them.
 */
export function stateOfImage(state: BuildState, carry: ImageCarry): BuildState | undefined {
  const image = carry.lastImageOf(state);
  if (!image) return undefined;
  const encoding = new ImageEncoding(image.shapes.slice(), image.shapes.length);
  const unpacker = packer(image.shapes.slice());
  const load = (name: string, spec: MapSpec): AnyMap => {
    const m = image.maps.get(name);
    if (!m) throw new Error(`the image has no map ${name}`);
    if (spec.kind === 'plain') return OrderedMap.fromSortedArrays(spec.compare, m.keys, m.values, { trusted: true });
    // Chunks and starts as this image made them: not checked value by value again (a million at a million events).
    const values = new LazyValues(m.keys.length, PER_PIECE, m.chunks, m.startsArray(), decoderFor(unpacker, spec.kind), encoding, { trusted: true });
    return OrderedMap.fromSortedArrays(spec.compare, m.keys, values, { trusted: true });
  };
  // Every map of BuildState replaced by the image's own, the rest of `state` as it is.
  const imaged = withMaps(state as unknown as Record<string, unknown>, load);
  carry.adopt(encoding);
  return imaged;
}

/** The record shapes of a loaded image: the list its values decode with, and how many of them the file held. */
class ImageEncoding {
  constructor(
    readonly structures: unknown[],
    readonly shared: number,
  ) {}
}

/** The encoding a state loaded from an image still has values in (none for a fold's state). */
function encodingOf(state: BuildState): ImageEncoding | undefined {
  for (const [, map, spec] of namedMaps(state)) {
    if (spec.kind === 'plain') continue;
    const first = map.keptEntries().next();
    if (!first.done && first.value.length === 4 && first.value[3] instanceof ImageEncoding) return first.value[3];
  }
  return undefined;
}

interface Section {
  readonly name: string;
  readonly size: number;
  /** Keys and values as read: numbers, references to strings, `true`. */
  readonly keys: unknown[][];
  readonly values: unknown[][];
  readonly chunks: Uint8Array[];
  /** Where each value begins in its chunk (made at the map's first chunk). */
  starts: Uint32Array;
  filled: number;
}

/**
 * The state an image's pieces describe. Throws on anything that is not a whole image of this code's state (a
 * missing or unknown map, keys out of order, counts that do not add up): the caller then replays the log.
 */
export function stateFromImage(pieces: Iterable<unknown>, loaded?: { image?: LoadedImage }): BuildState {
  const sections = new Map<string, Section>();
  let current: Section | undefined;
  let scalars: Scalars | undefined;
  let structures: unknown[] | undefined;
  const strings: string[] = [];
  let numbers: unknown[] | undefined;
  for (const piece of pieces) {
    if (!Array.isArray(piece)) throw new Error('an image line that is not a list');
    const [kind, a, b] = piece as [unknown, unknown, unknown];
    if (kind === 'scalars') scalars = a as Scalars;
    else if (kind === 'structures') structures = a as unknown[];
    else if (kind === 'strings' && Array.isArray(a)) for (const s of a) strings.push(s as string);
    else if (kind === 'map') {
      if (typeof a !== 'string' || typeof b !== 'number' || sections.has(a) || !(b >= 0 && b <= 2 ** 31)) throw new Error(`a map line of no use: ${String(a)}`);
      current = { name: a, size: b, keys: [], values: [], chunks: [], starts: new Uint32Array(0), filled: 0 };
      sections.set(a, current);
    } else if (!current) throw new Error(`an image line of kind '${String(kind)}' outside a map`);
    else if ((kind === 'keys' || kind === 'values') && (numbers = numbersOf(a))) (kind === 'keys' ? current.keys : current.values).push(numbers);
    else if (kind === 'encoded' && a instanceof Uint8Array && Array.isArray(b)) {
      if (current.filled === 0) current.starts = new Uint32Array(current.size);
      const filled = current.filled + b.length;
      // Every chunk but the last holds PER_PIECE: value i is in chunk i / PER_PIECE.
      if (filled > current.size || (b.length !== PER_PIECE && filled !== current.size)) throw new Error(`the map ${current.name} has values out of step`);
      current.starts.set(b as number[], current.filled);
      current.filled = filled;
      current.chunks.push(a);
    } else throw new Error(`an image line of unknown kind '${String(kind)}'`);
  }
  if (!scalars || typeof scalars.last_event_id !== 'number') throw new Error('an image without its scalars');
  if (!Array.isArray(structures) || structures.length > MAX_SHARED_STRUCTURES || !structures.every((s) => Array.isArray(s))) {
    throw new Error('an image without its record shapes');
  }
  const encoding = new ImageEncoding(structures, structures.length);
  const unpacker = packer(structures);
  const stringAt = (ref: unknown): string => {
    const s = typeof ref === 'number' ? strings[ref] : undefined;
    if (s === undefined) throw new Error(`a reference to no string: ${String(ref)}`);
    return s;
  };
  /**
   * A section's chunks as one array, each item made what it stands for; with `refs`, the string numbers as read
   * (0 for what is not one) for a carry to take on.
   */
  const flat = <T>(chunks: unknown[][], size: number, item: (x: unknown) => T, refs?: Uint32Array): T[] => {
    const out = new Array<T>(size);
    let i = 0;
    for (const chunk of chunks) {
      if (i + chunk.length > size) throw new Error(`more entries than the ${size} of their map`);
      for (const x of chunk) {
        if (refs && typeof x === 'number') refs[i] = x;
        out[i++] = item(x);
      }
    }
    if (i !== size) throw new Error(`${i} entries of a map of ${size}`);
    return out;
  };
  const placements = new Map<string, { keys: unknown[]; values: unknown[]; keyRefs: Uint32Array; valueRefs: Uint32Array }>();
  const refsFor = (size: number): Uint32Array | undefined => (loaded ? new Uint32Array(size) : undefined);
  const load = (name: string, spec: MapSpec): AnyMap => {
    const section = sections.get(name);
    if (!section) throw new Error(`an image without the map ${name}`);
    sections.delete(name);
    const { compare, kind } = spec;
    const numeric = compare === compareNumbers;
    const keyRefs = numeric ? undefined : refsFor(section.size);
    const keys = numeric ? flat(section.keys, section.size, (k) => k) : flat(section.keys, section.size, stringAt, keyRefs);
    const valueRefs = kind === 'plain' ? refsFor(section.size) : undefined;
    const values = kind === 'plain' ? flat(section.values, section.size, (v) => (v === true ? true : stringAt(v)), valueRefs) : undefined;
    const none = new Uint32Array(0);
    if (loaded) placements.set(name, { keys, values: values ?? [], keyRefs: keyRefs ?? none, valueRefs: valueRefs ?? none });
    return OrderedMap.fromSortedArrays(compare, keys, values ?? new LazyValues(section.filled, PER_PIECE, section.chunks, section.starts, decoderFor(unpacker, kind), encoding));
  };
  // Every field of BuildState is set from MAPS, STATUS_INDEXES and the scalars, checked as they are read.
  const state = withMaps({ ...initialState(), ...scalars }, load);
  if (sections.size > 0) throw new Error(`an image with maps this state does not have: ${[...sections.keys()].join(', ')}`);
  if (loaded) loaded.image = { encoding, shapes: structures.slice(), strings, maps: placements };
  return state;
}
