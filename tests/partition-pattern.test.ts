/** Brace patterns for partition refs: lists, integer and date ranges, products, and clear refusals. */
import test from 'ava';
import fc from 'fast-check';
import { expandPattern, expandPatterns, MAX_EXPANSION, PatternError, patternPrefix, patternSize } from '../lib/graph/partition-pattern.js';

test('lists, integer ranges (padding kept), date ranges and several braces expand in order', (t) => {
  t.deepEqual(expandPattern('daily/{a,b,c}'), ['daily/a', 'daily/b', 'daily/c']);
  t.deepEqual(expandPattern('h={1..3}'), ['h=1', 'h=2', 'h=3']);
  t.deepEqual(expandPattern('h={08..11}'), ['h=08', 'h=09', 'h=10', 'h=11']);
  t.deepEqual(expandPattern('d={2026-02-27..2026-03-02}'), ['d=2026-02-27', 'd=2026-02-28', 'd=2026-03-01', 'd=2026-03-02']);
  t.deepEqual(expandPattern('{x,y}/h={1..2}'), ['x/h=1', 'x/h=2', 'y/h=1', 'y/h=2']);
  t.deepEqual(expandPattern('plain/ref'), ['plain/ref']);
  t.is(expandPattern('daily/revenue/date={2026-01-01..2026-01-31}').length, 31);
  t.is(expandPattern('d={2024-01-01..2024-12-31}').length, 366, 'a leap year');
  t.deepEqual(expandPatterns(['a/{1..2}', 'a/{2..3}']), ['a/1', 'a/2', 'a/3'], 'duplicates dropped, first kept');
});

test('integer ranges past 2^53 expand exactly: each ref of the range once, none outside it', (t) => {
  t.deepEqual(expandPattern('n={9007199254740990..9007199254740995}'), [0, 1, 2, 3, 4, 5].map((i) => `n=900719925474099${i}`));
  t.deepEqual(expandPattern('n={9999999999999999..10000000000000001}'), ['n=9999999999999999', 'n=10000000000000000', 'n=10000000000000001']);
  t.deepEqual(expandPattern('n={000000000000000000098..000000000000000000100}'), ['n=000000000000000000098', 'n=000000000000000000099', 'n=000000000000000000100']);
  t.is(patternSize('n={18446744073709551615..18446744073709551624}'), 10);
  t.throws(() => expandPattern('n={0..99999999999999999999}'), { instanceOf: PatternError, message: /partitions; the limit is/ });
});

test('the count is the product of the sets, and matches the expansion (property)', (t) => {
  const set = fc.oneof(
    fc.array(fc.stringMatching(/^[a-z0-9]{1,4}$/), { minLength: 1, maxLength: 4 }).map((items) => ({ text: `{${items.join(',')}}`, n: items.length })),
    fc.tuple(fc.integer({ min: 0, max: 50 }), fc.integer({ min: 0, max: 30 })).map(([a, d]) => ({ text: `{${a}..${a + d}}`, n: d + 1 })),
    fc.tuple(fc.integer({ min: 0, max: 3000 }), fc.integer({ min: 0, max: 40 })).map(([a, d]) => {
      const from = new Date(Date.UTC(2020, 0, 1) + a * 86_400_000);
      const to = new Date(from.getTime() + d * 86_400_000);
      return { text: `{${from.toISOString().slice(0, 10)}..${to.toISOString().slice(0, 10)}}`, n: d + 1 };
    }),
  );
  t.notThrows(() =>
    fc.assert(
      fc.property(fc.array(set, { minLength: 1, maxLength: 3 }), (sets) => {
        const pattern = sets.map((s, i) => `p${i}=${s.text}`).join('/');
        const expected = sets.reduce((n, s) => n * s.n, 1);
        if (patternSize(pattern) !== expected) throw new Error(`size ${patternSize(pattern)} != ${expected} for ${pattern}`);
        const refs = expandPattern(pattern);
        if (refs.length !== expected) throw new Error(`expanded ${refs.length} != ${expected}`);
        if (refs.some((r) => r.includes('{') || r.includes('}'))) throw new Error('braces left in a ref');
      }),
      { numRuns: 300 },
    ),
  );
});

