/** LruCache against a plain model of least-recently-used order, through many evictions. */
import test from 'ava';
import { LruCache } from '../lib/graph/lru-cache.js';

/** The model: an array, oldest first. */
class ModelLru {
  readonly keys: number[] = [];
  readonly values = new Map<number, number>();
  constructor(readonly capacity: number) {}
  get(k: number): number | undefined {
    const v = this.values.get(k);
    if (v !== undefined) this.touch(k);
    return v;
  }
  set(k: number, v: number): void {
    this.values.set(k, v);
    this.touch(k);
    if (this.keys.length > this.capacity) this.values.delete(this.keys.shift()!);
  }
  delete(k: number): void {
    const i = this.keys.indexOf(k);
    if (i >= 0) this.keys.splice(i, 1);
    this.values.delete(k);
  }
  private touch(k: number): void {
    const i = this.keys.indexOf(k);
    if (i >= 0) this.keys.splice(i, 1);
    this.keys.push(k);
  }
}

test('evicts the least recently used key, through gets, deletes, clears and many evictions', (t) => {
  let seed = 7;
  const rand = (n: number): number => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) % n);
  const cache = new LruCache<number, number>(50);
  const model = new ModelLru(50);
  for (let i = 0; i < 20_000; i++) {
    const op = rand(100);
    const k = rand(120);
    if (op < 50) {
      cache.set(k, i);
      model.set(k, i);
    } else if (op < 90) {
      t.is(cache.get(k), model.get(k));
    } else if (op < 99) {
      cache.delete(k);
      model.delete(k);
    } else {
      cache.clear();
      for (const key of [...model.keys]) model.delete(key);
    }
    if (i % 1000 === 0) {
      t.is(cache.size, model.keys.length);
      for (const key of model.keys) t.true(cache.has(key));
    }
  }
  t.is(cache.size, model.keys.length);
});

test('a key read just before it would be evicted survives; the next oldest goes', (t) => {
  const cache = new LruCache<string, number>(3);
  cache.set('a', 1);
  cache.set('b', 2);
  cache.set('c', 3);
  cache.set('d', 4); // evicts a
  t.false(cache.has('a'));
  t.is(cache.get('b'), 2); // b is now the newest
  cache.set('e', 5); // evicts c
  t.false(cache.has('c'));
  t.deepEqual(['b', 'd', 'e'].map((k) => cache.has(k)), [true, true, true]);
  cache.set('f', 6); // evicts d
  cache.set('g', 7); // evicts b
  t.deepEqual(['b', 'd', 'e', 'f', 'g'].map((k) => cache.has(k)), [false, false, true, true, true]);
});
