import assert from 'node:assert/strict';
import test from 'ava';
import fc from 'fast-check';
import { LazyValues } from '../lib/state/lazy-values.js';
import { OrderedMap, compareNumbers, compareStrings } from '../lib/state/ordered-map.js';

// ---------------------------------------------------------------------------------------------
// White-box helpers. The tree is private; these read its nodes structurally (never trusting the
// stored height/size fields) to check the invariants and measure the real depth.

interface RawNode {
  key: unknown;
  value: unknown;
  left: RawNode | null;
  right: RawNode | null;
  height: number;
  size: number;
}

/** A run of sorted entries (what `fromSorted` makes) stands for the balanced tree over it, its middle the root. */
interface RawRun {
  keys: unknown[];
  values: unknown[];
  lo: number;
  hi: number;
  height: number;
  size: number;
}

/** The node a run stands for (read as the map reads it), so the checks below see one kind of tree. */
function asRaw(t: RawNode | RawRun | null): RawNode | null {
  if (t === null || !('keys' in t)) return t;
  if (t.lo >= t.hi) throw new Error('an empty run');
  const mid = (t.lo + t.hi) >>> 1;
  const half = (lo: number, hi: number): RawRun | null =>
    lo < hi ? { keys: t.keys, values: t.values, lo, hi, height: 32 - Math.clz32(hi - lo), size: hi - lo } : null;
  return {
    key: t.keys[mid],
    value: t.values[mid],
    get left() {
      return asRaw(half(t.lo, mid));
    },
    get right() {
      return asRaw(half(mid + 1, t.hi));
    },
    height: t.height,
    size: t.size,
  };
}

const rootOf = (m: OrderedMap<unknown, unknown>): RawNode | null =>
  asRaw((m as unknown as { root: RawNode | RawRun | null }).root);

/** Checks order, AVL balance and the cached height/size fields; returns the actual depth. */
function checkInvariants<K>(m: OrderedMap<K, unknown>, compare: (a: K, b: K) => number): number {
  const visit = (t: RawNode | null, lo: K | undefined, hi: K | undefined): { depth: number; size: number } => {
    if (t === null) return { depth: 0, size: 0 };
    const key = t.key as K;
    if (lo !== undefined && compare(lo, key) >= 0) throw new Error(`order violated at ${String(key)}`);
    if (hi !== undefined && compare(key, hi) >= 0) throw new Error(`order violated at ${String(key)}`);
    const l = visit(asRaw(t.left), lo, key);
    const r = visit(asRaw(t.right), key, hi);
    if (Math.abs(l.depth - r.depth) > 1) throw new Error(`unbalanced at ${String(key)}`);
    const depth = Math.max(l.depth, r.depth) + 1;
    const size = l.size + r.size + 1;
    if (t.height !== depth) throw new Error(`stale height at ${String(key)}`);
    if (t.size !== size) throw new Error(`stale size at ${String(key)}`);
    return { depth, size };
  };
  const { depth, size } = visit(rootOf(m as OrderedMap<unknown, unknown>), undefined, undefined);
  if (size !== m.size) throw new Error(`size ${m.size} but tree holds ${size}`);
  return depth;
}

/**
 * Returns a map over a copy of `m`'s tree whose nodes record when they are read, to prove that
 * queries touch O(log n + page) nodes rather than walking the whole tree.
 */
function instrumented<K, V>(m: OrderedMap<K, V>): { map: OrderedMap<K, V>; touched: Set<object> } {
  const touched = new Set<object>();
  const wrap = (t: RawNode | null): RawNode | null => {
    if (t === null) return null;
    const copy: RawNode = { ...t, left: wrap(t.left), right: wrap(t.right) };
    return new Proxy(copy, {
      get(target, prop, receiver) {
        touched.add(target);
        return Reflect.get(target, prop, receiver);
      },
    });
  };
  const map = Object.create(OrderedMap.prototype) as OrderedMap<K, V>;
  Object.assign(map, { root: wrap(rootOf(m as OrderedMap<unknown, unknown>)), compare: (m as any).compare });
  touched.clear();
  return { map, touched };
}

