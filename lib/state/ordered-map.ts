/**
 * An immutable, persistent ordered map: an AVL tree with subtree sizes.
 *
 * Why it exists: the state layer is a pure event-sourcing `reduce` — each event yields a new state
 * and the previous state must stay valid (snapshots, replay, readers holding an older version).
 * Copying a `Map` per event costs O(n); a path-copying tree rebuilds only the O(log n) nodes on the
 * path to the changed key and shares every other subtree with the old version. Subtree sizes give
 * O(log n) `at`/`rank`, so paged queries cost O(log n + page) rather than O(n).
 *
 * Nodes are never mutated after construction. Recursion depth is bounded by the tree height,
 * which for an AVL tree is below 1.45 * log2(n + 2), so a million keys means ~30 frames.
 */

export type Compare<K> = (a: K, b: K) => number;

/** Plain UTF-16 code-unit order (deterministic, locale-independent); not `localeCompare`. */
export const compareStrings: Compare<string> = (a, b) => (a < b ? -1 : a > b ? 1 : 0);
export const compareNumbers: Compare<number> = (a, b) => (a < b ? -1 : a > b ? 1 : 0);

interface Node<K, V> {
  readonly key: K;
  readonly value: V;
  readonly left: Tree<K, V>;
  readonly right: Tree<K, V>;
  readonly height: number;
  readonly size: number;
}
type Tree<K, V> = Node<K, V> | null;

const heightOf = (t: Tree<unknown, unknown>): number => (t === null ? 0 : t.height);
const sizeOf = (t: Tree<unknown, unknown>): number => (t === null ? 0 : t.size);

