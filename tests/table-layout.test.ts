/**
 * The CLI's tables (lib/cli/table-layout.ts): laid out there, drawn by cli-table3; as cli-table3 drew them at their
 * natural width, fitted to a narrower one, and never a cell of several lines handed to cli-table3 (its slow path).
 */
import test from 'ava';
import Table from 'cli-table3';
import { CHUNK_ROWS, drawTables, fitColumns, layoutTable, outputWidth, tableChunks, visibleWidth, wrapLine, type TableOptions } from '../lib/cli/table-layout.js';

/** The table as the CLI prints it in a pipe: laid out, then drawn by cli-table3 without colour. */
const draw = (rows: ReadonlyArray<readonly string[]>, options: TableOptions): string => drawTables(layoutTable(rows, options), false);
const HEAD = ['Want', 'Status', 'Partitions'];
const ROWS = [
  ['w-1', 'failed', 'daily/sales/date=2026-01-01, daily/sales/date=2026-01-02 +2 more'],
  ['w-22', 'successful', 'raw/x\nraw/y'],
];

test('at its natural width a table is drawn as cli-table3 drew it: padding, borders, a rule under the heading', (t) => {
  // As output.ts drew its tables before they were fitted: cli-table3 given the cells whole, multi-line ones too.
  const whole = new Table({ head: HEAD, style: { head: [], border: [], compact: true }, wordWrap: false });
  whole.push(...ROWS);
  t.is(draw([HEAD, ...ROWS], { headRows: 1 }), whole.toString());
  t.is(
    draw([HEAD, ...ROWS], { headRows: 1 }),
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
  t.is(draw([['want', 'w-1'], ['status', 'ok']], { headRows: 0 }), ['┌────────┬─────┐', '│ want   │ w-1 │', '│ status │ ok  │', '└────────┴─────┘'].join('\n'));
  t.is(draw([], { headRows: 0 }), '');
});

test('fitted to a width, the widest column wraps (at spaces, then after a /, = or -) and no character is lost', (t) => {
  const out = draw([HEAD, ...ROWS], { headRows: 1, width: 50 });
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
  const words = draw([['Run', 'Status', 'Outputs'], ['r-1', 'successful', 'raw/sales/date=2026-01-01']], { headRows: 1, width: 35 });
  t.regex(words, /│ r-1 │ successful │ raw\/sales\/ +│/, words);
  t.deepEqual(fitColumns([20, 20], [0, 0], 37), [15, 15]);
  const out = draw([['Want', 'Status', 'Partitions', 'Created', 'Job runs', 'Comment'], ['w-1', 'failed', 'a/b', '2026-01-01 00:00:00', '4', 'why']], { headRows: 1, width: 40 });
  t.true(out.split('\n').every((l) => visibleWidth(l) <= 40), out);
  t.regex(out, /│ Job runs +│ 4 +│/);
  t.regex(out, /│ Created +│ 2026-01-01 00:00:00 +│/);
});

test('a wide character takes two columns, as cli-table3 measures it: a CJK comment wraps, and is never cut with …', (t) => {
  t.is(visibleWidth('日本語のコメント'), 16);
  t.is(visibleWidth('raw/a'), 5);
  const comment = 'データ遅延のため再実行 raw/sales/date=2026-01-01';
  const out = draw([['Want', 'Comment'], ['w-1', comment]], { headRows: 1, width: 24 });
  const lines = out.split('\n');
  t.true(lines.every((l) => visibleWidth(l) === visibleWidth(lines[0]!)), out);
  t.true(visibleWidth(lines[0]!) <= 24, out);
  t.false(out.includes('…'), out);
  t.is(out.replace(/[│┌┐└┘├┤┬┴┼─\s]/g, '').replace('Want', '').replace('Comment', '').replace('w-1', ''), comment.replace(/ /g, ''));
  t.deepEqual(wrapLine('日本語日本語', 5), ['日本', '語日', '本語']);
});

test('a cell of 10,000 columns is fitted in a few steps, not a column at a time', (t) => {
  const widths = fitColumns([10_000, 5], [0, 0], 80);
  t.deepEqual(widths, [68, 5]);
  const out = draw([['x'.repeat(10_000), 'y']], { headRows: 0, width: 80 });
  // 80 columns less 7 of borders and padding, less 1 for 'y'.
  t.is(out.split('\n').length, 2 + Math.ceil(10_000 / 72));
});

/** How many cells of the tables cli-table3 is given hold more than one line (heading cells apart), and the most rows of one. */
function givenToCliTable3(rows: ReadonlyArray<readonly string[]>, options: TableOptions): { multiLine: number; mostRows: number } {
  const chunks = layoutTable(rows, options).flatMap(tableChunks);
  return {
    multiLine: chunks.reduce((n, chunk) => n + chunk.rows.flat().filter((cell) => cell.includes('\n')).length, 0),
    mostRows: Math.max(...chunks.map((chunk) => chunk.rows.length)),
  };
}

test('cli-table3 is given no cell of several lines nor more than CHUNK_ROWS rows: a 200-line cell and 2,000 rows draw in linear time', (t) => {
  // cli-table3 0.6.5 truncates a whole cell for a debug message on every line it draws, a character at a time when
  // the cell has several lines (PR #362): a cell of 100 lines took 34 s. One-line cells take its fast path. Its
  // layout is quadratic in the rows (issue #68): a long table is given to it CHUNK_ROWS rows at a time.
  const tall = Array.from({ length: 200 }, (_, i) => `in/date=2026-01-${i} (MATERIALIZE)`).join('\n');
  const detail: string[][] = [['inputs', tall], ['status', 'successful']];
  const list = [HEAD, ...Array.from({ length: 2000 }, (_, i) => [`w-${i}`, 'successful', `raw/x/date=${i}\nraw/y/date=${i}`])];
  const given = [givenToCliTable3(detail, { headRows: 0 }), givenToCliTable3(detail, { headRows: 0, width: 30 }), givenToCliTable3(list, { headRows: 1 }), givenToCliTable3(list, { headRows: 1, width: 24 })];
  // Drawing them otherwise would take minutes (the test would time out rather than fail on the count).
  if (!t.deepEqual(given.map((g) => g.multiLine), [0, 0, 0, 0])) return;
  if (!t.true(given.every((g) => g.mostRows <= CHUNK_ROWS), JSON.stringify(given))) return;
  // Drawn, each line of the cell is a line of the table, in order, and the table is what cli-table3 draws of it whole.
  t.is(draw(list, { headRows: 1 }).split('\n').length, 4 + 2 * 2000);
  const out = draw(detail, { headRows: 0 });
  t.is(out.split('\n').length, 2 + 201);
  t.regex(out, /│ inputs │ in\/date=2026-01-0 \(MATERIALIZE\) +│\n│        │ in\/date=2026-01-1 \(MATERIALIZE\) +│/);
  const small = [['inputs', 'a/1\na/2\na/3'], ['status', 'ok']];
  const whole = new Table({ style: { head: [], border: [], compact: true }, wordWrap: false });
  whole.push(...small);
  t.is(draw(small, { headRows: 0 }), whole.toString());
  // A heading's words may wrap to lines of one cell: a few words above the rule, never a body cell.
  const [narrow] = layoutTable([['Partitions consumed', 'Job runs'], ['raw/a', '1']], { headRows: 1, width: 23 });
  t.deepEqual(narrow?.head, ['Partitions\nconsumed', 'Job\nruns']);
  t.is(narrow?.rows.flat().filter((cell) => cell.includes('\n')).length, 0);
});

test('a table of more than CHUNK_ROWS rows, drawn a chunk at a time, is the table cli-table3 draws whole', (t) => {
  const rows = [HEAD, ...Array.from({ length: 2 * CHUNK_ROWS + 50 }, (_, i) => [`w-${i}`, i % 2 ? 'successful' : 'failed', `raw/x/date=${i}`])];
  const whole = (body: string[][], colWidths?: number[]) => {
    const table = new Table({ head: HEAD, ...(colWidths ? { colWidths } : {}), style: { head: [], border: [], compact: true }, wordWrap: false });
    table.push(...body);
    return table.toString();
  };
  t.is(layoutTable(rows, { headRows: 1 }).flatMap(tableChunks).length, 3);
  t.is(draw(rows, { headRows: 1 }), whole(rows.slice(1)));
  // Fitted (refs wrapped onto rows of their own), every chunk has the widths of the whole table.
  const [fitted] = layoutTable(rows, { headRows: 1, width: 38 });
  t.false(fitted?.natural);
  t.true((fitted?.rows.length ?? 0) > rows.length);
  t.is(draw(rows, { headRows: 1, width: 38 }), whole(fitted?.rows ?? [], fitted?.colWidths));
  t.true(draw(rows, { headRows: 1, width: 38 }).split('\n').every((l) => visibleWidth(l) <= 38));
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

test('a table of 200,000 rows, or a line of 200,000 words, is laid out: no argument list as long as the table', (t) => {
  // layoutTable took Math.max(...rows) and Math.max(...words of a line): past ~125,000 arguments V8 throws
  // "Maximum call stack size exceeded" (`platform graph` of 100,000 refs whose jobs each need an upstream run: 200,000 tasks).
  const rows = Array.from({ length: 200_000 }, (_, i) => [`r-${i}`, 'live']);
  const [layout] = layoutTable([['Run', 'Status'], ...rows], { headRows: 1, width: 80 });
  t.is(layout!.rows.length, 200_000);
  const words = Array.from({ length: 200_000 }, () => 'ab').join(' ');
  const [wide] = layoutTable([['Key', 'Value'], ['args', words]], { headRows: 1, width: 80 });
  t.true(wide!.rows.length > 1);
  t.true(wide!.rows.every((r) => visibleWidth(r[1]!) <= 80));
});

test('a word is broken between graphemes: an emoji joined with ZWJ, a flag or a letter with its accent stays whole', (t) => {
  const family = '\u{1F468}\u200D\u{1F469}\u200D\u{1F467}';
  const flag = '\u{1F1EB}\u{1F1F7}';
  const accented = 'e\u0301';
  for (const unit of [family, flag, accented]) {
    const word = `ref/${unit.repeat(12)}`;
    for (let width = 3; width <= 9; width++) {
      const lines = wrapLine(word, width);
      t.is(lines.join(''), word, 'no character lost');
      for (const line of lines) {
        // Every line is whole graphemes of the word: none starts inside a cluster (a ZWJ, a second flag letter, an accent).
        const segments = [...new Intl.Segmenter(undefined, { granularity: 'grapheme' }).segment(line)].map((s) => s.segment);
        t.true(segments.every((g) => g === unit || g.length === 1), `${JSON.stringify(line)} at width ${width}`);
      }
    }
  }
});
