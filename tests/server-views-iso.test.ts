/** The views print times as `Date#toISOString` would, through a faster path that keeps the day of the last call. */
import test from 'ava';
import fc from 'fast-check';
import { iso } from '../lib/server/views.js';

const LAST = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
const expected = (ms: number): string => new Date(Number.isFinite(ms) ? Math.max(0, Math.min(ms, LAST)) : LAST).toISOString();

test('iso prints any time as toISOString does, in any order of calls (the kept day never leaks)', (t) => {
  t.notThrows(() =>
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.integer({ min: -1e13, max: 3e14 }), fc.double(), fc.constantFrom(0, LAST, LAST + 1, 86_399_999, 86_400_000, 1_795_429_974_730)), { maxLength: 20 }), (times) => {
        for (const ms of times) {
          if (iso(ms) !== expected(ms)) throw new Error(`iso(${ms}) = ${iso(ms)}, toISOString ${expected(ms)}`);
        }
      }),
      { numRuns: 500 },
    ),
  );
  t.is(iso(Number.NaN), '9999-12-31T23:59:59.999Z');
  t.is(iso(-5), '1970-01-01T00:00:00.000Z');
  t.is(iso(1_795_429_974_730), '2026-11-23T10:32:54.730Z');
  t.is(iso(1_795_429_974_730.9), '2026-11-23T10:32:54.730Z', 'a fraction of a millisecond is dropped, as Date does');
});
