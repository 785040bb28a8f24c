/**
 * A table as the CLI prints it: its layout is decided here, and cli-table3 draws it. Decided here: the column
 * widths that fit the terminal's width (the widest column gives way, a status or a time stays whole), where a long
 * cell wraps, and when a table that cannot fit is shown a row a block. cli-table3 draws the borders, the padding and
 * the colour of each line, given cells of one line each: a cell of several lines is handed over as that many rows
 * (the other columns empty on the rows after the first), which a `compact` table (no rule between rows) draws the
 * same. Not as one cell of several lines: cli-table3 0.6.5's Cell#draw truncates the whole of a cell's content for a
 * debug message on every line it draws, and that truncation removes a character at a time re-measuring the text
 * (PR #362, "avoid eager cell preview truncation", still open), so a cell took time growing faster than the square of
 * its lines (0.5 s for 20 lines, 16-34 s for 100). A cell of one line takes its fast path; with the rows given a
 * chunk at a time (CHUNK_ROWS), a table is drawn in time linear in its text.
 */
import Table from 'cli-table3';
import stringWidth from 'string-width';

/** A colour (SGR) code in a line: such a line is measured and wrapped without cutting one. */
export const HAS_SGR = /\x1b\[[0-9;]*m/;
// Printable ASCII: a character a column, measured by its length.
const PLAIN = /^[\x20-\x7e]*$/;

/**
 * How many columns `text` takes on a terminal, as cli-table3 measures it (string-width, which it uses: colour codes
 * none, a CJK character or an emoji two). The same measure, or a width we decide would be narrower than cli-table3's
 * for a line, and it would cut the line with '…'.
 */
export function visibleWidth(text: string): number {
  return PLAIN.test(text) ? text.length : stringWidth(text);
}

/** The narrowest a column is squeezed to; a table that cannot fit with its columns so narrow is shown a row a block. */
const MIN_COLUMN = 6;
/**
 * A column is not squeezed below its longest word, up to this: a status, a time, an id stay whole ("runnin|g" is
 * not read as running), and what is longer (a ref) wraps.
 */
const WHOLE_WORD = 12;

export interface TableOptions {
  /** Rows at the top set apart by a rule (a header): 0 or 1. */
  headRows: number;
  /** Columns the table may take; none: each column as wide as its widest line. */
  width?: number;
}

/**
 * What cli-table3 is given to draw one table: every cell of `rows` one line (a cell of several lines is several
 * rows), so none takes cli-table3's slow path. A heading's cell may be of several lines when the width made its words
 * wrap: a heading is a few words, and a row of its own above the rule.
 */
export interface TableLayout {
  head: string[] | undefined;
  rows: string[][];
  /** Each column's width with its padding, as cli-table3 takes it. */
  colWidths: number[];
  /** Each column as wide as its widest line: what cli-table3 measures itself when not given `colWidths`. */
  natural: boolean;
}

/**
 * The column widths (text only, no padding) that fit `width`: the widest column gives up a column at a time, so a
 * narrow one (a status, an id) stays whole while a long ref wraps. `least`: what a column may not go below (the
 * longest word of its heading and, up to WHOLE_WORD, of its cells; its coloured lines, which are never wrapped lest
 * their codes be cut). Undefined when even that is too wide.
 */
export function fitColumns(natural: readonly number[], least: readonly number[], width: number | undefined): number[] | undefined {
  const widths = [...natural];
  if (width === undefined) return widths;
  // Each column is padded by a space each side; n columns have n + 1 borders.
  const room = width - (3 * widths.length + 1);
  const floor = widths.map((w, c) => Math.min(w, Math.max(least[c] ?? 0, MIN_COLUMN)));
  let total = widths.reduce((a, b) => a + b, 0);
  if (floor.reduce((a, b) => a + b, 0) > room) return total <= room ? widths : undefined;
  while (total > room) {
    let widest = -1;
    for (let c = 0; c < widths.length; c++) if (widths[c]! > floor[c]! && (widest < 0 || widths[c]! > widths[widest]!)) widest = c;
    if (widest < 0) break;
    // Down to the next widest at once (or to the room), not a column a step: a 10,000-column cell is no loop of 10,000.
    // Columns as wide as it take turns a column at a time, so the excess is shared between them.
    const next = Math.max(floor[widest]!, ...widths.filter((_, c) => c !== widest), widths[widest]! - (total - room));
    const to = next < widths[widest]! ? next : widths[widest]! - 1;
    total -= widths[widest]! - to;
    widths[widest] = to;
  }
  return widths;
}

/** Graphemes, not code points: an emoji joined with ZWJ, a flag or a letter with its accents is never cut apart. */
const GRAPHEMES: { segment(text: string): Iterable<{ segment: string }> } =
  typeof Intl === 'object' && typeof Intl.Segmenter === 'function'
    ? new Intl.Segmenter(undefined, { granularity: 'grapheme' })
    : // A node built without Intl: code points, as before.
      { segment: (text) => Array.from(text, (segment) => ({ segment })) };

/**
 * Where a word too wide for its line is best broken (an index into it, between graphemes): after a '/', ',', '=', '&'
 * or '-' in the second half of what fits, else where it stops fitting; at least one grapheme.
 */
function breakAt(word: string, width: number): number {
  let fit = 0;
  let used = 0;
  const ends = new Set<number>();
  for (const { segment } of GRAPHEMES.segment(word)) {
    used += visibleWidth(segment);
    if (used > width) {
      if (fit === 0) return segment.length;
      break;
    }
    fit += segment.length;
    ends.add(fit);
  }
  for (let i = fit; i > fit / 2; i--) if (ends.has(i) && '/,=&-'.includes(word[i - 1]!)) return i;
  return fit;
}

/** A line of text wrapped to `width`: at spaces where it can, inside a word (a ref) where it must. */
export function wrapLine(text: string, width: number): string[] {
  if (visibleWidth(text) <= width || HAS_SGR.test(text) || width < 1) return [text];
  const lines: string[] = [];
  let current = '';
  let currentWidth = 0;
  for (const word of text.split(/ +/)) {
    let rest = word;
    let restWidth = visibleWidth(rest);
    if (current !== '' && currentWidth + 1 + restWidth <= width) {
      current += ` ${rest}`;
      currentWidth += 1 + restWidth;
      continue;
    }
    if (current !== '') lines.push(current);
    while (restWidth > width) {
      const at = breakAt(rest, width);
      lines.push(rest.slice(0, at));
      rest = rest.slice(at);
      restWidth = visibleWidth(rest);
    }
    current = rest;
    currentWidth = restWidth;
  }
  if (current !== '') lines.push(current);
  return lines;
}

/**
 * The layout of a table (`rows`, the first `headRows` of them its heading): one table, or, when it cannot fit the
 * width even with its columns squeezed to their words, one table a row (its headings as keys). Pure.
 */
export function layoutTable(rows: ReadonlyArray<readonly string[]>, options: TableOptions): TableLayout[] {
  // Loops, not a spread into Math.max: past ~125,000 arguments it overflows the stack (200,000 tasks of `platform graph`).
  let columns = 0;
  for (const r of rows) columns = Math.max(columns, r.length);
  if (columns === 0) return [];
  const cells = rows.map((r) => Array.from({ length: columns }, (_, c) => (r[c] ?? '').split('\n')));
  const natural = Array.from({ length: columns }, () => 0);
  // What a column may not go below: `keep` its heading's words and coloured lines, `words` its cells' words too.
  const keep = Array.from({ length: columns }, () => 0);
  const words = Array.from({ length: columns }, () => 0);
  cells.forEach((row, i) => {
    row.forEach((lines, c) => {
      for (const l of lines) {
        const w = visibleWidth(l);
        natural[c] = Math.max(natural[c]!, w);
        // A heading wraps at its spaces only: "Job runs" may take two lines, "Partitions" not two halves.
        const word = HAS_SGR.test(l) ? w : longest(l.split(' '));
        if (HAS_SGR.test(l) || i < options.headRows) keep[c] = Math.max(keep[c]!, word);
        words[c] = Math.max(words[c]!, keep[c]!, Math.min(word, WHOLE_WORD));
      }
    });
  });
  // Words whole if the width allows; else a row a block (a status cut in two is misread), where a block is a
  // row already (a record's keys and values) only what must stay whole is kept.
  const widths = fitColumns(natural, words, options.width);
  if (widths === undefined && options.headRows === 1 && rows.length > 1) return recordBlocks(rows, options);
  const fitted = widths ?? fitColumns(natural, keep, options.width) ?? natural;
  const wrapped = cells.map((row) => row.map((lines, c) => lines.flatMap((l) => wrapLine(l, fitted[c]!))));
  const head = options.headRows === 1 ? wrapped[0]!.map((lines) => lines.join('\n')) : undefined;
  const body: string[][] = [];
  for (const row of wrapped.slice(options.headRows)) {
    let height = 0;
    for (const lines of row) height = Math.max(height, lines.length);
    for (let k = 0; k < height; k++) body.push(row.map((lines) => lines[k] ?? ''));
  }
  return [{ head, rows: body, colWidths: fitted.map((w) => w + 2), natural: fitted.every((w, c) => w === natural[c]) }];
}

/** The width of the widest of `words` (0 for none). */
function longest(words: readonly string[]): number {
  let w = 0;
  for (const word of words) w = Math.max(w, visibleWidth(word));
  return w;
}

/** Too many columns for the width: each row as a block of its own, a line a column headed by its heading. */
function recordBlocks(rows: ReadonlyArray<readonly string[]>, options: TableOptions): TableLayout[] {
  const [head, ...body] = rows;
  return body.flatMap((row) => layoutTable(head!.map((h, c) => [h, row[c] ?? '']), { ...options, headRows: 0 }));
}

/**
 * Most rows cli-table3 is given at once. Its layout (`fillInTable`) looks for each cell's place through every row
 * above it, time growing with the square of the rows (cli-table3 issue #68, "tb.toString() performance": 1.9 s for
 * 8,000 rows of 3 columns here); a longer table is drawn as tables of this many rows, the same widths, joined.
 */
export const CHUNK_ROWS = 100;

/**
 * A table as the tables of at most CHUNK_ROWS rows cli-table3 is given (the heading with the first), each with the
 * widths of the whole. Pure.
 */
export function tableChunks(layout: TableLayout): TableLayout[] {
  if (layout.rows.length <= CHUNK_ROWS) return [layout];
  const chunks: TableLayout[] = [];
  for (let at = 0; at < layout.rows.length; at += CHUNK_ROWS) {
    chunks.push({ head: at === 0 ? layout.head : undefined, rows: layout.rows.slice(at, at + CHUNK_ROWS), colWidths: layout.colWidths, natural: false });
  }
  return chunks;
}

/**
 * The tables drawn by cli-table3: box-drawing borders (grey when `colour`), a space of padding each side of a cell,
 * a rule under the heading and none between rows (`compact`, which is what lets a cell's lines be rows of their own).
 * Several tables (a row a block) one after another.
 */
export function drawTables(layouts: readonly TableLayout[], colour: boolean): string {
  return layouts.map((layout) => {
    const chunks = tableChunks(layout);
    // A chunk's rows run on into the next's: the bottom border of each but the last, and the top border of each but
    // the first, are left out (they are its first and last lines: every row is a line, the heading in the first).
    return chunks.map((chunk, i) => {
      const lines = drawn(chunk, colour).split('\n');
      return lines.slice(i === 0 ? 0 : 1, i === chunks.length - 1 ? lines.length : -1).join('\n');
    }).join('\n');
  }).join('\n');
}

function drawn(layout: TableLayout, colour: boolean): string {
  const t = new Table({
    ...(layout.head ? { head: layout.head } : {}),
    // At its natural width cli-table3 measures the columns itself, as it did before the CLI fitted its tables (and
    // with string-width, which knows a wide character takes two columns).
    ...(layout.natural ? {} : { colWidths: layout.colWidths }),
    // The heading's colour is given in its cells (bold); cli-table3 would colour it red by default.
    style: { head: [], border: colour ? ['grey'] : [], compact: true },
    wordWrap: false,
  });
  t.push(...layout.rows);
  return t.toString();
}

/** The width a table must fit: COLUMNS when set (as `ls` reads it), else the terminal's; none in a pipe. */
export function outputWidth(stream: NodeJS.WriteStream = process.stdout, env: NodeJS.ProcessEnv = process.env): number | undefined {
  const columns = Number(env.COLUMNS);
  if (Number.isSafeInteger(columns) && columns > 0) return columns;
  return stream.isTTY && stream.columns > 0 ? stream.columns : undefined;
}