function node<K, V>(key: K, value: V, left: Tree<K, V>, right: Tree<K, V>): Node<K, V> {
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
function balance<K, V>(key: K, value: V, left: Tree<K, V>, right: Tree<K, V>): Node<K, V> {
  const hl = heightOf(left);
  const hr = heightOf(right);
  if (hl > hr + 1) {
    const l = left!;
    if (heightOf(l.left) >= heightOf(l.right)) {
      return node(l.key, l.value, l.left, node(key, value, l.right, right));
    }
    const lr = l.right!;
    return node(lr.key, lr.value, node(l.key, l.value, l.left, lr.left), node(key, value, lr.right, right));
  }
  if (hr > hl + 1) {
    const r = right!;
    if (heightOf(r.right) >= heightOf(r.left)) {
      return node(r.key, r.value, node(key, value, left, r.left), r.right);
    }
    const rl = r.left!;
    return node(rl.key, rl.value, node(key, value, left, rl.left), node(r.key, r.value, rl.right, r.right));
  }
  return node(key, value, left, right);
}

/** Returns `t` itself when nothing changed, so callers can detect no-ops by identity. */
function insert<K, V>(t: Tree<K, V>, key: K, value: V, compare: Compare<K>): Node<K, V> {
  if (t === null) return node(key, value, null, null);
  const c = compare(key, t.key);
  if (c < 0) {
    const left = insert(t.left, key, value, compare);
    return left === t.left ? t : balance(t.key, t.value, left, t.right);
  }
  if (c > 0) {
    const right = insert(t.right, key, value, compare);
    return right === t.right ? t : balance(t.key, t.value, t.left, right);
  }
  return value === t.value ? t : node(t.key, value, t.left, t.right);
}

/** Returns `t` itself when the key is absent. */
function remove<K, V>(t: Tree<K, V>, key: K, compare: Compare<K>): Tree<K, V> {
  if (t === null) return null;
  const c = compare(key, t.key);
  if (c < 0) {
    const left = remove(t.left, key, compare);
    return left === t.left ? t : balance(t.key, t.value, left, t.right);
  }
  if (c > 0) {
    const right = remove(t.right, key, compare);
    return right === t.right ? t : balance(t.key, t.value, t.left, right);
  }
  if (t.left === null) return t.right;
  if (t.right === null) return t.left;
  let successor = t.right;
  while (successor.left !== null) successor = successor.left;
  return balance(successor.key, successor.value, t.left, removeMin(t.right));
}

function removeMin<K, V>(t: Node<K, V>): Tree<K, V> {
  if (t.left === null) return t.right;
  return balance(t.key, t.value, removeMin(t.left), t.right);
}

/** Non-negative integer count; NaN and negatives become 0. */
const toCount = (n: number): number => (n > 0 ? Math.floor(n) : 0);

/*
 * Iteration keeps an explicit stack of pending nodes: popping a node yields it, then pushes the
 * spine of its next subtree. Each step is O(1) amortised, and starting at a rank or a key is one
 * O(log n) descent that pushes exactly the ancestors still to be visited.
 */

function pushLeftSpine<K, V>(stack: Node<K, V>[], t: Tree<K, V>): void {
  for (; t !== null; t = t.left) stack.push(t);
}

function pushRightSpine<K, V>(stack: Node<K, V>[], t: Tree<K, V>): void {
  for (; t !== null; t = t.right) stack.push(t);
}

/** Stack for ascending iteration starting at 0-based rank `index`. */
function ascendingFromIndex<K, V>(t: Tree<K, V>, index: number): Node<K, V>[] {
  const stack: Node<K, V>[] = [];
  while (t !== null) {
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
function descendingFromIndex<K, V>(t: Tree<K, V>, index: number): Node<K, V>[] {
  const stack: Node<K, V>[] = [];
  while (t !== null) {
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
function ascendingFromKey<K, V>(t: Tree<K, V>, key: K, compare: Compare<K>): Node<K, V>[] {
  const stack: Node<K, V>[] = [];
  while (t !== null) {
    if (compare(key, t.key) <= 0) {
      stack.push(t);
      t = t.left;
    } else {
      t = t.right;
    }
  }
  return stack;
}

function* walkAscending<K, V, T>(stack: Node<K, V>[], project: (n: Node<K, V>) => T): Generator<T, void, undefined> {
  while (stack.length > 0) {
    const n = stack.pop()!;
    pushLeftSpine(stack, n.right);
    yield project(n);
  }
}

const entryOf = <K, V>(n: Node<K, V>): [K, V] => [n.key, n.value];
const keyOf = <K, V>(n: Node<K, V>): K => n.key;
const valueOf = <K, V>(n: Node<K, V>): V => n.value;

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
    for (let i = 1; i < items.length; i++) {
      if (compare(key(items[i - 1]!), key(items[i]!)) >= 0) throw new Error(`fromSorted: entries are not strictly ascending at index ${i}`);
    }
    const build = (lo: number, hi: number): Tree<K, V> => {
      if (lo >= hi) return null;
      const mid = (lo + hi) >>> 1;
      const item = items[mid]!;
      return node(key(item), value(item), build(lo, mid), build(mid + 1, hi));
    };
    return new OrderedMap(build(0, items.length), compare);
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
    return this.find(key)?.value;
  }

  has(key: K): boolean {
    return this.find(key) !== null;
  }

  private find(key: K): Node<K, V> | null {
    let t = this.root;
    while (t !== null) {
      const c = this.compare(key, t.key);
      if (c === 0) return t;
      t = c < 0 ? t.left : t.right;
    }
    return null;
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

  /** Entry at 0-based rank `index` in key order, or undefined when out of range. */
  at(index: number): [K, V] | undefined {
    if (!Number.isInteger(index) || index < 0 || index >= this.size) return undefined;
    let t = this.root;
    while (t !== null) {
      const leftSize = sizeOf(t.left);
      if (index < leftSize) {
        t = t.left;
      } else if (index === leftSize) {
        return [t.key, t.value];
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
    const out: Array<[K, V]> = [];
    const start = toCount(offset);
    const max = toCount(limit);
    if (max === 0 || start >= this.size) return out;
    const stack = ascendingFromIndex(this.root, start);
    while (out.length < max && stack.length > 0) {
      const n = stack.pop()!;
      out.push([n.key, n.value]);
      pushLeftSpine(stack, n.right);
    }
    return out;
  }

  /** Up to `limit` entries in descending key order, skipping the `offset` largest. */
  sliceReverse(offset: number, limit: number): Array<[K, V]> {
    const out: Array<[K, V]> = [];
    const skip = toCount(offset);
    const max = toCount(limit);
    if (max === 0 || skip >= this.size) return out;
    const stack = descendingFromIndex(this.root, this.size - 1 - skip);
    while (out.length < max && stack.length > 0) {
      const n = stack.pop()!;
      out.push([n.key, n.value]);
      pushRightSpine(stack, n.left);
    }
    return out;
  }

  /** Lazily yields entries with keys >= `key`, ascending (e.g. a prefix scan that stops early). */
  entriesFrom(key: K): IterableIterator<[K, V]> {
    return walkAscending(ascendingFromKey(this.root, key, this.compare), entryOf);
  }

  entries(): IterableIterator<[K, V]> {
    return walkAscending(ascendingFromIndex(this.root, 0), entryOf);
  }

  keys(): IterableIterator<K> {
    return walkAscending(ascendingFromIndex(this.root, 0), keyOf);
  }

  values(): IterableIterator<V> {
    return walkAscending(ascendingFromIndex(this.root, 0), valueOf);
  }

  [Symbol.iterator](): IterableIterator<[K, V]> {
    return this.entries();
  }
}
