/**
 * The values of a map loaded from a snapshot, kept encoded in small blocks until read: a restart decodes the keys
 * it needs to find a record, not the million records themselves, and memory holds the file's bytes (a fraction of
 * the objects they stand for) until a record is wanted.
 *
 * A block read by `get` is kept decoded, so a record read twice is the same object (as in a map of objects);
 * `peekBlock` (iteration: pages, snapshot writes) decodes without keeping, so a walk over all of them does not
 * leave all of them decoded.
 */
export class LazyValues<V> {
  private readonly decoded: Array<readonly V[] | undefined>;

  constructor(
    readonly length: number,
    readonly blockSize: number,
    private readonly blocks: readonly Uint8Array[],
    private readonly decode: (block: Uint8Array) => readonly V[],
  ) {
    if (blockSize < 1 || blocks.length !== Math.ceil(length / blockSize)) {
      throw new Error(`${blocks.length} blocks of ${blockSize} cannot hold ${length} values`);
    }
    this.decoded = new Array<readonly V[] | undefined>(blocks.length);
  }

  get(i: number): V {
    const b = (i / this.blockSize) | 0;
    let block = this.decoded[b];
    if (block === undefined) {
      block = this.decodeBlock(b);
      this.decoded[b] = block;
    }
    return block[i - b * this.blockSize]!;
  }

  /** Block `b` decoded, without keeping it decoded if it was not. */
  peekBlock(b: number): readonly V[] {
    return this.decoded[b] ?? this.decodeBlock(b);
  }

  private decodeBlock(b: number): readonly V[] {
    const values = this.decode(this.blocks[b]!);
    const expected = Math.min(this.blockSize, this.length - b * this.blockSize);
    // The file was checked whole when loaded (its checksum); a block of the wrong size is a bug, not damage.
    if (values.length !== expected) throw new Error(`a block of ${values.length} values where ${expected} were written`);
    return values;
  }
}
