/**
 * The values of a map loaded from a snapshot, kept encoded until read: a restart decodes the keys it needs to find
 * a record, not the million records themselves, and memory holds the file's bytes (a fraction of the objects they
 * stand for).
 *
 * Each value is encoded on its own (MessagePack against the image's shared record structures), so a read decodes
 * the one record it asks for (~1.6 us for a want). The values sit in chunks of `perChunk` (a piece of the file),
 * `starts[i]` where value i begins in its chunk.
 *
 * Nothing decoded is kept: the records of reads die young. Kept, they were promoted to the old generation as reads
 * went on, and the scavenges that copied them (7 ms each, every few hundred reads) were the p99 of reads. Two reads
 * of a record give equal objects, not the same one: nothing in platform compares records by identity.
 */
export class LazyValues<V> {
  constructor(
    readonly length: number,
    private readonly perChunk: number,
    private readonly chunks: readonly Uint8Array[],
    private readonly starts: Uint32Array,
    private readonly decode: (chunk: Uint8Array, start: number, end: number) => V,
    /** What the bytes are encoded against (an image's record shapes): a writer with the same may copy them. */
    readonly encoding: unknown = undefined,
    /** `trusted`: chunks and starts made in memory by an image's writer, not read from a file: not checked again. */
    { trusted = false } = {},
  ) {
    if (perChunk < 1 || chunks.length !== Math.ceil(length / perChunk) || starts.length !== length) {
      throw new Error(`${chunks.length} chunks of ${perChunk} and ${starts.length} starts cannot hold ${length} values`);
    }
    for (let i = 0; i < length && !trusted; i++) {
      const chunk = chunks[(i / perChunk) | 0]!;
      const end = this.endOf(i, chunk);
      if (starts[i]! >= end || end > chunk.length) throw new Error(`value ${i} lies outside its chunk`);
    }
  }

  get(i: number): V {
    const chunk = this.chunks[(i / this.perChunk) | 0]!;
    return this.decode(chunk, this.starts[i]!, this.endOf(i, chunk));
  }

  /** Value i's bytes as kept (a view, not a copy). */
  encodedAt(i: number): Uint8Array {
    const chunk = this.chunks[(i / this.perChunk) | 0]!;
    return chunk.subarray(this.starts[i]!, this.endOf(i, chunk));
  }

  /** Where value i ends: where the next begins, or its chunk's end for the last of a chunk. */
  private endOf(i: number, chunk: Uint8Array): number {
    const next = i + 1;
    return next === this.length || next % this.perChunk === 0 ? chunk.length : this.starts[next]!;
  }
}
