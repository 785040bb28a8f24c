/**
 * Text the log can keep: a JavaScript string may hold a lone UTF-16 surrogate (JSON's `"\ud800"` decodes to one),
 * which has no UTF-8 form. The log's codec would write bytes its own decoder refuses, and the next start could not
 * read the log. Such text is refused where it comes in (a 400), and by the codec as a last guard.
 */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export function isWellFormed(text: string): boolean {
  return !LONE_SURROGATE.test(text);
}

/** The path (`comment`, `partitions[3]`, `env.KEY`) of the first ill-formed string in a JSON value, keys included. */
export function illFormedPath(value: unknown, path = ''): string | undefined {
  if (typeof value === 'string') return isWellFormed(value) ? undefined : path || 'the body';
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = illFormedPath(value[i], `${path}[${i}]`);
      if (found) return found;
    }
    return undefined;
  }
  if (typeof value === 'object' && value !== null) {
    for (const [key, v] of Object.entries(value)) {
      const at = path ? `${path}.${key}` : key;
      if (!isWellFormed(key)) return `the name of ${JSON.stringify(at)}`;
      const found = illFormedPath(v, at);
      if (found) return found;
    }
  }
  return undefined;
}

export const ILL_FORMED_TEXT = 'holds text that is not valid Unicode (a lone UTF-16 surrogate, such as "\\ud800" in JSON, which has no UTF-8 form)';
