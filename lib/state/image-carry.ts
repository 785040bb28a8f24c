import { ByteArena, reserveBytes } from './byte-arena.js';
import { StringTable } from './string-table.js';

/**
 * What one store's snapshot images hand on to the next, and the state the last image holds.
 *
 * - The record shapes the last image was written with. The next image's packer starts from them (it may only add
 *   to them), so bytes packed against any earlier image of the chain decode against the next one's shapes too.
 * - The string table (string-table.ts), and each map's string numbers in key order: an entry whose key (and plain
 *   value) the last image had gets its numbers again from a cursor walked beside it, without a lookup; only new
 *   strings are hashed.
 * - Each map's keys, plain values and encoded records as written, from which `stateOfImage` (state-image.ts) makes
 *   the state the image holds: records encoded, as a restart loads them. A store takes that state in place of its
 *   fold (state-store.ts), so its memory after a snapshot is a restart's, and the next image copies every record
 *   still encoded instead of packing it again. A snapshot costs what changed since the last one, and walking the
 *   maps (docs/decisions.md, "Speed, session 17").
 */
export class ImageCarry {
  /** The shapes the last image's records were packed against (the next image's packer starts from them). */
  private shapes: unknown[] = [];
  /** The encodings whose bytes are valid against `shapes`: the loaded image the chain began from, and its own. */
  private valid = new WeakSet<object>();
  private last = new Map<string, MapPlacement>();
  private next: Map<string, MapPlacement> | undefined;
  /** The state the last image was made of, to the end (weakly: a store goes on without it). */
  private imaged: WeakRef<object> | undefined;
  /** The strings of the images, numbered the same from one to the next (string-table.ts). */
  table = new StringTable();
  /** Where the image under way keeps its encoded values (byte-arena.ts). */
  arena = new ByteArena();
  /** Room set aside for the next image (`reserve`). */
  private reserved: Uint8Array | undefined;
  /**
   * Of the image under way (or the last): records and sets packed and copied, and entries of any map whose numbers
   * and bytes were copied as a range of a run the last image wrote.
   */
  readonly counts = { packed: 0, copied: 0, ranged: 0 };

  /**
   * Starts an image of a state whose still-encoded values (if any) are of `origin`; returns the shapes its packer
   * must start from (a copy: the packer adds to it). A state of an origin not of this chain (a store reloaded)
   * starts the carry over from that origin's shapes, `originShapes`.
   */
  begin(origin: object | undefined, originShapes: () => unknown[]): unknown[] {
    if (origin !== undefined && !this.valid.has(origin)) {
      this.valid = new WeakSet([origin]);
      this.shapes = originShapes();
      this.last = new Map();
      this.table = new StringTable();
    }
    this.next = new Map();
    this.imaged = undefined;
    this.arena = new ByteArena(this.reserved);
    this.reserved = undefined;
    this.table.nextImage();
    this.counts.packed = 0;
    this.counts.copied = 0;
    this.counts.ranged = 0;
    return this.shapes.slice();
  }

  /**
   * Sets aside room for the next image's encoded values now, while the heap is small: a start about to fold many
   * events (byte-arena.ts says why).
   */
  reserve(bytes: number): void {
    this.reserved = reserveBytes(bytes);
  }

  /** Whether a value kept encoded by `origin` may be copied as it is. */
  copies(origin: unknown): boolean {
    return typeof origin === 'object' && origin !== null && this.valid.has(origin);
  }

  /** An encoding of bytes packed against this chain's shapes (an image's, read back in memory). */
  adopt(encoding: object): void {
    this.valid.add(encoding);
  }

  /** The map `name` of this image, written in key order by `compare`, beside the same map of the last image. */
  map<K>(name: string, compare: (a: K, b: K) => number): MapCarry<K> {
    const placement = new MapPlacement(this.table);
    this.next?.set(name, placement);
    return new MapCarry(this.last.get(name), placement, compare, this.table);
  }

