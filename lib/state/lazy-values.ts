/**
 * The values of a map loaded from a snapshot, kept encoded in small blocks until read: a restart decodes the keys
 * it needs to find a record, not the million records themselves, and memory holds the file's bytes (a fraction of
 * the objects they stand for) until a record is wanted.
 *
 * Nothing decoded is kept: a read decodes its block (16 values, ~20 us for wants) and the records die young. Kept
 * decoded, they were promoted to the old generation as reads went on, and the scavenges that copied them (7 ms
 * each, every few hundred reads) were the p99 of reads. Two reads of a record give equal objects, not the same one:
 * nothing in platform compares records by identity.
 */
export class LazyValues<V> {
  constructor(
    readonly length: number,
    readonly blockSize: number,
    private readonly blocks: readonly Uint8Array[],
    private readonly decode: (block: Uint8Array) => readonly V[],
  ) {
    if (blockSize < 1 || blocks.length !== Math.ceil(length / blockSize)) {
      throw new Error(`${blocks.length} blocks of ${blockSize} cannot hold ${length} values`);
    }
  }

  get(i: number): V {
    const b = (i / this.blockSize) | 0;
    return this.block(b)[i - b * this.blockSize]!;
  }

  /** Block `b`, decoded. */
  block(b: number): readonly V[] {
    const values = this.decode(this.blocks[b]!);
    const expected = Math.min(this.blockSize, this.length - b * this.blockSize);
    // The file was checked whole when loaded (its checksum); a block of the wrong size is a bug, not damage.
    if (values.length !== expected) throw new Error(`a block of ${values.length} values where ${expected} were written`);
    return values;
  }
}
