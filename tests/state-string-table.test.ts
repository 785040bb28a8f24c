/** The snapshot image's string table (state/string-table.ts): numbers, the order strings are written in, liveness. */
import test from 'ava';
import { StringTable } from '../lib/state/string-table.js';

test('strings keep their numbers across the table blocks, and are written once each, in number order, across blocks', (t) => {
  const table = new StringTable();
  table.nextImage();
  // Past two blocks of 65,536, each string referred to twice.
  const n = 150_000;
  const numbers: number[] = [];
  for (let i = 0; i < n; i++) numbers.push(table.ref(`s-${i}`));
  for (let i = n - 1; i >= 0; i -= 7) t.is(table.ref(`s-${i}`), numbers[i]);
  t.deepEqual(numbers.slice(0, 3), [0, 1, 2]);
  t.is(numbers[n - 1], n - 1);
  // Written in slices that straddle the block boundaries.
  const written: string[] = [];
  for (let slice = table.taken(40_000); slice.length > 0; slice = table.taken(40_000)) written.push(...slice);
  t.is(written.length, n);
  t.is(written[65_535], 's-65535');
  t.is(written[65_536], 's-65536');
  t.is(written[n - 1], `s-${n - 1}`);
  t.deepEqual(table.taken(), [], 'nothing is written twice in one image');
  t.true(table.live);
});

test('a table is live while at least half of its strings are referred to in the image under way', (t) => {
  const table = new StringTable();
  table.nextImage();
  for (let i = 0; i < 70_000; i++) table.ref(`s-${i}`);
  table.nextImage();
  // The next image refers again, by number, to 34,999 of them, then to one more: half.
  for (let i = 0; i < 34_999; i++) table.use(i);
  t.false(table.live);
  table.use(69_999);
  t.true(table.live);
  // Every string of the table is written again in each image, referred to or not.
  t.is(table.taken().length, 70_000);
});
