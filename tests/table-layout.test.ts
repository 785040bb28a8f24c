/** The CLI's tables (lib/cli/table-layout.ts): cli-table3's look at their natural width, fitted to a narrower one. */
import test from 'ava';
import { fitColumns, layoutTable, outputWidth, visibleWidth, wrapLine } from '../lib/cli/table-layout.js';

const plain = (s: string) => s;
const HEAD = ['Want', 'Status', 'Partitions'];
const ROWS = [
  ['w-1', 'failed', 'daily/sales/date=2026-01-01, daily/sales/date=2026-01-02 +2 more'],
  ['w-22', 'successful', 'raw/x\nraw/y'],
];

test('at its natural width a table is drawn as cli-table3 drew it: padding, borders, a rule under the heading', (t) => {
  t.is(
    layoutTable([HEAD, ...ROWS], { headRows: 1, border: plain }),
    [
      '┌──────┬────────────┬──────────────────────────────────────────────────────────────────┐',
      '│ Want │ Status     │ Partitions                                                       │',
      '├──────┼────────────┼──────────────────────────────────────────────────────────────────┤',
      '│ w-1  │ failed     │ daily/sales/date=2026-01-01, daily/sales/date=2026-01-02 +2 more │',
      '│ w-22 │ successful │ raw/x                                                            │',
      '│      │            │ raw/y                                                            │',
      '└──────┴────────────┴──────────────────────────────────────────────────────────────────┘',
    ].join('\n'),
  );
  t.is(layoutTable([['want', 'w-1'], ['status', 'ok']], { headRows: 0, border: plain }), ['┌────────┬─────┐', '│ want   │ w-1 │', '│ status │ ok  │', '└────────┴─────┘'].join('\n'));
  t.is(layoutTable([], { headRows: 0, border: plain }), '');
});

test('fitted to a width, the widest column wraps (at spaces, then after a /, = or -) and no character is lost', (t) => {
  const out = layoutTable([HEAD, ...ROWS], { headRows: 1, width: 50, border: plain });
  const lines = out.split('\n');
  t.true(lines.every((l) => visibleWidth(l) <= 50), out);
  t.true(lines.every((l) => visibleWidth(l) === visibleWidth(lines[0]!)), 'every line as wide as the box');
  t.regex(out, /│ successful │/, 'the narrow columns keep their width');
  t.true(out.replace(/[│\s]/g, '').includes('daily/sales/date=2026-01-01,daily/sales/date=2026-01-02+2more'), out);
  t.deepEqual(wrapLine('raw/orders/date=2026-01-05', 12), ['raw/orders/', 'date=2026-', '01-05']);
  t.deepEqual(wrapLine('a long comment', 6), ['a long', 'commen', 't']);
});

test('a coloured cell is never cut; a table that cannot fit its columns is shown a row a block', (t) => {
  const red = '\x1b[31mupstream_failed\x1b[39m';
  t.is(visibleWidth(red), 15);
  t.deepEqual(wrapLine(red, 5), [red]);
  t.deepEqual(fitColumns([15, 40], [15, 0], 40), [15, 18]);
  t.is(fitColumns([20, 20, 20, 20, 20, 20], [0, 0, 0, 0, 0, 0], 30), undefined);
  // A word of a cell stays whole (up to 12 columns) while a ref wraps; two columns as wide share the excess.
  const words = layoutTable([['Run', 'Status', 'Outputs'], ['r-1', 'successful', 'raw/sales/date=2026-01-01']], { headRows: 1, width: 35, border: plain });
  t.regex(words, /│ r-1 │ successful │ raw\/sales\/ +│/, words);
  t.deepEqual(fitColumns([20, 20], [0, 0], 37), [15, 15]);
  const out = layoutTable([['Want', 'Status', 'Partitions', 'Created', 'Job runs', 'Comment'], ['w-1', 'failed', 'a/b', '2026-01-01 00:00:00', '4', 'why']], { headRows: 1, width: 40, border: plain });
  t.true(out.split('\n').every((l) => visibleWidth(l) <= 40), out);
  t.regex(out, /│ Job runs +│ 4 +│/);
  t.regex(out, /│ Created +│ 2026-01-01 00:00:00 +│/);
});

test('a cell of 10,000 columns is fitted in a few steps, not a column at a time', (t) => {
  const widths = fitColumns([10_000, 5], [0, 0], 80);
  t.deepEqual(widths, [68, 5]);
  const out = layoutTable([['x'.repeat(10_000), 'y']], { headRows: 0, width: 80, border: plain });
  // 80 columns less 7 of borders and padding, less 1 for 'y'.
  t.is(out.split('\n').length, 2 + Math.ceil(10_000 / 72));
});

test('the width is COLUMNS when set to a number, else the terminal\'s, else none', (t) => {
  const pipe = { isTTY: false, columns: 0 } as unknown as NodeJS.WriteStream;
  const tty = { isTTY: true, columns: 120 } as unknown as NodeJS.WriteStream;
  t.is(outputWidth(pipe, {}), undefined);
  t.is(outputWidth(pipe, { COLUMNS: '40' }), 40);
  t.is(outputWidth(tty, {}), 120);
  t.is(outputWidth(tty, { COLUMNS: '' }), 120);
  t.is(outputWidth(tty, { COLUMNS: 'wide' }), 120);
});
