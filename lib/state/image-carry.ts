import { StringTable } from './string-table.js';

/**
 * What one store's snapshot images hand on to the next: the record shapes the last was written with, and where in
 * it each record and set it packed lies. The next image starts its packer from those shapes (it may only add to
 * them), so the bytes of any record still in the state, the same object, are as valid in the next image as they
 * were in the last: they are copied, not packed again, and a snapshot packs what changed since the last one rather
 * than the whole state (packing was 38% of an image of 200,000 wants; docs/decisions.md, "Speed, session 17").
 *
 * Records and sets are persistent (a change makes a new object), so the same object under the same key means the
 * same bytes. The last image's entries are walked beside the new one's, map by map in key order: no hashing (a
 * WeakMap from record to bytes cost as much as the packing it saved).
 */
export class ImageCarry {
  /** The shapes the last image's records were packed against (the next image's packer starts from them). */
  private shapes: unknown[] = [];
  /** The loaded image the state came from: its still-encoded values are valid against `shapes` too. */
  private from: unknown = undefined;
  private last = new Map<string, MapPlacement>();
  private next: Map<string, MapPlacement> | undefined;
  /** The strings of the images, numbered the same from one to the next (string-table.ts). */
  table = new StringTable();
  /** Of the records and sets of the image under way (or the last): how many were packed, how many copied. */
  readonly counts = { packed: 0, copied: 0 };

  /**
   * Starts an image of a state whose still-encoded values (if any) are of `origin`; returns the shapes its packer
   * must start from (a copy: the packer adds to it). A state of another origin than the last (a store reloaded)
   * starts the carry over from that origin's shapes, `originShapes`.
   */
  begin(origin: unknown, originShapes: () => unknown[]): unknown[] {
    if (origin !== undefined && origin !== this.from) {
      this.from = origin;
      this.shapes = originShapes();
      this.last = new Map();
      this.table = new StringTable();
    }
    this.next = new Map();
    this.table.nextImage();
    this.counts.packed = 0;
    this.counts.copied = 0;
    return this.shapes.slice();
  }

  /** Whether a value kept encoded by `origin` may be copied as it is. */
  copies(origin: unknown): boolean {
    return origin !== undefined && origin === this.from;
  }

  /** The map `name` of this image, written in key order by `compare`, beside the same map of the last image. */
  map<K>(name: string, compare: (a: K, b: K) => number, perChunk: number): MapCarry<K> {
    const placement = new MapPlacement(perChunk, this.table);
    this.next?.set(name, placement);
    return new MapCarry(this.last.get(name), placement, compare, this.table);
  }

  /**
   * The image was made to the end with `shapes`: the next copies from it. An image given up half way hands on
   * nothing (the last one's placement stays). A table mostly of strings no longer referred to is dropped.
   */
  end(shapes: unknown[]): void {
    if (!this.next) return;
    this.shapes = shapes;
    this.last = this.next;
    this.next = undefined;
    if (!this.table.live) this.table = new StringTable();
  }
}

/** A growable list of unsigned 32-bit numbers (a typed array: 4 bytes an entry, not a JS array's 8). */
class Numbers {
  private items = new Uint32Array(256);
  length = 0;

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
}

/** One map in one image, in key order: each entry's key and value, their numbers in `table`, where its bytes lie. */
class MapPlacement {
  readonly keys: unknown[] = [];
  /** A plain map's strings; a record or set (undefined for bytes copied from a loaded image, copied from there). */
  readonly values: unknown[] = [];
  readonly keyRefs = new Numbers();
  readonly valueRefs = new Numbers();
  readonly chunks: Uint8Array[] = [];
  readonly starts = new Numbers();

  constructor(
    private readonly perChunk: number,
    /** The table its references are numbers of. */
    readonly table: StringTable,
  ) {}

  bytesAt(i: number): Uint8Array {
    const chunk = this.chunks[(i / this.perChunk) | 0]!;
    const next = i + 1;
    return chunk.subarray(this.starts.at(i), next === this.values.length || next % this.perChunk === 0 ? chunk.length : this.starts.at(next));
  }
}

/**
 * A cursor over the last image's map, moved along as the new image's entries come in key order: an entry the last
 * image had is given the numbers and bytes it had there.
 */
export class MapCarry<K> {
  private at = 0;
  /** The entry of the last image under the key of the entry being written, or -1. */
  private found = -1;
  private readonly last: MapPlacement | undefined;
  /** Whether the last image's string numbers are this one's (the table was kept). */
  private readonly sameTable: boolean;

  constructor(
    last: MapPlacement | undefined,
    private readonly next: MapPlacement,
    private readonly compare: (a: K, b: K) => number,
    private readonly table: StringTable,
  ) {
    this.last = last;
    this.sameTable = last?.table === table;
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
    const ref = this.found >= 0 && this.sameTable ? this.table.use(this.last!.keyRefs.at(this.found)) : this.table.ref(key as string);
    this.next.keys.push(key);
    this.next.keyRefs.push(ref);
    return ref;
  }

  /** A plain map's value of the entry: `true`, or a string's number in the table. */
  plainValue(value: unknown): number | true {
    let ref: number | true;
    if (value === true) ref = true;
    else if (this.found >= 0 && this.sameTable && this.last!.values[this.found] === value) ref = this.table.use(this.last!.valueRefs.at(this.found));
    else ref = this.table.ref(value as string);
    this.next.values.push(value);
    this.next.valueRefs.push(ref === true ? 0 : ref);
    return ref;
  }

  /** The bytes the entry's record or set had in the last image, if it had the same one. */
  bytesOf(value: object): Uint8Array | undefined {
    return this.found >= 0 && this.last!.values[this.found] === value ? this.last!.bytesAt(this.found) : undefined;
  }

  /** A piece of this image's values (undefined: bytes of a loaded image) and where each lies in `chunk`. */
  placed(values: ReadonlyArray<object | undefined>, chunk: Uint8Array, starts: readonly number[]): void {
    for (const v of values) this.next.values.push(v);
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