test('malformed patterns and expansions over the limit are refused with a message that says what to fix (property)', (t) => {
  const cases: Array<[string, RegExp]> = [
    ['a/{1..', /never closed/],
    ['a/1}', /closes no/],
    ['a/{}', /empty braces/],
    ['a/{x,,y}', /empty item/],
    ['a/{5..1}', /runs backwards/],
    ['a/{2026-02-30..2026-03-01}', /date range|real dates/],
    ['a/{a..z}', /neither an integer range/],
    ['a/{{1..2}}', /cannot nest/],
    [`a/{1..${MAX_EXPANSION}}/{1..2}`, /expands to 200,000 partitions; the limit is 100,000/],
  ];
  for (const [pattern, message] of cases) {
    const err = t.throws(() => expandPattern(pattern), { instanceOf: PatternError }, pattern);
    t.regex(err!.message, message, pattern);
  }
  t.notThrows(() =>
    fc.assert(
      fc.property(fc.stringMatching(/^[a-z{},.0-9-]{1,12}$/), (text) => {
        try {
          const refs = expandPattern(text);
          if (refs.length !== patternSize(text)) throw new Error('size and expansion disagree');
        } catch (err) {
          if (!(err instanceof PatternError)) throw err;
        }
      }),
      { numRuns: 500 },
    ),
  );
});

test('a backslash makes a brace itself, and inside braces a comma or a backslash; elsewhere it is itself', (t) => {
  t.deepEqual(expandPattern('tmpl/\\{name\\}'), ['tmpl/{name}'], 'a ref with literal braces');
  t.deepEqual(expandPattern('tmpl/\\{x\\}/{1..2}'), ['tmpl/{x}/1', 'tmpl/{x}/2']);
  t.deepEqual(expandPattern('pair/{a\\,b,c}'), ['pair/a,b', 'pair/c'], 'a comma inside an item');
  t.deepEqual(expandPattern('set/{\\{a\\},b}'), ['set/{a}', 'set/b'], 'braces inside an item');
  t.deepEqual(expandPattern('set/{a\\\\b,c}'), ['set/a\\b', 'set/c'], 'a backslash inside an item');
  // Outside braces a backslash before anything but a brace is the ref's own: the same text names the same ref
  // whether or not another part of the pattern has braces.
  t.deepEqual(expandPatterns(['a\\,b/{1,2}', 'a\\,b/3']), ['a\\,b/1', 'a\\,b/2', 'a\\,b/3']);
  t.deepEqual(expandPattern('dir\\\\/{1..2}'), ['dir\\\\/1', 'dir\\\\/2'], 'two backslashes stay two');
  t.deepEqual(expandPattern('odd/\\x/{a,b}'), ['odd/\\x/a', 'odd/\\x/b']);
  t.deepEqual(expandPattern('win\\\\path,x'), ['win\\\\path,x'], 'no brace: as written');
  t.is(patternSize('pair/{a\\,b,c}/{1..3}'), 6);
  // A brace holding an escape is a list (here of one item), never a range.
  t.deepEqual(expandPattern('v/{1..3\\,}'), ['v/1..3,']);
  const lone = t.throws(() => expandPattern('a/\\{1..2}'), { instanceOf: PatternError });
  t.regex(lone!.message, /closes no '\{' \(a literal brace is written \\}\)/);
  // What every ref of a range starts with, escapes undone: a --prefix that matches them.
  t.is(patternPrefix('tmpl/\\{x\\}/{1..2}'), 'tmpl/{x}/');
  t.is(patternPrefix('day/{1..3}'), 'day/');
  t.is(patternPrefix('{a,b}/x'), '');
  t.is(patternPrefix('plain/ref'), 'plain/ref');
});

test('a pattern in an error is shown as typed (a backslash stays one), and one holding a control character escaped', (t) => {
  const typed = t.throws(() => expandPattern('src/{a\\}'), { instanceOf: PatternError });
  t.is(typed!.message, "Partition pattern 'src/{a\\}': the '{' at position 5 is never closed (a literal brace is written \\{).");
  t.notRegex(typed!.message, /\\\\/, 'not JSON-escaped: no doubled backslash');
  const control = t.throws(() => expandPattern('a\u001b[2J/{1..'), { instanceOf: PatternError });
  t.true(control!.message.startsWith('Partition pattern "a\\u001b[2J/{1.."'), control!.message);
});
