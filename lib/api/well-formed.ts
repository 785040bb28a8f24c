/**
 * Text the log can keep: a JavaScript string may hold a lone UTF-16 surrogate (JSON's `"\ud800"` decodes to one),
 * which has no UTF-8 form. The log's codec would write bytes its own decoder refuses, and the next start could not
 * read the log. Such text is refused where it comes in (a 400), and by the codec as a last guard.
 */
const MAX_DEPTH = 32;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export function isWellFormed(text: string): boolean {
  return !LONE_SURROGATE.test(text);
}

/**
 * The path (`comment`, `partitions[3]`, `env.KEY`) of the first ill-formed string in a JSON value, keys included;
 * undefined when there is none. The path is built only for what is found (a want's 100,000 refs make no strings).
 * Not below MAX_DEPTH: no body of the API nests that deep (its schema refuses it), and a walk must not overflow the
 * stack on one built to (the codec still guards what would be written).
 */
export function illFormedPath(value: unknown): string | undefined {
  const found = illFormedAt(value, 0);
  return found === undefined ? undefined : found.replace(/^\./, '') || 'the body';
}

function illFormedAt(value: unknown, depth: number): string | undefined {
  if (typeof value === 'string') return isWellFormed(value) ? undefined : '';
  if (depth >= MAX_DEPTH || typeof value !== 'object' || value === null) return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = illFormedAt(value[i], depth + 1);
      if (found !== undefined) return `[${i}]${found}`;
    }
    return undefined;
  }
  for (const [key, v] of Object.entries(value)) {
    // The key itself, shown as JSON would write it.
    if (!isWellFormed(key)) return `.${JSON.stringify(key)}`;
    const found = illFormedAt(v, depth + 1);
    if (found !== undefined) return `.${key}${found}`;
  }
  return undefined;
}

export const ILL_FORMED_TEXT = 'holds text that is not valid Unicode (a lone UTF-16 surrogate, such as "\\ud800" in JSON, which has no UTF-8 form)';