// ---------------------------------------------------------------------------------------------
// Reference model: a JS Map plus its keys sorted with the same comparator.

class Reference<K, V> {
  constructor(
    readonly compare: (a: K, b: K) => number,
    readonly map: Map<K, V> = new Map(),
  ) {}
  clone(): Reference<K, V> {
    return new Reference(this.compare, new Map(this.map));
  }
  sortedKeys(): K[] {
    return [...this.map.keys()].sort(this.compare);
  }
  entries(): Array<[K, V]> {
    return this.sortedKeys().map((k) => [k, this.map.get(k)!]);
  }
}

type Op =
  | { kind: 'set'; key: string; value: number }
  | { kind: 'delete'; key: string }
  | { kind: 'update'; key: string; mode: 'increment' | 'remove' | 'initIfAbsent' };

// A small alphabet with short keys gives frequent collisions (overwrites, deletes of present keys).
const keyArb = fc.string({ unit: fc.constantFrom('a', 'b', 'c', 'B', 'é', '\u{1F600}'), maxLength: 3 });
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('set' as const), key: keyArb, value: fc.integer({ min: 0, max: 5 }) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('delete' as const), key: keyArb }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('update' as const),
      key: keyArb,
      mode: fc.constantFrom('increment' as const, 'remove' as const, 'initIfAbsent' as const),
    }),
  },
);

function updateFn(mode: 'increment' | 'remove' | 'initIfAbsent'): (old: number | undefined) => number | undefined {
  switch (mode) {
    case 'increment':
      return (old) => (old ?? 0) + 1;
    case 'remove':
      return () => undefined;
    case 'initIfAbsent':
      return (old) => old ?? 100;
  }
}

/** Applies `op` to both; also checks `update` hands `fn` the current value. */
function apply(m: OrderedMap<string, number>, ref: Reference<string, number>, op: Op): OrderedMap<string, number> {
  switch (op.kind) {
    case 'set':
      ref.map.set(op.key, op.value);
      return m.set(op.key, op.value);
    case 'delete':
      ref.map.delete(op.key);
      return m.delete(op.key);
    case 'update': {
      const fn = updateFn(op.mode);
      const expectedOld = ref.map.get(op.key);
      const next = fn(expectedOld);
      if (next === undefined) ref.map.delete(op.key);
      else ref.map.set(op.key, next);
      return m.update(op.key, (old) => {
        if (old !== expectedOld) throw new Error(`update saw ${old}, expected ${expectedOld}`);
        return fn(old);
      });
    }
  }
}

/**
 * Compares every read operation of `m` against `ref`. Uses node:assert (which throws) so that
 * fast-check sees the failure, shrinks it and reports the minimal op sequence.
 */
