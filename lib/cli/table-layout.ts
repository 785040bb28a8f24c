/**
 * A table as the CLI prints it, laid out here rather than by cli-table3: fitted to the terminal's width (a long
 * cell wraps, onto as many lines as it needs, rather than the terminal folding every row of the table), and in
 * time linear in its text (cli-table3 took 0.5 s for a cell of 20 lines and 34 s for one of 100, re-measuring its
 * text a character at a time). Pure: cells in, text out; the width and the border's colour are given.
 */

// Colour codes (SGR) take no room on the screen.
const SGR = /\x1b\[[0-9;]*m/g;
const HAS_SGR = /\x1b\[[0-9;]*m/;

/** How many columns `text` takes on a terminal (a code point a column: the CLI prints no wide characters). */
export function visibleWidth(text: string): number {
  return [...text.replace(SGR, '')].length;
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
  /** Colours a piece of border. */
  border: (s: string) => string;
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

/** Where a word too long for its line is best broken: after a '/', ',', '=', '&' or '-' in its second half, else at the width. */
function breakAt(word: string, width: number): number {
  for (let i = width; i > width / 2; i--) if ('/,=&-'.includes(word[i - 1]!)) return i;
  return width;
}

/** A line of text wrapped to `width`: at spaces where it can, inside a word (a ref) where it must. */
export function wrapLine(text: string, width: number): string[] {
  if (visibleWidth(text) <= width || HAS_SGR.test(text) || width < 1) return [text];
  const lines: string[] = [];
  let current = '';
  for (const word of text.split(/ +/)) {
    let rest = word;
    if (current !== '' && current.length + 1 + rest.length <= width) {
      current += ` ${rest}`;
      continue;
    }
    if (current !== '') lines.push(current);
    while (rest.length > width) {
      const at = breakAt(rest, width);
      lines.push(rest.slice(0, at));
      rest = rest.slice(at);
    }
    current = rest;
  }
  if (current !== '') lines.push(current);
  return lines;
}

/** The table: borders of box-drawing characters, a space of padding each side of a cell, no rules between rows. */
export function layoutTable(rows: ReadonlyArray<readonly string[]>, options: TableOptions): string {
  const columns = Math.max(0, ...rows.map((r) => r.length));
  if (columns === 0) return '';
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
        const word = HAS_SGR.test(l) ? w : Math.max(...l.split(' ').map(visibleWidth));
        if (HAS_SGR.test(l) || i < options.headRows) keep[c] = Math.max(keep[c]!, word);
        words[c] = Math.max(words[c]!, keep[c]!, Math.min(word, WHOLE_WORD));
      }
    });
  });
  // Words whole if the width allows; else a row a block (a status cut in two is misread), where a block is a
  // row already (a record's keys and values) only what must stay whole is kept.
  const widths = fitColumns(natural, words, options.width);
  if (widths === undefined && options.headRows === 1 && rows.length > 1) return recordBlocks(rows, options);
  return drawn(cells, widths ?? fitColumns(natural, keep, options.width) ?? natural, options);
}

/** Too many columns for the width: each row as a block of its own, a line a column headed by its heading. */
function recordBlocks(rows: ReadonlyArray<readonly string[]>, options: TableOptions): string {
  const [head, ...body] = rows;
  return body.map((row) => layoutTable(head!.map((h, c) => [h, row[c] ?? '']), { ...options, headRows: 0 })).join('\n');
}

function drawn(cells: ReadonlyArray<ReadonlyArray<readonly string[]>>, widths: readonly number[], options: TableOptions): string {
  const b = options.border;
  const rule = (left: string, mid: string, right: string) => b(`${left}${widths.map((w) => '─'.repeat(w + 2)).join(mid)}${right}`);
  const out = [rule('┌', '┬', '┐')];
  cells.forEach((row, i) => {
    const wrapped = row.map((lines, c) => lines.flatMap((l) => wrapLine(l, widths[c]!)));
    const height = Math.max(...wrapped.map((lines) => lines.length));
    for (let k = 0; k < height; k++) {
      const parts = wrapped.map((lines, c) => {
        const text = lines[k] ?? '';
        return ` ${text}${' '.repeat(Math.max(0, widths[c]! - visibleWidth(text)))} `;
      });
      out.push(`${b('│')}${parts.join(b('│'))}${b('│')}`);
    }
    if (i + 1 === options.headRows && i + 1 < cells.length) out.push(rule('├', '┼', '┤'));
  });
  out.push(rule('└', '┴', '┘'));
  return out.join('\n');
}

/** The width a table must fit: COLUMNS when set (as `ls` reads it), else the terminal's; none in a pipe. */
export function outputWidth(stream: NodeJS.WriteStream = process.stdout, env: NodeJS.ProcessEnv = process.env): number | undefined {
  const columns = Number(env.COLUMNS);
  if (Number.isSafeInteger(columns) && columns > 0) return columns;
  return stream.isTTY && stream.columns > 0 ? stream.columns : undefined;
}
