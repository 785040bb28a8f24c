/**
 * An output pattern of a job: a regex source matched against the whole ref.
 */
export interface OutputPattern {
  source: string;
  /** `^(?:source)$`, compiled once. */
  regex: RegExp;
  /** The names of the named groups `(?<name>...)` of the source, in source order. */
  groups: string[];
}

/**
 * Compiles an output regex source for whole-ref matching. Throws the engine's SyntaxError for an invalid source.
 * The source is compiled on its own first so that a source such as `a)|(b` cannot escape the `^(?:...)$` wrapper.
 */
export function compileOutputPattern(source: string): OutputPattern {
  new RegExp(source);
  const regex = new RegExp(`^(?:${source})$`);
  // An empty alternative always matches, and the match's `groups` then lists every named group (undefined values):
  // the engine's own parser tells us the names, no hand-written regex parser needed.
  const probe = new RegExp(`(?:${source})|`).exec('');
  const groups = probe?.groups ? Object.keys(probe.groups) : [];
  return { source, regex, groups };
}

/** Matches a ref against the pattern; null when it does not match the whole ref. Unset groups are left out. */
export function matchOutputPattern(pattern: OutputPattern, ref: string): Record<string, string> | null {
  const m = pattern.regex.exec(ref);
  if (m === null) return null;
  const groups: Record<string, string> = {};
  if (m.groups) {
    for (const [name, value] of Object.entries(m.groups)) {
      if (value !== undefined) groups[name] = value;
    }
  }
  return groups;
}
