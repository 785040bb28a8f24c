/**
 * Brace patterns for partition refs, shared by the CLI and the API: `{a,b,c}` (a list), `{1..24}` and `{01..24}`
 * (an integer range, zero padding kept), `{2026-01-01..2026-03-31}` (a date range, days), several braces in one
 * ref (their cartesian product, leftmost slowest). A backslash makes a brace itself (`a\\{b\\}` is the ref `a{b}`),
 * and inside braces a comma or a backslash too (`{x\\,y,z}` is `x,y` and `z`); anywhere else it is itself, so a
 * ref's own backslashes are as written. Pure: a pattern in, refs (or a clear error) out. The count is known
 * before anything is expanded, so an expansion that would be too large is refused without being built.
 */
import { groupDigits } from '../group-digits.js';
import { CONTROL_CHARACTER, quoted } from '../control-characters.js';

/** Most refs one pattern may expand to. */
export const MAX_EXPANSION = 100_000;

export class PatternError extends Error {
  constructor(
    readonly pattern: string,
    message: string,
  ) {
    super(`Partition pattern ${asTyped(pattern)}: ${message}`);
    this.name = 'PatternError';
  }
}

/**
 * A pattern as the user typed it, between single quotes: as JSON, `src/{a\}` read `"src/{a\\}"`, a backslash more
 * than was typed, in the very message about backslashes. One with a control character is shown as JSON (escaped), so
 * a message never carries one to a terminal.
 */
function asTyped(pattern: string): string {
  return CONTROL_CHARACTER.test(pattern) ? quoted(pattern) : `'${pattern}'`;
}

type Part = { literal: string } | { choices: (i: number) => string; count: number };

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DAY_MS = 86_400_000;

function parseDate(text: string): number | undefined {
  const m = DATE.exec(text);
  if (!m) return undefined;
  const ms = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  // Date.UTC rolls 2026-02-30 over to March: a date that does not round-trip does not exist.
  return new Date(ms).toISOString().slice(0, 10) === text ? ms : undefined;
}

/**
 * A brace's set: `body` as written (for ranges and messages) and `items`, its list split at the commas not escaped,
 * each unescaped. A range is one item of no escape.
 */
function braceSet(pattern: string, body: string, items: readonly string[], escaped: boolean): Part {
  const range = /^(.+)\.\.(.+)$/.exec(body);
  if (range && items.length === 1 && !escaped) {
    const [, from, to] = range as unknown as [string, string, string];
    if (/^\d+$/.test(from) && /^\d+$/.test(to)) {
      // Exact at any size: as numbers, bounds past 2^53 rounded, and a range of them named refs outside it.
      const a = BigInt(from);
      const b = BigInt(to);
      if (b < a) throw new PatternError(pattern, `the range {${body}} runs backwards; write {${to}..${from}}.`);
      const width = from.length > 1 && from.startsWith('0') ? from.length : 0;
      return { count: Number(b - a + 1n), choices: (i) => String(a + BigInt(i)).padStart(width, '0') };
    }
    const a = parseDate(from);
    const b = parseDate(to);
    if (a !== undefined && b !== undefined) {
      if (b < a) throw new PatternError(pattern, `the date range {${body}} runs backwards; write {${to}..${from}}.`);
      return { count: Math.round((b - a) / DAY_MS) + 1, choices: (i) => new Date(a + i * DAY_MS).toISOString().slice(0, 10) };
    }
    throw new PatternError(
      pattern,
      `{${body}} is neither an integer range like {1..24} or {01..24} nor a date range like {2026-01-01..2026-03-31} (real dates, YYYY-MM-DD).`,
    );
  }
  if (items.some((item) => item === '')) throw new PatternError(pattern, `the list {${body}} has an empty item.`);
  return { count: items.length, choices: (i) => items[i]! };
}

/**
 * What a backslash escapes: outside braces a brace only (there a comma or a backslash means nothing, so a ref's own
 * backslashes stay as written, with or without a brace elsewhere in the pattern); inside them a brace, a comma or a
 * backslash. Before anything else it is itself.
 */
const ESCAPED_OUTSIDE = '{}';
const ESCAPED_INSIDE = '{},\\';