function assertMatches(
  m: OrderedMap<string, number>,
  ref: Reference<string, number>,
  probes: string[],
): void {
  const keys = ref.sortedKeys();
  const entries = ref.entries();
  const n = keys.length;
  assert.equal(m.size, n, 'size');
  checkInvariants(m, compareStrings);

  assert.deepEqual([...m], entries, 'iteration order');
  assert.deepEqual([...m.entries()], entries, 'entries()');
  assert.deepEqual([...m.keys()], keys, 'keys()');
  assert.deepEqual([...m.values()], entries.map(([, v]) => v), 'values()');
  const each: number[] = [];
  m.forEachValue((v) => each.push(v));
  assert.deepEqual(each, entries.map(([, v]) => v), 'forEachValue()');

  for (const k of [...keys, ...probes]) {
    assert.equal(m.get(k), ref.map.get(k), `get(${k})`);
    assert.equal(m.has(k), ref.map.has(k), `has(${k})`);
    const lowerBound = keys.filter((x) => x < k).length;
    assert.equal(m.rank(k), lowerBound, `rank(${k})`);
    assert.deepEqual([...m.entriesFrom(k)], entries.slice(lowerBound), `entriesFrom(${k})`);
  }

  for (let i = -1; i <= n; i++) assert.deepEqual(m.at(i), entries[i], `at(${i})`);
  assert.equal(m.at(0.5), undefined, 'at(0.5)');

  const reversed = [...entries].reverse();
  for (const offset of [0, 1, 2, Math.floor(n / 2), n - 1, n, n + 3]) {
    for (const limit of [0, 1, 2, 5, n, n + 10]) {
      if (offset < 0) continue;
      assert.deepEqual(m.slice(offset, limit), entries.slice(offset, offset + limit), `slice(${offset}, ${limit})`);
      assert.deepEqual(
        m.sliceReverse(offset, limit),
        reversed.slice(offset, offset + limit),
        `sliceReverse(${offset}, ${limit})`,
      );
    }
  }
}

// ---------------------------------------------------------------------------------------------

test('comparators use plain code-unit order', (t) => {
  t.true(compareStrings('B', 'a') < 0); // localeCompare would put 'a' first
  t.true(compareStrings('a', 'é') < 0);
  t.true(compareStrings('\u{1F600}', '\uFFFF') < 0); // surrogate pair sorts by first code unit
  t.true(compareStrings('ab', 'a') > 0);
  t.is(compareStrings('x', 'x'), 0);
  t.true(compareNumbers(2, 10) < 0);
  t.true(compareNumbers(-1, -2) > 0);
  t.is(compareNumbers(3, 3), 0);

  const m = ['b', 'B', 'a', 'A', '_'].reduce((acc, k) => acc.set(k, k), OrderedMap.empty<string, string>(compareStrings));
  t.deepEqual([...m.keys()], ['A', 'B', '_', 'a', 'b']);
});

test('empty map', (t) => {
  const m = OrderedMap.empty<number, string>(compareNumbers);
  t.is(m.size, 0);
  t.is(m.get(1), undefined);
  t.false(m.has(1));
  t.is(m.at(0), undefined);
  t.is(m.rank(5), 0);
  t.deepEqual(m.slice(0, 10), []);
  t.deepEqual(m.sliceReverse(0, 10), []);
  t.deepEqual([...m.entriesFrom(0)], []);
  t.deepEqual([...m], []);
  t.is(m.delete(1), m);
});

test('identity: no-op updates return the same map', (t) => {
  const m = OrderedMap.empty<string, number>(compareStrings).set('a', 1).set('b', 2);
  t.is(m.delete('zzz'), m);
  t.is(m.set('a', 1), m);
  t.is(m.update('zzz', () => undefined), m);
  t.not(m.set('a', 2), m);
  t.not(m.delete('a'), m);
});

test('update receives the old value and undefined deletes', (t) => {
  const seen: Array<number | undefined> = [];
  let m = OrderedMap.empty<string, number>(compareStrings);
  m = m.update('x', (old) => (seen.push(old), 1));
  m = m.update('x', (old) => (seen.push(old), old! + 1));
  t.is(m.get('x'), 2);
  m = m.update('x', (old) => (seen.push(old), undefined));
  t.false(m.has('x'));
  t.is(m.size, 0);
  t.deepEqual(seen, [undefined, 1, 2]);
});

