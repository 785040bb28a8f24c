/**
 * A tree as terminal lines: the root, then `├─`/`└─` branches; `more` notes what a node's listed children leave out.
 * Given a `width` (a terminal's, or COLUMNS), a line longer than it wraps under its own branch, the guides of the
 * levels above carried on (`│  `), rather than being wrapped by the terminal into column 0, where the tree is lost.
 */
import { HAS_SGR, visibleWidth, wrapLine } from './table-layout.js';

/** Below this much room a label is not wrapped further: a deep tree on a narrow terminal overflows instead. */
const LEAST_ROOM = 20;

export function treeLines<N>(
  root: N,
  label: (n: N) => string,
  children: (n: N) => readonly N[],
  more: (n: N) => string | undefined,
  width?: number,
): string[] {
  const out: string[] = [];
  // `first` starts its first line, `rest` its others (the guides of the levels above, and its own when it has more).
  const put = (text: string, first: string, rest: string) => {
    const lines = width === undefined ? [text] : wrapLabel(text, Math.max(LEAST_ROOM, width - Math.max(visibleWidth(first), visibleWidth(rest))));
    lines.forEach((l, i) => out.push(`${i === 0 ? first : rest}${l}`));
  };
  const walk = (n: N, prefix: string, last: boolean, top: boolean) => {
    const childPrefix = top ? '' : `${prefix}${last ? '   ' : '│  '}`;
    const kids = children(n);
    const note = more(n);
    const below = kids.length > 0 || note !== undefined;
    put(label(n), top ? '' : `${prefix}${last ? '└─ ' : '├─ '}`, `${childPrefix}${below ? '│  ' : '   '}`);
    kids.forEach((c, i) => walk(c, childPrefix, i === kids.length - 1 && note === undefined, false));
    if (note !== undefined) put(note, `${childPrefix}└─ `, `${childPrefix}   `);
  };
  walk(root, '', true, true);
  return out;
}

/**
 * A label wrapped to `room` columns: plain text as a table cell wraps (at spaces, a long ref after a `/`, `=` or `-`);
 * coloured text at its spaces only (a colour code is never cut), a word longer than the room left whole.
 */
function wrapLabel(text: string, room: number): string[] {
  if (visibleWidth(text) <= room) return [text];
  if (!HAS_SGR.test(text)) return wrapLine(text, room);
  const lines: string[] = [];
  let line = '';
  let used = 0;
  for (const word of text.split(' ')) {
    const w = visibleWidth(word);
    if (line !== '' && used + 1 + w > room) {
      lines.push(line);
      line = '';
      used = 0;
    }
    if (line === '') {
      line = word;
      used = w;
    } else {
      line += ` ${word}`;
      used += 1 + w;
    }
  }
  if (line !== '') lines.push(line);
  return carryColours(lines);
}

/** SGR codes that end what others began (bold/dim, italic, underline, inverse, hidden, strike, colours). */
const CLOSES: Record<string, (open: string) => boolean> = {
  '22': (o) => o === '1' || o === '2',
  '23': (o) => o === '3',
  '24': (o) => o === '4',
  '27': (o) => o === '7',
  '28': (o) => o === '8',
  '29': (o) => o === '9',
  '39': (o) => /^(3[0-7]|9[0-7]|38;.*)$/.test(o),
  '49': (o) => /^(4[0-7]|10[0-7]|48;.*)$/.test(o),
};

/**
 * A colour span cut by the wrap is closed at its line's end and opened again on the next line: otherwise the guides
 * that start the next line (`│  `) took its colour.
 */
function carryColours(lines: string[]): string[] {
  let open: string[] = [];
  return lines.map((l) => {
    const head = open.map((o) => `\x1b[${o}m`).join('');
    // eslint-disable-next-line no-control-regex
    for (const m of l.matchAll(/\x1b\[([0-9;]*)m/g)) {
      const code = m[1] === '' ? '0' : m[1]!;
      const closes = CLOSES[code];
      if (code === '0') open = [];
      else if (closes) open = open.filter((o) => !closes(o));
      else open.push(code);
    }
    return `${head}${l}${open.length > 0 ? '\x1b[0m' : ''}`;
  });
}