function parse(pattern: string): Part[] {
  // A ref with no brace is no pattern: its backslashes are its own.
  if (!isPattern(pattern)) return [{ literal: pattern }];
  const parts: Part[] = [];
  let literal = '';
  for (let i = 0; i < pattern.length; ) {
    const c = pattern[i]!;
    if (c === '\\' && i + 1 < pattern.length && ESCAPED_OUTSIDE.includes(pattern[i + 1]!)) {
      literal += pattern[i + 1];
      i += 2;
      continue;
    }
    if (c === '}') throw new PatternError(pattern, `a '}' at position ${i + 1} closes no '{' (a literal brace is written \\}).`);
    if (c !== '{') {
      literal += c;
      i++;
      continue;
    }
    if (literal !== '') parts.push({ literal });
    literal = '';
    const open = i;
    const items: string[] = [''];
    let escaped = false;
    for (i = open + 1; ; ) {
      if (i >= pattern.length) throw new PatternError(pattern, `the '{' at position ${open + 1} is never closed (a literal brace is written \\{).`);
      const d = pattern[i]!;
      if (d === '\\' && i + 1 < pattern.length && ESCAPED_INSIDE.includes(pattern[i + 1]!)) {
        items[items.length - 1] += pattern[i + 1];
        escaped = true;
        i += 2;
      } else if (d === '{') {
        throw new PatternError(pattern, `braces cannot nest (at position ${open + 1}).`);
      } else if (d === '}') {
        break;
      } else {
        if (d === ',') items.push('');
        else items[items.length - 1] += d;
        i++;
      }
    }
    const body = pattern.slice(open + 1, i);
    if (body === '') throw new PatternError(pattern, `empty braces {} at position ${open + 1}.`);
    parts.push(braceSet(pattern, body, items, escaped));
    i++;
  }
  if (literal !== '' || parts.length === 0) parts.push({ literal });
  return parts;
}

/**
 * The text every ref of the pattern starts with, up to its first brace set, escapes undone ('' when it starts with
 * one): what a `--prefix` of its range is. Throws on a malformed pattern.
 */
export function patternPrefix(pattern: string): string {
  const first = parse(pattern)[0];
  return first !== undefined && 'literal' in first ? first.literal : '';
}

/** How many refs the pattern stands for (1 for a plain ref), without expanding it. */
export function patternSize(pattern: string): number {
  let n = 1;
  for (const p of parse(pattern)) if ('count' in p) n *= p.count;
  return n;
}

/** True when the text has brace syntax (a plain ref expands to itself). */
export function isPattern(text: string): boolean {
  return text.includes('{') || text.includes('}');
}

/**
 * How many refs the pattern stands for, without expanding it; refuses one that is malformed or over `max` refs, as
 * `expandPattern` does (a client checks a pattern before it sends it).
 */
export function checkPattern(pattern: string, max = MAX_EXPANSION): number {
  return checkedSize(pattern, parse(pattern), max);
}

function checkedSize(pattern: string, parts: readonly Part[], max: number): number {
  let total = 1;
  for (const p of parts) if ('count' in p) total *= p.count;
  if (total > max) {
    throw new PatternError(pattern, `expands to ${groupDigits(total)} partitions; the limit is ${groupDigits(max)}. Split the range.`);
  }
  return total;
}

/** Every ref of the pattern, in order; refuses one that is malformed or over `max` refs. */
export function expandPattern(pattern: string, max = MAX_EXPANSION): string[] {
  const parts = parse(pattern);
  const total = checkedSize(pattern, parts, max);
  const out: string[] = new Array(total);
  for (let k = 0; k < total; k++) {
    let rest = k;
    let ref = '';
    // Mixed radix, rightmost fastest: the digit of each set is taken from the right.
    const pieces: string[] = new Array(parts.length);
    for (let j = parts.length - 1; j >= 0; j--) {
      const p = parts[j]!;
      if ('literal' in p) {
        pieces[j] = p.literal;
        continue;
      }
      pieces[j] = p.choices(rest % p.count);
      rest = Math.floor(rest / p.count);
    }
    ref = pieces.join('');
    out[k] = ref;
  }
  return out;
}

/** Several patterns (or plain refs) expanded and de-duplicated, first occurrence kept, within `max` in all. */
export function expandPatterns(patterns: readonly string[], max = MAX_EXPANSION): string[] {
  let total = 0;
  for (const p of patterns) {
    total += patternSize(p);
    if (total > max) throw new PatternError(patterns.join(' '), `expands to more than ${groupDigits(max)} partitions. Split it.`);
  }
  return [...new Set(patterns.flatMap((p) => expandPattern(p, max)))];
}