test('slice and sliceReverse tolerate odd offsets and limits', (t) => {
  let m = OrderedMap.empty<number, number>(compareNumbers);
  for (let i = 0; i < 10; i++) m = m.set(i * 10, i);
  t.deepEqual(m.slice(8, 5), [[80, 8], [90, 9]]);
  t.deepEqual(m.slice(10, 5), []);
  t.deepEqual(m.slice(1000, 5), []);
  t.deepEqual(m.slice(0, 0), []);
  t.deepEqual(m.slice(0, -3), []);
  t.deepEqual(m.slice(-5, 2), [[0, 0], [10, 1]]);
  t.deepEqual(m.slice(0, Infinity).length, 10);
  t.deepEqual(m.sliceReverse(0, 3), [[90, 9], [80, 8], [70, 7]]);
  t.deepEqual(m.sliceReverse(8, 5), [[10, 1], [0, 0]]);
  t.deepEqual(m.sliceReverse(10, 5), []);
  t.is(m.rank(-1), 0);
  t.is(m.rank(0), 0);
  t.is(m.rank(5), 1);
  t.is(m.rank(10), 1);
  t.is(m.rank(1000), 10);
});

test('entriesFrom supports prefix range scans', (t) => {
  const keys = ['job/a', 'job/a/1', 'job/b', 'jobs', 'part/x', 'part/y', 'want/1'];
  let m = OrderedMap.empty<string, number>(compareStrings);
  keys.forEach((k, i) => (m = m.set(k, i)));
  const withPrefix = (prefix: string): string[] => {
    const out: string[] = [];
    for (const [k] of m.entriesFrom(prefix)) {
      if (!k.startsWith(prefix)) break;
      out.push(k);
    }
    return out;
  };
  t.deepEqual(withPrefix('job/'), ['job/a', 'job/a/1', 'job/b']);
  t.deepEqual(withPrefix('part/'), ['part/x', 'part/y']);
  t.deepEqual(withPrefix('nope/'), []);
  t.deepEqual(withPrefix('z'), []);
});

test('property: matches a Map + sorted keys reference after every op', (t) => {
  fc.assert(
    fc.property(fc.array(opArb, { maxLength: 60 }), fc.array(keyArb, { maxLength: 4 }), (ops, probes) => {
      let m = OrderedMap.empty<string, number>(compareStrings);
      const ref = new Reference<string, number>(compareStrings);
      for (const op of ops) {
        m = apply(m, ref, op);
        assertMatches(m, ref, probes);
      }
    }),
    { numRuns: 150 },
  );
  t.pass();
});

test('property: a map made from sorted entries (runs) matches the reference after every op, and stays balanced', (t) => {
  fc.assert(
    fc.property(
      fc.uniqueArray(keyArb, { maxLength: 40 }),
      fc.array(opArb, { maxLength: 40 }),
      fc.array(keyArb, { maxLength: 4 }),
      (initial, ops, probes) => {
        const sorted = [...initial].sort(compareStrings);
        let m = OrderedMap.fromSorted(compareStrings, sorted.map((k, i) => [k, i] as const));
        const ref = new Reference<string, number>(compareStrings, new Map(sorted.map((k, i) => [k, i])));
        const before = m;
        const beforeRef = ref.clone();
        assertMatches(m, ref, probes);
        for (const op of ops) {
          m = apply(m, ref, op);
          assertMatches(m, ref, probes);
        }
        // The first version is untouched by the changes made after it: they opened runs, never changed one.
        assertMatches(before, beforeRef, probes);
      },
    ),
    { numRuns: 200 },
  );
  t.pass();
});