  /**
   * The image of `state` was made to the end with `shapes`: the next copies from it. An image given up half way
   * hands on nothing (the last one's placement stays). A table mostly of strings no longer referred to is dropped.
   */
  end(state: object, shapes: unknown[]): void {
    if (!this.next) return;
    this.shapes = shapes;
    this.last = this.next;
    this.next = undefined;
    this.imaged = new WeakRef(state);
    if (!this.table.live) this.table = new StringTable();
  }

  /**
   * The store did not take the state the last image holds (a prune came between, the write failed after the
   * image was made): its maps are not the store's, so they are let go rather than kept beside the fold.
   */
  forget(): void {
    this.last = new Map();
    this.imaged = undefined;
  }

  /**
   * Takes on an image a start loaded (`loaded`, filled by state-image.ts `stateFromImage`) as the last image of
   * this chain: its encoding copies, its strings keep their numbers, and each map's stretches the loaded state still
   * holds are copied as ranges. Without it the first image after a start looked every string up again and copied
   * every record entry by entry (1,973 ms against 758-933 ms for the next images, at 200,000 wants).
   */
  takeLoaded(loaded: LoadedImage): void {
    this.shapes = loaded.shapes.slice();
    this.valid = new WeakSet([loaded.encoding]);
    this.table = StringTable.of(loaded.strings);
    this.last = new Map();
    for (const [name, m] of loaded.maps) {
      this.last.set(name, new MapPlacement(this.table, m.keys, m.values, Numbers.of(m.keyRefs), Numbers.of(m.valueRefs)));
    }
    this.next = undefined;
    this.imaged = undefined;
  }

  /** The shapes and maps of the last image, if it was of `state` and made to the end. */
  lastImageOf(state: object): { shapes: readonly unknown[]; maps: ReadonlyMap<string, ImageMap> } | undefined {
    return this.imaged?.deref() === state ? { shapes: this.shapes, maps: this.last } : undefined;
  }
}

/** One map of an image as written: its keys in order, and its plain values or its encoded values' chunks. */
export interface ImageMap {
  readonly keys: readonly unknown[];
  readonly values: readonly unknown[];
  readonly chunks: readonly Uint8Array[];
  /** Where each encoded value begins in its chunk. */
  startsArray(): Uint32Array;
}

/**
 * An image as a start loaded it, for the carry to take on (`takeLoaded`): its record shapes and their encoding,
 * its strings by number, and for each map the very keys and plain values arrays the loaded state's maps hold, with
 * their string numbers as the file had them (0 for a key that is a number, or a value that is `true`).
 */
export interface LoadedImage {
  readonly encoding: object;
  readonly shapes: readonly unknown[];
  readonly strings: readonly string[];
  readonly maps: ReadonlyMap<string, { keys: unknown[]; values: unknown[]; keyRefs: Uint32Array; valueRefs: Uint32Array }>;
}

/** A growable list of unsigned 32-bit numbers (a typed array: 4 bytes an entry, not a JS array's 8). */
class Numbers {
  private items: Uint32Array = new Uint32Array(256);
  length = 0;

  static of(words: Uint32Array): Numbers {
    const numbers = new Numbers();
    numbers.items = words;
    numbers.length = words.length;
    return numbers;
  }

  push(n: number): void {
    if (this.length === this.items.length) {
      const grown = new Uint32Array(this.items.length * 2);
      grown.set(this.items);
      this.items = grown;
    }
    this.items[this.length++] = n;
  }

  at(i: number): number {
    return this.items[i]!;
  }

  toArray(): Uint32Array {
    return this.items.subarray(0, this.length);
  }
}

/** One map in one image, in key order: its keys and plain values, their numbers in `table`, its encoded values. */
class MapPlacement implements ImageMap {
  readonly chunks: Uint8Array[] = [];
  readonly starts = new Numbers();

