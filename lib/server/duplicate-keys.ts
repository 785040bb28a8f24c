/**
 * A JSON body that gives one key twice in an object (`{"reason": "a", "reason": "b"}`): JSON.parse keeps the last
 * and says nothing, so a client that meant the first got something else done. Every JSON body the daemon reads (the
 * JSON API's and the Connect RPCs') is refused for it, naming the key.
 *
 * Free for a body without one: a key is followed by a colon, so a text with no more colons than its parsed value has
 * keys holds no key twice. Only a text with colons inside its strings (or a duplicate) is scanned, once.
 */

export interface DuplicateKey {
  /** The key, decoded. */
  key: string;
  /** Where the object is: '' for the top level, else a path like `configs[0].env`. */
  at: string;
}

/** The first key `text` gives twice in one object, or undefined; `value` is what JSON.parse made of `text`. */
export function duplicateKey(text: string | Buffer, value: unknown): DuplicateKey | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  if (colons(text) <= keysIn(value)) return undefined;
  return scan(typeof text === 'string' ? text : text.toString('utf8'));
}

/** The sentence a refusal says: what, which key, where, and what to do. */
export function duplicateKeyMessage(d: DuplicateKey): string {
  const where = d.at === '' ? 'in the top-level object' : `in the object at ${d.at}`;
  return `The JSON body gives the key ${JSON.stringify(d.key)} twice ${where}: send each key once (which one was meant is not clear, so nothing was done).`;
}

function colons(text: string | Buffer): number {
  let n = 0;
  if (typeof text === 'string') {
    for (let i = text.indexOf(':'); i !== -1; i = text.indexOf(':', i + 1)) n++;
    return n;
  }
  // A byte, not the string ':': Buffer#indexOf encodes a string argument at every call.
  for (let i = text.indexOf(0x3a); i !== -1; i = text.indexOf(0x3a, i + 1)) n++;
  return n;
}

function keysIn(value: object): number {
  let n = 0;
  const todo: unknown[] = [value];
  while (todo.length > 0) {
    const v = todo.pop();
    if (typeof v !== 'object' || v === null) continue;
    if (Array.isArray(v)) {
      for (const item of v) if (typeof item === 'object' && item !== null) todo.push(item);
      continue;
    }
    for (const key in v) {
      n++;
      const item = (v as Record<string, unknown>)[key];
      if (typeof item === 'object' && item !== null) todo.push(item);
    }
  }
  return n;
}

interface Frame {
  /** The keys of an object so far; undefined for an array. */
  keys: Set<string> | undefined;
  /** An array's index, or the object's current key: where in it the scan is. */
  index: number;
  key: string;
}

/** Walks well-formed JSON (JSON.parse took it) for the first key an object gives twice. */
function scan(text: string): DuplicateKey | undefined {
  const stack: Frame[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      // Strings are most of a large body: found by indexOf, not a character at a time.
      let end = text.indexOf('"', i + 1);
      while (end !== -1 && escaped(text, end)) end = text.indexOf('"', end + 1);
      if (end === -1) return undefined;
      let next = end + 1;
      while (isSpace(text.charCodeAt(next))) next++;
      const top = stack[stack.length - 1];
      if (text.charCodeAt(next) === 0x3a /* : */ && top?.keys !== undefined) {
        // A text JSON.parse took holds only well-formed literals; should `text` differ from what was parsed, the
        // check gives up (the body is unchecked) rather than throw a 500 for a body that is valid JSON.
        let key: unknown;
        try {
          key = JSON.parse(text.slice(i, end + 1));
        } catch {
          return undefined;
        }
        if (typeof key !== 'string') return undefined;
        if (top.keys.has(key)) return { key, at: pathOf(stack) };
        top.keys.add(key);
        top.key = key;
      }
      i = end;
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      stack.push({ keys: c === 0x7b ? new Set() : undefined, index: 0, key: '' });
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      stack.pop();
    } else if (c === 0x2c /* , */) {
      const top = stack[stack.length - 1];
      if (top !== undefined && top.keys === undefined) top.index++;
    }
  }
  return undefined;
}

/** Where the innermost frame is, made only for the refusal (a path per frame would cost the depth squared). */
function pathOf(stack: readonly Frame[]): string {
  let path = '';
  for (let d = 0; d < stack.length - 1; d++) {
    const f = stack[d]!;
    path += f.keys === undefined ? `[${f.index}]` : path === '' ? f.key : `.${f.key}`;
  }
  return path;
}

/** JSON's whitespace: space, tab, line feed, carriage return. */
function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
}

/** Whether the quote at `at` is escaped: an odd number of backslashes before it. */
function escaped(text: string, at: number): boolean {
  let n = 0;
  while (text.charCodeAt(at - 1 - n) === 0x5c) n++;
  return n % 2 === 1;
}