test('a large map from sorted entries: reads without opening it, a change opens one path, removing every other key keeps it balanced', (t) => {
  const n = 100_000;
  const m = OrderedMap.fromSorted(compareNumbers, Array.from({ length: n }, (_, i) => [i * 2, -i] as const));
  t.is(m.size, n);
  t.is(m.get(77_778), -38_889);
  t.is(m.get(77_777), undefined);
  t.true(m.has(0));
  t.is(m.rank(77_777), 38_889);
  t.deepEqual(m.at(n - 1), [2 * (n - 1), -(n - 1)]);
  t.deepEqual(m.slice(5, 3), [[10, -5], [12, -6], [14, -7]]);
  t.deepEqual(m.sliceReverse(0, 2), [[2 * (n - 1), -(n - 1)], [2 * (n - 2), -(n - 2)]]);
  t.deepEqual([...m.entriesFrom(199_995)].map(([k]) => k), [199_996, 199_998]);
  const changed = m.set(77_777, 1);
  t.is(changed.get(77_777), 1);
  t.is(m.get(77_777), undefined);
  t.is(changed.rank(77_778), 38_890);
  t.true(checkInvariants(changed, compareNumbers) <= 1.45 * Math.log2(n + 2));
  let thinned = m;
  for (let i = 0; i < n; i += 2) thinned = thinned.delete(i * 2);
  t.is(thinned.size, n / 2);
  t.true(checkInvariants(thinned, compareNumbers) <= 1.45 * Math.log2(n / 2 + 2));
  t.deepEqual([...thinned.keys()].slice(0, 3), [2, 6, 10]);
  t.is(m.size, n);
});

test('a map of encoded values decodes only what is read: a change on it decodes nothing on its path, and its entries keep their bytes', (t) => {
  const n = 10_000;
  const chunkSize = 256;
  let decodes = 0;
  const chunks: Uint8Array[] = [];
  const starts = new Uint32Array(n);
  for (let c = 0; c * chunkSize < n; c++) {
    const count = Math.min(chunkSize, n - c * chunkSize);
    chunks.push(Uint8Array.from({ length: count }, (_, k) => (c * chunkSize + k) % 251));
    for (let k = 0; k < count; k++) starts[c * chunkSize + k] = k;
  }
  const values = new LazyValues(n, chunkSize, chunks, starts, (chunk, start) => {
    decodes++;
    return chunk[start]!;
  }, 'encoding');
  const keys = Array.from({ length: n }, (_, i) => i);
  const m = OrderedMap.fromSortedArrays(compareNumbers, keys, values);
  let changed = m.set(n + 1, 7).delete(5_000).set(2_500, 99);
  changed = changed.update(1_234, (v) => (v ?? 0) + 1);
  t.is(decodes, 1, 'only the value update read was decoded');
  t.is(changed.get(1_234), (1_234 % 251) + 1);
  t.is(changed.get(7_777), 7_777 % 251);
  t.deepEqual(changed.at(9_000), [9_001, 9_001 % 251]);
  const kept = [...changed.keptEntries()];
  t.is(kept.length, n + 1 - 1);
  // Every entry but the three set is kept as its bytes, whether a change opened a node over it or not.
  const plain = kept.filter((e) => e.length === 2).map((e) => e[0]);
  t.deepEqual(plain, [1_234, 2_500, n + 1]);
  t.true(kept.every((e) => e.length === 2 || (e[3] === 'encoding' && e[2].length === 1 && e[2][0] === e[0] % 251)));
  t.deepEqual([...changed.values()].slice(0, 3), [0, 1, 2]);
  const each: number[] = [];
  changed.forEachValue((v) => each.push(v));
  t.deepEqual(each, [...changed.values()], 'forEachValue reads runs, nodes and encoded values as values() does');
  t.true(checkInvariants(changed, compareNumbers) <= 1.45 * Math.log2(n + 2));
});

test('property: old versions are unchanged after later updates (persistence)', (t) => {
  fc.assert(
    fc.property(fc.array(opArb, { maxLength: 80 }), (ops) => {
      let m = OrderedMap.empty<string, number>(compareStrings);
      const ref = new Reference<string, number>(compareStrings);
      const versions: Array<[OrderedMap<string, number>, Reference<string, number>]> = [[m, ref.clone()]];
      for (const op of ops) {
        m = apply(m, ref, op);
        versions.push([m, ref.clone()]);
      }
      for (const [version, snapshot] of versions) assertMatches(version, snapshot, []);
    }),
    { numRuns: 100 },
  );
  t.pass();
});

