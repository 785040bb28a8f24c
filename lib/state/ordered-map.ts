/**
 * An immutable, persistent ordered map: an AVL tree with subtree sizes.
 *
 * Why it exists: the state layer is a pure event-sourcing `reduce` — each event yields a new state
 * and the previous state must stay valid (snapshots, replay, readers holding an older version).
 * Copying a `Map` per event costs O(n); a path-copying tree rebuilds only the O(log n) nodes on the
 * path to the changed key and shares every other subtree with the old version. Subtree sizes give
 * O(log n) `at`/`rank`, so paged queries cost O(log n + page) rather than O(n).
 *
 * A map made from sorted entries holds them as a run (two arrays) that stands for the balanced tree
 * over them; a change opens only the runs on its path (see `Run`).
 *
 * Nodes and runs are never mutated after construction. Recursion depth is bounded by the tree height,
 * which for an AVL tree is below 1.45 * log2(n + 2), so a million keys means ~30 frames.
 */

import { LazyValues } from './lazy-values.js';

export type Compare<K> = (a: K, b: K) => number;

/** A run's values: an array, or values decoded when read (a snapshot's records; lazy-values.ts). */
export type Values<V> = readonly V[] | LazyValues<V>;

const valueAt = <V>(values: Values<V>, i: number): V => (values instanceof LazyValues ? values.get(i) : values[i]!);

/**
 * A value of a run kept encoded on the node a change opened over it: a change decodes nothing on its path but the
 * value it changes (a restart's state, or a store's after a snapshot, opened ~18 records a map for each change at
 * 250,000 wants and decoded each), and the next snapshot copies the bytes of those it did not change.
 */
class Encoded<V> {
  constructor(
    readonly values: LazyValues<V>,
    readonly i: number,
  ) {}
}

/** A node's value as kept: the value, or its bytes in a run's values. */
type Kept<V> = V | Encoded<V>;

const keptAt = <V>(values: Values<V>, i: number): Kept<V> => (values instanceof LazyValues ? new Encoded(values, i) : values[i]!);
const decoded = <V>(value: Kept<V>): V => (value instanceof Encoded ? (value.values.get(value.i) as V) : value);

/** Plain UTF-16 code-unit order (deterministic, locale-independent); not `localeCompare`. */
export const compareStrings: Compare<string> = (a, b) => (a < b ? -1 : a > b ? 1 : 0);
export const compareNumbers: Compare<number> = (a, b) => (a < b ? -1 : a > b ? 1 : 0);

interface Node<K, V> {
  readonly key: K;
  readonly value: Kept<V>;
  readonly left: Tree<K, V>;
  readonly right: Tree<K, V>;
  readonly height: number;
  readonly size: number;
}

/**
 * Entries `lo..hi-1` of sorted arrays, standing for the perfectly balanced subtree over them (its root the middle
 * entry). A map built from sorted entries is one run: no node is made until a change reaches it, and a change
 * opens only the runs on its path (`open`: a node and two smaller runs), so loading a snapshot of a million records
 * makes two arrays an index instead of a million nodes, and the tree it stands for is the one `fromSorted` used to
 * build node by node.
 */
class Run<K, V> {
  readonly size: number;
  readonly height: number;
  constructor(
    readonly keys: readonly K[],
    readonly values: Values<V>,
    readonly lo: number,
    readonly hi: number,
  ) {
    this.size = hi - lo;
    // The height of the balanced tree over n entries: the bit length of n (the left half is never the smaller).
    this.height = 32 - Math.clz32(this.size);
  }
}

type Tree<K, V> = Node<K, V> | Run<K, V> | null;

const heightOf = (t: Tree<unknown, unknown>): number => (t === null ? 0 : t.height);
const sizeOf = (t: Tree<unknown, unknown>): number => (t === null ? 0 : t.size);

function runOf<K, V>(keys: readonly K[], values: Values<V>, lo: number, hi: number): Run<K, V> | null {
  return lo < hi ? new Run(keys, values, lo, hi) : null;
}

