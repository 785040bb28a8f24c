/** The string table's maps (a power of two). */
const STRING_SHARDS = 256;
/** Strings a block of the table holds (2^16). */
const BLOCK_BITS = 16;
const BLOCK = 1 << BLOCK_BITS;
const BLOCK_MASK = BLOCK - 1;

/**
 * A string's map in the table: a hash of at most 16 of its characters, evenly spaced from the last, so the cost
 * stays flat for long refs and the characters that differ between ids and refs (their ends, a date in the
 * middle) are in it.
 */
function shardOf(s: string): number {
  let h = s.length;
  const step = Math.max(1, s.length >> 4);
  for (let i = s.length - 1; i >= 0; i -= step) h = (Math.imul(h, 31) + s.charCodeAt(i)) | 0;
  return (h ^ (h >>> 8)) & (STRING_SHARDS - 1);
}

/**
 * Strings written once in a snapshot image and referred to by number: an id is a key of its map and a value of two
 * or three indexes (want ids in `wants`, `want_order`, `wants_by_status`), so an image decodes 1.5 million strings
 * at 250,000 wants instead of 3.25 million, and the loaded maps share them.
 *
 * A store keeps its table from one image to the next (image-carry.ts): an entry the last image had is given its
 * number again without a lookup, and only new strings are hashed. Each image writes the whole table first, so
 * strings no image refers to any more are written too, until they are half the table: then the next image starts a
 * new one (`live`).
 */
export class StringTable {
  /**
   * Many small maps, not one: a Map that grows rehashes every entry at once, and at a million strings that held the
   * event loop for ~0.1 s in the middle of a background snapshot's frame.
   */
  private readonly shards = Array.from({ length: STRING_SHARDS }, () => new Map<string, number>());
  /**
   * The strings by number, and the image each was last referred to in, in blocks that are never copied: a list of
   * all of them grew by half its length at a time, and copying 1.3 million strings held the loop 17 ms inside one
   * lookup (the first image after a first start of a million events).
   */
  private readonly strings: string[][] = [];
  private readonly seen: Uint32Array[] = [];
  private count = 0;
  private image = 0;
  private used = 0;
  private writtenUpTo = 0;

  /**
   * A table holding `strings` under their numbers (a loaded image's): numbers given later follow them. They are not
   * looked up by content, so a string of theirs met again at a new place gets a new number, written twice: the
   * lookup maps of a million strings would cost a start ~0.5 s, and the carry gives the strings it meets at their
   * old places their old numbers without a lookup.
   */
  static of(strings: readonly string[]): StringTable {
    const table = new StringTable();
    for (let at = 0; at < strings.length; at += BLOCK) {
      table.strings.push(strings.slice(at, at + BLOCK));
      table.seen.push(new Uint32Array(BLOCK));
    }
    table.count = strings.length;
    return table;
  }

  /** Starts an image: every string is written again, and what it refers to is counted afresh. */
  nextImage(): void {
    this.image++;
    this.used = 0;
    this.writtenUpTo = 0;
  }

  ref(s: string): number {
    // A plain map's values are strings or `true`: anything else must not pass for a reference.
    if (typeof s !== 'string') throw new Error(`an image holds strings and true in its plain maps, not ${typeof s}`);
    const shard = this.shards[shardOf(s)]!;
    let n = shard.get(s);
    if (n === undefined) {
      n = this.count++;
      shard.set(s, n);
      if ((n & BLOCK_MASK) === 0) {
        this.strings.push([]);
        this.seen.push(new Uint32Array(BLOCK));
      }
      this.strings[n >>> BLOCK_BITS]!.push(s);
    }
    return this.use(n);
  }

  /** `n`, a number this table gave in an earlier image, referred to again. */
  use(n: number): number {
    const seen = this.seen[n >>> BLOCK_BITS]!;
    if (seen[n & BLOCK_MASK] !== this.image) {
      seen[n & BLOCK_MASK] = this.image;
      this.used++;
    }
    return n;
  }

  /** The strings not yet written in this image, in order, at most `max`. */
  taken(max = Number.MAX_SAFE_INTEGER): string[] {
    const end = Math.min(this.count, this.writtenUpTo + max);
    const out: string[] = [];
    for (let n = this.writtenUpTo; n < end; ) {
      const block = this.strings[n >>> BLOCK_BITS]!;
      const from = n & BLOCK_MASK;
      const to = Math.min(block.length, from + (end - n));
      for (let i = from; i < to; i++) out.push(block[i]!);
      n += to - from;
    }
    this.writtenUpTo = end;
    return out;
  }

  /** Whether at least half of the table was referred to in this image: worth keeping for the next. */
  get live(): boolean {
    return 2 * this.used >= this.count;
  }
}
