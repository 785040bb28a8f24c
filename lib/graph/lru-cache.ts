/**
 * A bounded map that forgets the least recently used entry when full. Map keeps insertion order, so the first key is
 * the oldest; a hit moves its key to the end.
 *
 * The oldest key is read from one iterator kept across evictions, not from a new `keys()` each time: V8 leaves a
 * deleted entry in place as a hole until the table is rehashed, and a new iterator walks every hole at the front
 * again, so evicting from a full cache of 100,000 cost O(capacity) per `set` (250,000 sets: 4.5 s against 0.1 s;
 * it made an AnalyzeGraph of 150,000 refs take 11 s instead of 1). A live iterator goes past each hole once and
 * still sees the keys set after it was made, in order: what it has not reached yet is exactly the map's order.
 */
export class LruCache<K, V> {
  private readonly map = new Map<K, V>();
  private oldestFirst: Iterator<K> | undefined;

  constructor(readonly capacity: number) {
    if (!(capacity >= 1)) throw new RangeError(`LruCache capacity must be >= 1, got ${capacity}`);
  }

  get size(): number {
    return this.map.size;
  }

  get(key: K): V | undefined {
    const value = this.map.get(key);
    if (value !== undefined) {
      this.map.delete(key);
      this.map.set(key, value);
    }
    return value;
  }

  has(key: K): boolean {
    return this.map.has(key);
  }

  set(key: K, value: V): void {
    this.map.delete(key);
    this.map.set(key, value);
    if (this.map.size > this.capacity) this.map.delete(this.oldest());
  }

  delete(key: K): boolean {
    return this.map.delete(key);
  }

  clear(): void {
    this.map.clear();
    this.oldestFirst = undefined;
  }

  /** The least recently used key (the map is not empty). */
  private oldest(): K {
    let next = this.oldestFirst?.next();
    if (next === undefined || next.done === true) {
      this.oldestFirst = this.map.keys();
      next = this.oldestFirst.next();
    }
    return next.value as K;
  }
}
