/** Append-lists (a want's runs and derived wants): the items in order, an append that copies no list, the last n. */
import test from 'ava';
import fc from 'fast-check';
import { appended, emptyList, lastItems, listArray, listLength, listOf, listSlice, listSome } from '../lib/state/append-list.js';

test('property: appends and listOf keep the items in order; lastItems gives the last n; every version stays as it was', (t) => {
  fc.assert(
    fc.property(fc.array(fc.integer(), { maxLength: 1200 }), fc.nat({ max: 1300 }), (items, n) => {
      let list = emptyList<number>();
      const versions: Array<[number, ReturnType<typeof emptyList<number>>]> = [];
      for (const x of items) {
        list = appended(list, x);
        if (versions.length < 50 && x % 7 === 0) versions.push([listLength(list), list]);
      }
      t.deepEqual(listArray(list), items);
      t.deepEqual(listArray(listOf(items)), items);
      t.is(listLength(list), items.length);
      t.deepEqual(lastItems(list, n), items.slice(Math.max(0, items.length - n)));
      t.deepEqual(lastItems(listOf(items), n), items.slice(Math.max(0, items.length - n)));
      t.is(listSome(list, (x) => x === items[items.length - 1]), items.length > 0);
      t.is(listSome(list, (x) => x === items[0]), items.length > 0);
      t.is(listSome(list, (x) => x === 0.5), false);
      t.deepEqual(listSlice(list, n % 300, n), items.slice(n % 300, n));
      for (const [length, version] of versions) t.deepEqual(listArray(version), items.slice(0, length));
    }),
    { numRuns: 200 },
  );
});

test('an append copies the tail, never the items before it: 100,000 appends share their chunks', (t) => {
  let list = emptyList<string>();
  for (let i = 0; i < 100_000; i++) list = appended(list, `r-${i}`);
  const next = appended(list, 'r-new');
  t.is(next.chunks, list.chunks, 'the chunks are the very ones');
  t.true(next.tail.length <= 256);
  t.is(listLength(next), 100_001);
  t.deepEqual(lastItems(next, 2), ['r-99999', 'r-new']);
});