test('property: numeric keys, larger maps, balanced after random inserts and deletes', (t) => {
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.boolean(), fc.integer({ min: 0, max: 2000 })), { minLength: 1, maxLength: 3000 }),
      (ops) => {
        let m = OrderedMap.empty<number, number>(compareNumbers);
        const ref = new Map<number, number>();
        for (const [insert, k] of ops) {
          if (insert) {
            m = m.set(k, -k);
            ref.set(k, -k);
          } else {
            m = m.delete(k);
            ref.delete(k);
          }
        }
        const depth = checkInvariants(m, compareNumbers);
        assert.ok(depth <= 1.45 * Math.log2(m.size + 1) + 2, `depth ${depth} for ${m.size} keys`);
        const keys = [...ref.keys()].sort(compareNumbers);
        assert.deepEqual([...m.keys()], keys);
        const mid = Math.floor(keys.length / 2);
        assert.deepEqual(
          m.slice(mid, 7).map(([k]) => k),
          keys.slice(mid, mid + 7),
        );
        assert.deepEqual(
          m.sliceReverse(mid, 7).map(([k]) => k),
          [...keys].reverse().slice(mid, mid + 7),
        );
        for (const k of [0, 17, 1000, 2001]) assert.equal(m.rank(k), keys.filter((x) => x < k).length);
      },
    ),
    { numRuns: 40 },
  );
  t.pass();
});

test('balance: 100k ascending (and descending) inserts stay within the AVL height bound', (t) => {
  const n = 100_000;
  const bound = 1.45 * Math.log2(n) + 2;

  let asc = OrderedMap.empty<number, number>(compareNumbers);
  for (let i = 0; i < n; i++) asc = asc.set(i, i);
  const ascDepth = checkInvariants(asc, compareNumbers);
  t.true(ascDepth <= bound, `ascending depth ${ascDepth} > ${bound}`);

  let desc = OrderedMap.empty<number, number>(compareNumbers);
  for (let i = n; i > 0; i--) desc = desc.set(i, i);
  const descDepth = checkInvariants(desc, compareNumbers);
  t.true(descDepth <= bound, `descending depth ${descDepth} > ${bound}`);

  // Deleting every other key keeps it balanced too.
  for (let i = 0; i < n; i += 2) asc = asc.delete(i);
  const afterDelete = checkInvariants(asc, compareNumbers);
  t.is(asc.size, n / 2);
  t.true(afterDelete <= 1.45 * Math.log2(n / 2) + 2, `depth after deletes ${afterDelete}`);
  t.deepEqual(asc.at(0), [1, 1]);
  t.is(asc.rank(50_001), 25_000);
});

test('reads and pages touch O(log n + page) nodes, and iterators are lazy', (t) => {
  let m = OrderedMap.empty<number, number>(compareNumbers);
  for (let i = 0; i < 100_000; i++) m = m.set(i, i);
  const depth = checkInvariants(m, compareNumbers);
  const { map, touched } = instrumented(m);
  const budget = (page: number): number => 3 * depth + 2 * page;

  const measure = (label: string, page: number, run: () => unknown, expected: unknown): void => {
    touched.clear();
    t.deepEqual(run(), expected, label);
    t.true(touched.size <= budget(page), `${label} touched ${touched.size} nodes (budget ${budget(page)})`);
  };

  measure('get', 0, () => map.get(77_777), 77_777);
  measure('rank', 0, () => map.rank(54_321), 54_321);
  measure('at', 0, () => map.at(31_337), [31_337, 31_337]);
  measure('slice', 20, () => map.slice(50_000, 20).map(([k]) => k), Array.from({ length: 20 }, (_, i) => 50_000 + i));
  measure(
    'sliceReverse',
    20,
    () => map.sliceReverse(50_000, 20).map(([k]) => k),
    Array.from({ length: 20 }, (_, i) => 49_999 - i),
  );
  measure('entriesFrom (3 items)', 3, () => {
    const it = map.entriesFrom(60_000);
    return [it.next().value, it.next().value, it.next().value];
  }, [[60_000, 60_000], [60_001, 60_001], [60_002, 60_002]]);
  measure('entries (first item)', 1, () => map.entries().next().value, [0, 0]);
  measure('keys (first item)', 1, () => map.keys().next().value, 0);
  measure('values (first item)', 1, () => map.values().next().value, 0);
  measure('[Symbol.iterator] (first item)', 1, () => map[Symbol.iterator]().next().value, [0, 0]);
});