/** A run as the node at its middle with the halves beside it as runs. */
function open<K, V>(r: Run<K, V>): Node<K, V> {
  const mid = (r.lo + r.hi) >>> 1;
  return {
    key: r.keys[mid]!,
    value: keptAt(r.values, mid),
    left: runOf(r.keys, r.values, r.lo, mid),
    right: runOf(r.keys, r.values, mid + 1, r.hi),
    height: r.height,
    size: r.size,
  };
}

const asNode = <K, V>(t: Node<K, V> | Run<K, V>): Node<K, V> => (t instanceof Run ? open(t) : t);

/** The first index in `lo..hi` whose key is >= `key`. */
function lowerBound<K>(keys: readonly K[], lo: number, hi: number, key: K, compare: Compare<K>): number {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compare(keys[mid]!, key) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function node<K, V>(key: K, value: Kept<V>, left: Tree<K, V>, right: Tree<K, V>): Node<K, V> {
  return {
    key,
    value,
    left,
    right,
    height: Math.max(heightOf(left), heightOf(right)) + 1,
    size: sizeOf(left) + sizeOf(right) + 1,
  };
}

/**
 * Builds a node from children whose heights differ by at most 2 (true after one insert or delete
 * below a balanced node), rotating so the result is balanced again.
 */
function balance<K, V>(key: K, value: Kept<V>, left: Tree<K, V>, right: Tree<K, V>): Node<K, V> {
  const hl = heightOf(left);
  const hr = heightOf(right);
  if (hl > hr + 1) {
    const l = asNode(left!);
    if (heightOf(l.left) >= heightOf(l.right)) {
      return node(l.key, l.value, l.left, node(key, value, l.right, right));
    }
    const lr = asNode(l.right!);
    return node(lr.key, lr.value, node(l.key, l.value, l.left, lr.left), node(key, value, lr.right, right));
  }
  if (hr > hl + 1) {
    const r = asNode(right!);
    if (heightOf(r.right) >= heightOf(r.left)) {
      return node(r.key, r.value, node(key, value, left, r.left), r.right);
    }
    const rl = asNode(r.left!);
    return node(rl.key, rl.value, node(key, value, left, rl.left), node(r.key, r.value, rl.right, r.right));
  }
  return node(key, value, left, right);
}

/** Returns `t` itself when nothing changed, so callers can detect no-ops by identity. */
function insert<K, V>(t: Tree<K, V>, key: K, value: V, compare: Compare<K>): Node<K, V> | Run<K, V> {
  if (t === null) return node(key, value, null, null);
  const n = asNode(t);
  const c = compare(key, n.key);
  if (c < 0) {
    const left = insert(n.left, key, value, compare);
    return left === n.left ? t : balance(n.key, n.value, left, n.right);
  }
  if (c > 0) {
    const right = insert(n.right, key, value, compare);
    return right === n.right ? t : balance(n.key, n.value, n.left, right);
  }
  return value === n.value ? t : node(n.key, value, n.left, n.right);
}

/** Returns `t` itself when the key is absent. */
function remove<K, V>(t: Tree<K, V>, key: K, compare: Compare<K>): Tree<K, V> {
  if (t === null) return null;
  const n = asNode(t);
  const c = compare(key, n.key);
  if (c < 0) {
    const left = remove(n.left, key, compare);
    return left === n.left ? t : balance(n.key, n.value, left, n.right);
  }
  if (c > 0) {
    const right = remove(n.right, key, compare);
    return right === n.right ? t : balance(n.key, n.value, n.left, right);
  }
  if (n.left === null) return n.right;
  if (n.right === null) return n.left;
  const [successorKey, successorValue] = first(n.right);
  return balance(successorKey, successorValue, n.left, removeMin(n.right));
}

function first<K, V>(t: Node<K, V> | Run<K, V>): [K, Kept<V>] {
  for (;;) {
    if (t instanceof Run) return [t.keys[t.lo]!, keptAt(t.values, t.lo)];
    if (t.left === null) return [t.key, t.value];
    t = t.left;
  }
}

/** A run without its first entry is the run after it: one shorter, so at most one lower, as a removal may be. */
function removeMin<K, V>(t: Node<K, V> | Run<K, V>): Tree<K, V> {
  if (t instanceof Run) return runOf(t.keys, t.values, t.lo + 1, t.hi);
  if (t.left === null) return t.right;
  return balance(t.key, t.value, removeMin(t.left), t.right);
}

/**
 * `left`, then `key` with `value`, then `right`, balanced, whatever the heights of the two (every key of `left` below
 * `key`, every key of `right` above): the AVL join, which descends the taller side's spine to the height of the other
 * and rebalances on the way up (each step's heights differ by at most 2, as `balance` needs).
 */
function join<K, V>(left: Tree<K, V>, key: K, value: Kept<V>, right: Tree<K, V>): Node<K, V> {
  const hl = heightOf(left);
  const hr = heightOf(right);
  if (hl > hr + 1) {
    const l = asNode(left!);
    return balance(l.key, l.value, l.left, join(l.right, key, value, right));
  }
  if (hr > hl + 1) {
    const r = asNode(right!);
    return balance(r.key, r.value, join(left, key, value, r.left), r.right);
  }
  return node(key, value, left, right);
}

/** `left` then `right`, balanced (every key of `left` below every key of `right`). */
function concat<K, V>(left: Tree<K, V>, right: Tree<K, V>): Tree<K, V> {
  if (left === null) return right;
  if (right === null) return left;
  const [key, value] = first(right);
  return join(left, key, value, removeMin(right));
}

/** An entry gone in a batch of changes (`withChanges`). */
const GONE: unique symbol = Symbol('gone');

/**
 * `t` with the sorted changes `keys[a..b)` set (or, where the value is GONE, removed): the subtrees no change reaches
 * are kept as they are, runs included, and new keys where the tree has none become one run over them. Makes the nodes
 * on the changes' paths once each, O(m log(n/m + 1)), where m changes set one by one make m paths of log n.
 */
function applySorted<K, V>(t: Tree<K, V>, keys: readonly K[], values: ReadonlyArray<V | typeof GONE>, a: number, b: number, compare: Compare<K>): Tree<K, V> {
  if (a >= b) return t;
  if (t === null) {
    const newKeys: K[] = [];
    const newValues: V[] = [];
    for (let i = a; i < b; i++) {
      const v = values[i]!;
      if (v === GONE) continue;
      newKeys.push(keys[i]!);
      newValues.push(v);
    }
    return runOf(newKeys, newValues, 0, newKeys.length);
  }
  const n = asNode(t);
  const s = lowerBound(keys, a, b, n.key, compare);
  const hit = s < b && compare(keys[s]!, n.key) === 0;
  const left = applySorted(n.left, keys, values, a, s, compare);
  const right = applySorted(n.right, keys, values, hit ? s + 1 : s, b, compare);
  if (!hit && left === n.left && right === n.right) return t;
  const v = hit ? values[s]! : n.value;
  return v === GONE ? concat(left, right) : join(left, n.key, v, right);
}

/** Non-negative integer count; NaN and negatives become 0. */
const toCount = (n: number): number => (n > 0 ? Math.floor(n) : 0);

/*
 * Iteration keeps an explicit stack of pending nodes and cursors: popping a node yields it, then pushes the spine of
 * its next subtree; a cursor walks a run's arrays in place. Each step is O(1) amortised, and starting at a rank or
 * a key is one O(log n) descent that pushes exactly the ancestors still to be visited.
 */

class Cursor<K, V> {
  constructor(
    readonly run: Run<K, V>,
    public i: number,
    /** +1 ascending, -1 descending. */
    readonly step: 1 | -1,
  ) {}
}

type Pending<K, V> = Node<K, V> | Cursor<K, V>;

function pushLeftSpine<K, V>(stack: Pending<K, V>[], t: Tree<K, V>): void {
  for (; t !== null; t = t.left) {
    if (t instanceof Run) {
      stack.push(new Cursor(t, t.lo, 1));
      return;
    }
    stack.push(t);
  }
}

function pushRightSpine<K, V>(stack: Pending<K, V>[], t: Tree<K, V>): void {
  for (; t !== null; t = t.right) {
    if (t instanceof Run) {
      stack.push(new Cursor(t, t.hi - 1, -1));
      return;
    }
    stack.push(t);
  }
}

/** Stack for ascending iteration starting at 0-based rank `index`. */
function ascendingFromIndex<K, V>(t: Tree<K, V>, index: number): Pending<K, V>[] {
  const stack: Pending<K, V>[] = [];
  while (t !== null) {
    if (t instanceof Run) {
      stack.push(new Cursor(t, t.lo + index, 1));
      break;
    }
    const leftSize = sizeOf(t.left);
    if (index < leftSize) {
      stack.push(t);
      t = t.left;
    } else if (index === leftSize) {
      stack.push(t);
      break;
    } else {
      index -= leftSize + 1;
      t = t.right;
    }
  }
  return stack;
}

/** Stack for descending iteration starting at 0-based rank `index`. */
function descendingFromIndex<K, V>(t: Tree<K, V>, index: number): Pending<K, V>[] {
  const stack: Pending<K, V>[] = [];
  while (t !== null) {
    if (t instanceof Run) {
      stack.push(new Cursor(t, t.lo + index, -1));
      break;
    }
    const leftSize = sizeOf(t.left);
    if (index < leftSize) {
      t = t.left;
    } else if (index === leftSize) {
      stack.push(t);
      break;
    } else {
      stack.push(t);
      index -= leftSize + 1;
      t = t.right;
    }
  }
  return stack;
}

/** Stack for ascending iteration starting at the first key >= `key`. */
function ascendingFromKey<K, V>(t: Tree<K, V>, key: K, compare: Compare<K>): Pending<K, V>[] {
  const stack: Pending<K, V>[] = [];
  while (t !== null) {
    if (t instanceof Run) {
      const i = lowerBound(t.keys, t.lo, t.hi, key, compare);
      if (i < t.hi) stack.push(new Cursor(t, i, 1));
      break;
    }
    if (compare(key, t.key) <= 0) {
      stack.push(t);
      t = t.left;
    } else {
      t = t.right;
    }
  }
  return stack;
}

/**
 * What a walk makes of an entry: a node's value comes as `value`; a run's as its `values` and index, so a walk that
 * needs only keys (or the encoded bytes) never decodes a value kept encoded.
 */
type Project<K, V, T> = (key: K, value: Kept<V> | undefined, values: Values<V> | undefined, i: number) => T;

function* walk<K, V, T>(stack: Pending<K, V>[], descending: boolean, project: Project<K, V, T>): Generator<T, void, undefined> {
  for (;;) {
    const top = stack[stack.length - 1];
    if (top === undefined) return;
    if (top instanceof Cursor) {
      const i = top.i;
      top.i += top.step;
      if (top.i < top.run.lo || top.i >= top.run.hi) stack.pop();
      yield project(top.run.keys[i]!, undefined, top.run.values, i);
    } else {
      stack.pop();
      if (descending) pushRightSpine(stack, top.left);
      else pushLeftSpine(stack, top.right);
      yield project(top.key, top.value, undefined, 0);
    }
  }
}

/** A stretch of a run's entries, in order: its arrays and the range of them. */
export interface RunSlice<K, V> {
  readonly keys: readonly K[];
  readonly values: Values<V>;
  readonly lo: number;
  readonly hi: number;
}

/** An entry as kept (a node's), or a stretch of a run's entries (`RunSlice`), in ascending order. */
export type KeptPart<K, V> = KeptEntry<K, V> | RunSlice<K, V>;

/**
 * Ascending, a run's remaining entries at once where `whole` takes the stretch (a cursor on top of the stack has the
 * next of them all), else entry by entry as kept.
 */
function* walkParts<K, V>(stack: Pending<K, V>[], whole: (slice: RunSlice<K, V>) => boolean): Generator<KeptPart<K, V>, void, undefined> {
  for (;;) {
    const top = stack.pop();
    if (top === undefined) return;
    if (top instanceof Cursor) {
      const slice: RunSlice<K, V> = { keys: top.run.keys, values: top.run.values, lo: top.i, hi: top.run.hi };
      if (whole(slice)) yield slice;
      else for (let i = slice.lo; i < slice.hi; i++) yield keptOf(slice.keys[i]!, undefined, slice.values, i);
    } else {
      pushLeftSpine(stack, top.right);
      yield keptOf(top.key, top.value, undefined, 0);
    }
  }
}

function eachValue<K, V>(t: Tree<K, V>, fn: (value: V) => void): void {
  while (t !== null) {
    if (t instanceof Run) {
      for (let i = t.lo; i < t.hi; i++) fn(valueAt(t.values, i));
      return;
    }
    eachValue(t.left, fn);
    fn(decoded(t.value));
    t = t.right;
  }
}

function take<T>(items: Iterator<T>, max: number): T[] {
  const out: T[] = [];
  while (out.length < max) {
    const next = items.next();
    if (next.done) break;
    out.push(next.value);
  }
  return out;
}

const read = <V>(value: Kept<V> | undefined, values: Values<V> | undefined, i: number): V => (values ? valueAt(values, i) : decoded(value!));
const entryOf = <K, V>(key: K, value: Kept<V> | undefined, values: Values<V> | undefined, i: number): [K, V] => [key, read(value, values, i)];
const keyOf = <K>(key: K): K => key;
const valueOf = <K, V>(_key: K, value: Kept<V> | undefined, values: Values<V> | undefined, i: number): V => read(value, values, i);

/** An entry with its value as kept: decoded, or the encoded bytes and what encoded them (`LazyValues.encoding`). */
export type KeptEntry<K, V> = [key: K, value: V] | [key: K, value: undefined, encoded: Uint8Array, encoding: unknown];

const keptOf = <K, V>(key: K, value: Kept<V> | undefined, values: Values<V> | undefined, i: number): KeptEntry<K, V> =>
  values instanceof LazyValues
    ? [key, undefined, values.encodedAt(i), values.encoding]
    : value instanceof Encoded
      ? [key, undefined, value.values.encodedAt(value.i), value.values.encoding]
      : [key, read(value, values, i)];

/** How an entry of a map differs from its base (`OrderedMap.changesSince`): set to a value, or gone. */
export type MapChange<K, V> = readonly [key: K, value: V] | readonly [key: K];

/**
 * The changes that make a map from the sorted arrays it was made of (`base`), found by walking only what was
 * opened since: a run still over the base's arrays is a stretch of them unchanged, a node whose value is still
 * encoded in the base's values is that entry unchanged; any other entry is looked up in the base (forward from the
 * last one found, as both go in key order) and is a change unless a plain value is the very one there. Base entries
 * no stretch or entry came to are gone. Costs the nodes opened and the changes, not the map's size.
 */
function* changes<K, V>(root: Tree<K, V>, baseKeys: readonly K[], baseValues: Values<V>, compare: Compare<K>): Generator<MapChange<K, V>, void, undefined> {
  let next = 0;
  const n = baseKeys.length;
  const plainBase = !(baseValues instanceof LazyValues);
  function* gone(upTo: number): Generator<MapChange<K, V>, void, undefined> {
    for (; next < upTo; next++) yield [baseKeys[next]!];
  }
  function* entry(key: K, value: Kept<V>): Generator<MapChange<K, V>, void, undefined> {
    const j = lowerBound(baseKeys, next, n, key, compare);
    yield* gone(j);
    const inBase = j < n && compare(baseKeys[j]!, key) === 0;
    if (inBase) next = j + 1;
    if (inBase && plainBase && (baseValues as readonly V[])[j] === value) return;
    if (inBase && value instanceof Encoded && value.values === baseValues && value.i === j) return;
    yield [key, decoded(value)];
  }
  const stack: Array<Node<K, V>> = [];
  let t: Tree<K, V> = root;
  for (;;) {
    while (t !== null && !(t instanceof Run)) {
      stack.push(t);
      t = t.left;
    }
    if (t instanceof Run) {
      if (t.keys === baseKeys && t.values === baseValues) {
        yield* gone(t.lo);
        next = t.hi;
      } else {
        for (let i = t.lo; i < t.hi; i++) yield* entry(t.keys[i]!, keptAt(t.values, i));
      }
      t = null;
    }
    const top = stack.pop();
    if (top === undefined) break;
    yield* entry(top.key, top.value);
    t = top.right;
  }
  yield* gone(n);
}

export class OrderedMap<K, V> {
  private constructor(
    private readonly root: Tree<K, V>,
    private readonly compare: Compare<K>,
  ) {}

  /**
   * A map of entries already sorted by `compare` with no repeated key, built balanced in O(n) (no n log n of
   * inserts): how a snapshot is loaded. Throws if the entries are not strictly ascending.
   */
  static fromSorted<K, V>(compare: Compare<K>, entries: ReadonlyArray<readonly [K, V]>): OrderedMap<K, V> {
    return OrderedMap.fromSortedBy(compare, entries, (e) => e[0], (e) => e[1]);
  }

  /**
   * `fromSorted` of items read through `key` and `value`: a snapshot's records become a map without an entry pair
   * made for each (a million short-lived pairs were a good part of a load's garbage collection).
   */
  static fromSortedBy<T, K, V>(compare: Compare<K>, items: ReadonlyArray<T>, key: (item: T) => K, value: (item: T) => V): OrderedMap<K, V> {
    const n = items.length;
    const keys = new Array<K>(n);
    const values = new Array<V>(n);
    for (let i = 0; i < n; i++) {
      const item = items[i]!;
      keys[i] = key(item);
      values[i] = value(item);
      if (i > 0 && compare(keys[i - 1]!, keys[i]!) >= 0) throw new Error(`fromSorted: entries are not strictly ascending at index ${i}`);
    }
    return new OrderedMap(runOf(keys, values, 0, n), compare);
  }

  /**
   * A map over sorted keys and their values as they are (no copy): a snapshot's indexes, the values possibly still
   * encoded. Throws if the keys are not strictly ascending or the counts differ; `trusted` keys (a walk of a map of
   * the same order) are not checked again.
   */
  static fromSortedArrays<K, V>(compare: Compare<K>, keys: readonly K[], values: Values<V>, { trusted = false } = {}): OrderedMap<K, V> {
    if (keys.length !== values.length) throw new Error(`fromSortedArrays: ${keys.length} keys for ${values.length} values`);
    for (let i = 1; i < keys.length && !trusted; i++) {
      if (compare(keys[i - 1]!, keys[i]!) >= 0) throw new Error(`fromSorted: entries are not strictly ascending at index ${i}`);
    }
    return new OrderedMap(runOf(keys, values, 0, keys.length), compare);
  }

  static empty<K, V>(compare: Compare<K>): OrderedMap<K, V> {
    return new OrderedMap<K, V>(null, compare);
  }

  private withRoot(root: Tree<K, V>): OrderedMap<K, V> {
    return root === this.root ? this : new OrderedMap(root, this.compare);
  }

  get size(): number {
    return sizeOf(this.root);
  }

  get(key: K): V | undefined {
    let t = this.root;
    while (t !== null) {
      if (t instanceof Run) {
        const i = lowerBound(t.keys, t.lo, t.hi, key, this.compare);
        return i < t.hi && this.compare(t.keys[i]!, key) === 0 ? valueAt(t.values, i) : undefined;
      }
      const c = this.compare(key, t.key);
      if (c === 0) return decoded(t.value);
      t = c < 0 ? t.left : t.right;
    }
    return undefined;
  }

  has(key: K): boolean {
    let t = this.root;
    while (t !== null) {
      if (t instanceof Run) {
        const i = lowerBound(t.keys, t.lo, t.hi, key, this.compare);
        return i < t.hi && this.compare(t.keys[i]!, key) === 0;
      }
      const c = this.compare(key, t.key);
      if (c === 0) return true;
      t = c < 0 ? t.left : t.right;
    }
    return false;
  }

  /** Returns a new map; `this` is unchanged. Returns `this` if `key` already maps to `value` (===). */
  set(key: K, value: V): OrderedMap<K, V> {
    return this.withRoot(insert(this.root, key, value, this.compare));
  }

  /** Returns a new map without `key`, or `this` when the key is absent. */
  delete(key: K): OrderedMap<K, V> {
    return this.withRoot(remove(this.root, key, this.compare));
  }

  /** Sets `key` to `fn(current)`; an `undefined` result deletes the key. */
  update(key: K, fn: (old: V | undefined) => V | undefined): OrderedMap<K, V> {
    const next = fn(this.get(key));
    return next === undefined ? this.delete(key) : this.set(key, next);
  }

  /**
   * `update` of each of `keys` (any order; a repeated key is updated once). A batch at least as large as the map
   * (a backfill's 100,000 refs into a young index) is merged with the map's entries into one run, O((n + k) log k),
   * where k updates one by one open k paths of nodes (most of folding such a want was their garbage collection);
   * a smaller batch goes key by key, as a merge would decode and copy the whole map for it.
   */
  updateMany(keys: Iterable<K>, fn: (key: K, old: V | undefined) => V | undefined): OrderedMap<K, V> {
    const batch = [...new Set(keys)];
    if (batch.length < 64 || batch.length < this.size) {
      let next: OrderedMap<K, V> = this;
      for (const key of batch) next = next.update(key, (old) => fn(key, old));
      return next;
    }
    // Strings in code-unit order are the default sort's, several times faster than through a comparator.
    if ((this.compare as Compare<unknown>) === compareStrings) batch.sort();
    else batch.sort(this.compare);
    const outKeys: K[] = [];
    const outValues: V[] = [];
    const put = (key: K, value: V | undefined) => {
      if (value === undefined) return;
      outKeys.push(key);
      outValues.push(value);
    };
    let i = 0;
    for (const [key, value] of this.entries()) {
      while (i < batch.length && this.compare(batch[i]!, key) < 0) put(batch[i]!, fn(batch[i]!, undefined)), i++;
      if (i < batch.length && this.compare(batch[i]!, key) === 0) put(key, fn(key, value)), i++;
      else put(key, value);
    }
    for (; i < batch.length; i++) put(batch[i]!, fn(batch[i]!, undefined));
    return new OrderedMap(runOf(outKeys, outValues, 0, outKeys.length), this.compare);
  }

  /**
   * The map with a batch of changes in strictly ascending key order (`MapChange`s: a key set to a value, or a key
   * alone, removed): the nodes on their paths are made once (`applySorted`), so a delta of 200,000 changes loads in a
   * fraction of 200,000 `set`s. Throws if the keys are not strictly ascending.
   */
  withChanges(changes: ReadonlyArray<MapChange<K, V>>): OrderedMap<K, V> {
    const keys = new Array<K>(changes.length);
    const values = new Array<V | typeof GONE>(changes.length);
    for (let i = 0; i < changes.length; i++) {
      const change = changes[i]!;
      keys[i] = change[0];
      values[i] = change.length === 1 ? GONE : change[1];
      if (i > 0 && this.compare(keys[i - 1]!, keys[i]!) >= 0) throw new Error(`withChanges: keys are not strictly ascending at index ${i}`);
    }
    return this.withRoot(applySorted(this.root, keys, values, 0, changes.length, this.compare));
  }

  /** Entry at 0-based rank `index` in key order, or undefined when out of range. */
  at(index: number): [K, V] | undefined {
    if (!Number.isInteger(index) || index < 0 || index >= this.size) return undefined;
    let t = this.root;
    while (t !== null) {
      if (t instanceof Run) return [t.keys[t.lo + index]!, valueAt(t.values, t.lo + index)];
      const leftSize = sizeOf(t.left);
      if (index < leftSize) {
        t = t.left;
      } else if (index === leftSize) {
        return [t.key, decoded(t.value)];
      } else {
        index -= leftSize + 1;
        t = t.right;
      }
    }
    return undefined;
  }

  /** Number of keys strictly less than `key` (the index where `key` is or would be inserted). */
  rank(key: K): number {
    let rank = 0;
    let t = this.root;
    while (t !== null) {
      if (t instanceof Run) return rank + lowerBound(t.keys, t.lo, t.hi, key, this.compare) - t.lo;
      if (this.compare(key, t.key) <= 0) {
        t = t.left;
      } else {
        rank += sizeOf(t.left) + 1;
        t = t.right;
      }
    }
    return rank;
  }

  /** Up to `limit` entries in ascending key order, skipping the first `offset`. */
  slice(offset: number, limit: number): Array<[K, V]> {
    const start = toCount(offset);
    const max = toCount(limit);
    if (max === 0 || start >= this.size) return [];
    return take(walk(ascendingFromIndex(this.root, start), false, entryOf), max);
  }

  /** Up to `limit` entries in descending key order, skipping the `offset` largest. */
  sliceReverse(offset: number, limit: number): Array<[K, V]> {
    const skip = toCount(offset);
    const max = toCount(limit);
    if (max === 0 || skip >= this.size) return [];
    return take(walk(descendingFromIndex(this.root, this.size - 1 - skip), true, entryOf), max);
  }

  /** Lazily yields entries with keys >= `key`, ascending (e.g. a prefix scan that stops early). */
  entriesFrom(key: K): IterableIterator<[K, V]> {
    return walk(ascendingFromKey(this.root, key, this.compare), false, entryOf);
  }

  entries(): IterableIterator<[K, V]> {
    return walk(ascendingFromIndex(this.root, 0), false, entryOf);
  }

  keys(): IterableIterator<K> {
    return walk(ascendingFromIndex(this.root, 0), false, keyOf);
  }

  values(): IterableIterator<V> {
    return walk(ascendingFromIndex(this.root, 0), false, valueOf);
  }

  /**
   * Each value in key order, without an iterator: the fold walks the wants on a ref several times an event, and a
   * generator's walk (its stack, cursor and result objects) cost more than the few values it yielded.
   */
  forEachValue(fn: (value: V) => void): void {
    eachValue(this.root, fn);
  }

  /** Entries in key order with values kept encoded left so (a snapshot copies their bytes as they are). */
  keptEntries(): IterableIterator<KeptEntry<K, V>> {
    return walk(ascendingFromIndex(this.root, 0), false, keptOf);
  }

  /**
   * The entries in ascending order as kept (`keptEntries`), but a run's stretch that `whole` takes at once (arrays
   * and a range): a writer may copy a stretch it wrote before as a whole instead of entry by entry.
   */
  keptParts(whole: (slice: RunSlice<K, V>) => boolean): IterableIterator<KeptPart<K, V>> {
    return walkParts(ascendingFromIndex(this.root, 0), whole);
  }

  /**
   * The arrays of a map that is still one run over them, as `fromSortedArrays` made it (an image's map as loaded):
   * what `changesSince` compares a later version with. Undefined once a change opened it.
   */
  baseArrays(): { keys: readonly K[]; values: Values<V> } | undefined {
    const t = this.root;
    if (t === null) return { keys: [], values: [] };
    return t instanceof Run && t.lo === 0 && t.hi === t.keys.length ? { keys: t.keys, values: t.values } : undefined;
  }

  /** The changes that make this map from `base` (`baseArrays` of an earlier version), in key order (`changes`). */
  changesSince(base: { keys: readonly K[]; values: Values<V> }): IterableIterator<MapChange<K, V>> {
    return changes(this.root, base.keys, base.values, this.compare);
  }

  [Symbol.iterator](): IterableIterator<[K, V]> {
    return this.entries();
  }
}
