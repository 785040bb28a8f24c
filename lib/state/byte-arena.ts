/**
 * Room for the encoded records an image keeps (image-carry.ts), carved from a few large buffers rather than a
 * buffer each piece.
 *
 * Why: V8 marks the whole heap each time memory outside it grows by 64 MB. The first image of a state folded from
 * a long log keeps its records' bytes (219 MB at a million events) while the fold's objects (640 MB) are still
 * live, and those markings held the event loop up to ~100 ms. Room set aside before the fold grew (`reserve`, at a
 * start that will replay many events) is counted once, while the heap is small; carving it later counts nothing.
 * Pages not written are never resident.
 */
export class ByteArena {
  private slab: Uint8Array;
  private used = 0;

  constructor(first?: Uint8Array) {
    this.slab = first ?? new Uint8Array(0);
  }

  /** `n` bytes of room, not zeroed. */
  take(n: number): Uint8Array {
    if (this.used + n > this.slab.length) {
      this.slab = Buffer.allocUnsafeSlow(Math.max(n, SLAB_BYTES));
      this.used = 0;
    }
    const out = this.slab.subarray(this.used, this.used + n);
    this.used += n;
    return out;
  }
}

/** A slab once the room set aside is used up: small enough that an image's growth is a few markings at most. */
const SLAB_BYTES = 4 << 20;

/**
 * Room of `bytes` set aside now (allocated, not written: it costs address space, not memory, until used); none
 * where the system refuses that much at once (the image then takes slabs as it goes).
 */
export function reserveBytes(bytes: number): Uint8Array | undefined {
  try {
    return Buffer.allocUnsafeSlow(Math.max(0, Math.floor(bytes)));
  } catch {
    return undefined;
  }
}