test('structural sharing: an update copies only one root-to-leaf path', (t) => {
  let m = OrderedMap.empty<number, number>(compareNumbers);
  for (let i = 0; i < 10_000; i++) m = m.set(i, i);
  const collect = (root: RawNode | null): Set<RawNode> => {
    const out = new Set<RawNode>();
    const stack = root ? [root] : [];
    while (stack.length) {
      const n = stack.pop()!;
      out.add(n);
      if (n.left) stack.push(n.left);
      if (n.right) stack.push(n.right);
    }
    return out;
  };
  const before = collect(rootOf(m as OrderedMap<unknown, unknown>));
  const next = m.set(5_000, -1);
  const after = collect(rootOf(next as OrderedMap<unknown, unknown>));
  const fresh = [...after].filter((n) => !before.has(n)).length;
  t.true(fresh <= checkInvariants(next, compareNumbers), `copied ${fresh} nodes`);
  t.is(m.get(5_000), 5_000);
  t.is(next.get(5_000), -1);
});

test('updateMany equals update key by key: small batches and batches larger than the map, repeated keys, deletions, string and number keys', (t) => {
  let merged = 0;
  const check = <K>(compare: (a: K, b: K) => number, arbKey: fc.Arbitrary<K>) =>
    fc.assert(
      fc.property(
        fc.array(arbKey, { maxLength: 200 }),
        fc.oneof(fc.array(arbKey, { maxLength: 30 }), fc.array(arbKey, { minLength: 70, maxLength: 300 })),
        fc.nat(),
        (initial, batch, salt) => {
        let map = OrderedMap.empty<K, number>(compare);
        for (const k of initial) map = map.set(k, 1);
        // Deletes some keys, changes others, adds the absent ones: every branch of a merge.
        const fn = (key: K, old: number | undefined) => (old === undefined ? (salt % 3 === 0 ? undefined : 7) : (String(key).length + salt) % 2 === 0 ? undefined : old + 1);
        let byKey = map;
        for (const k of new Set(batch)) byKey = byKey.update(k, (old) => fn(k, old));
        const many = map.updateMany(batch, fn);
        if (new Set(batch).size >= 64 && new Set(batch).size >= map.size) merged++;
        assert.deepEqual([...many.entries()], [...byKey.entries()]);
        assert.equal(many.size, byKey.size);
        for (const [k, v] of byKey.entries()) assert.equal(many.get(k), v);
        // The result goes on as any map.
        const k0 = batch[0] ?? initial[0];
        if (k0 !== undefined) assert.deepEqual([...many.set(k0, 99).entries()], [...byKey.set(k0, 99).entries()]);
        },
      ),
      { numRuns: 200 },
    );
  t.notThrows(() => check(compareStrings, fc.string({ minLength: 1, maxLength: 4 })));
  t.notThrows(() => check(compareNumbers, fc.integer({ min: -500, max: 500 })));
  t.true(merged > 20, `the merge path was taken (${merged} times)`);
});