  constructor(
    /** The table its references are numbers of. */
    readonly table: StringTable,
    readonly keys: unknown[] = [],
    readonly values: unknown[] = [],
    readonly keyRefs = new Numbers(),
    readonly valueRefs = new Numbers(),
  ) {}

  startsArray(): Uint32Array {
    return this.starts.toArray();
  }
}

/**
 * A cursor over the last image's map, moved along as the new image's entries come in key order: an entry the last
 * image had is given the string numbers it had there.
 */
export class MapCarry<K> {
  private at = 0;
  /** The entry of the last image under the key of the entry being written, or -1. */
  private found = -1;
  private readonly last: MapPlacement | undefined;

  constructor(
    last: MapPlacement | undefined,
    private readonly next: MapPlacement,
    private readonly compare: (a: K, b: K) => number,
    private readonly table: StringTable,
  ) {
    // The last image's numbers are of no use with another table (it was dropped).
    this.last = last?.table === table ? last : undefined;
  }

  /** The next entry's key, a number itself; returns it. */
  numericKey(key: K): K {
    this.seek(key);
    this.next.keys.push(key);
    return key;
  }

  /** The next entry's key, a string; returns its number in the table. */
  stringKey(key: K): number {
    this.seek(key);
    const ref = this.found >= 0 ? this.table.use(this.last!.keyRefs.at(this.found)) : this.table.ref(key as string);
    this.next.keys.push(key);
    this.next.keyRefs.push(ref);
    return ref;
  }

  /** A plain map's value of the entry: `true`, or a string's number in the table. */
  plainValue(value: unknown): number | true {
    let ref: number | true;
    if (value === true) ref = true;
    else if (this.found >= 0 && this.last!.values[this.found] === value) ref = this.table.use(this.last!.valueRefs.at(this.found));
    else ref = this.table.ref(value as string);
    this.next.values.push(value);
    this.next.valueRefs.push(ref === true ? 0 : ref);
    return ref;
  }

  /**
   * Whether a run's stretch over `keys` (and, for a plain map, `values`) is of the map the store held after the last
   * image, the very arrays it wrote: then entry i there is entry i of the last image, and `copyRange` gives its
   * numbers without a lookup or a comparison.
   */
  covers(keys: readonly unknown[], plainValues: unknown): boolean {
    const last = this.last;
    return last !== undefined && last.keys === keys && (plainValues === undefined || last.values === plainValues);
  }

  /**
   * Entries `a..b` of a stretch `covers` vouched for: their key numbers (the keys themselves if `numeric`) pushed on
   * `outKeys`, a plain map's value numbers on `outValues`.
   */
  copyRange(a: number, b: number, numeric: boolean, outKeys: unknown[], outValues: unknown[] | undefined): void {
    const last = this.last!;
    const next = this.next;
    const table = this.table;
    for (let k = a; k < b; k++) {
      const key = last.keys[k];
      next.keys.push(key);
      if (numeric) outKeys.push(key);
      else {
        const ref = table.use(last.keyRefs.at(k));
        outKeys.push(ref);
        next.keyRefs.push(ref);
      }
      if (outValues) {
        const value = last.values[k];
        const ref = value === true ? true : table.use(last.valueRefs.at(k));
        outValues.push(ref);
        next.values.push(value);
        next.valueRefs.push(ref === true ? 0 : ref);
      }
    }
    if (b > this.at) this.at = b;
  }

  /** A piece of this image's encoded values: `chunk`, value i of it beginning at `starts[i]`. */
  placed(chunk: Uint8Array, starts: readonly number[]): void {
    for (const s of starts) this.next.starts.push(s);
    this.next.chunks.push(chunk);
  }

  private seek(key: K): void {
    this.found = -1;
    const last = this.last;
    if (!last) return;
    const keys = last.keys as K[];
    const n = keys.length;
    while (this.at < n && this.compare(keys[this.at]!, key) < 0) this.at++;
    if (this.at < n && this.compare(keys[this.at]!, key) === 0) this.found = this.at;
  }
}