test('property: withChanges equals the same changes set one by one, stays balanced, and keeps the map it was made from', (t) => {
  fc.assert(
    fc.property(
      fc.uniqueArray(fc.integer({ min: 0, max: 400 }), { maxLength: 200 }),
      fc.array(fc.tuple(fc.integer({ min: 0, max: 400 }), fc.boolean()), { maxLength: 40 }),
      fc.array(fc.tuple(fc.integer({ min: -50, max: 450 }), fc.option(fc.integer(), { nil: undefined })), { maxLength: 150 }),
      (initial, ops, batch) => {
        const sorted = [...initial].sort(compareNumbers);
        // A run, then opened here and there by single changes: the shapes a delta is set on.
        let m = OrderedMap.fromSorted(compareNumbers, sorted.map((k) => [k, k] as const));
        for (const [k, remove] of ops) m = remove ? m.delete(k) : m.set(k, -k);
        const before = [...m.entries()];
        const changes = [...new Map(batch.map(([k, v]) => [k, v])).entries()]
          .sort((a, b) => a[0] - b[0])
          .map(([k, v]) => (v === undefined ? ([k] as const) : ([k, v] as const)));
        let oneByOne = m;
        for (const c of changes) oneByOne = c.length === 1 ? oneByOne.delete(c[0]) : oneByOne.set(c[0], c[1]);
        const bulk = m.withChanges(changes);
        assert.deepEqual([...bulk.entries()], [...oneByOne.entries()]);
        checkInvariants(bulk, compareNumbers);
        assert.deepEqual([...m.entries()], before);
      },
    ),
    { numRuns: 300 },
  );
  t.throws(() => OrderedMap.empty<number, number>(compareNumbers).withChanges([[2, 1], [1, 1]]), { message: /not strictly ascending/ });
});

test('withChanges of many new keys after a large run makes few nodes: the run is kept, the new keys become one run', (t) => {
  const n = 100_000;
  const keys = Array.from({ length: n }, (_, i) => i * 2);
  const m = OrderedMap.fromSortedArrays(compareNumbers, keys, keys);
  const changes = Array.from({ length: 20_000 }, (_, i) => [n * 2 + i, i] as const);
  const bulk = m.withChanges(changes);
  t.is(bulk.size, n + 20_000);
  t.is(bulk.get(n * 2 + 19_999), 19_999);
  t.is(bulk.get(10), 10);
  t.true(checkInvariants(bulk, compareNumbers) <= 1.45 * Math.log2(bulk.size + 2));
  // Fewer than a hundred nodes made: the spine joined, not 20,000 paths.
  let nodes = 0;
  const count = (x: unknown): void => {
    if (x === null || typeof x !== 'object' || 'keys' in (x as object)) return;
    nodes++;
    count((x as { left: unknown }).left);
    count((x as { right: unknown }).right);
  };
  count((bulk as unknown as { root: unknown }).root);
  t.true(nodes < 100, `${nodes} nodes`);
});

test('property: changesSince a map\'s base arrays gives what turns the base into the map, in key order', (t) => {
  fc.assert(
    fc.property(
      fc.uniqueArray(fc.integer({ min: 0, max: 300 }), { maxLength: 150 }),
      fc.array(fc.tuple(fc.integer({ min: 0, max: 300 }), fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined })), { maxLength: 60 }),
      (initial, ops) => {
        const sorted = [...initial].sort(compareNumbers);
        const base = OrderedMap.fromSortedArrays(compareNumbers, sorted, sorted.map((k) => `v${k}`));
        const arrays = base.baseArrays()!;
        let m = base;
        // Values from a few: a set back to the base's own value is no change.
        for (const [k, v] of ops) m = v === undefined ? m.delete(k) : m.set(k, v === 0 ? `v${k}` : `x${v}`);
        const changes = [...m.changesSince(arrays)];
        assert.deepEqual(changes.map((c) => c[0]), [...changes.map((c) => c[0])].sort(compareNumbers));
        assert.deepEqual([...base.withChanges(changes).entries()], [...m.entries()]);
        for (const c of changes) if (c.length === 2) assert.notEqual(base.get(c[0]), c[1]);
      },
    ),
    { numRuns: 300 },
  );
  t.pass();
});
