/**
 * Refs as the commands that name partitions take them (build, graph, taint, want create): each argument a ref or a
 * brace pattern (`daily/date={2026-01-01..2026-01-07}`), expanded; a malformed pattern is a usage error (exit 2).
 */
import type { Command } from 'commander';
import { expandPatterns, PatternError } from '../graph/partition-pattern.js';
import { tooManyRefs } from '../api/create-want.js';
import { usageError } from './output.js';

/**
 * `one`: what the refs go into (a want, a taint), which takes at most MAX_PARTITIONS_PER_WANT: more is a usage error
 * that says so and what takes more, where the server's refusal named a field the user never typed.
 */
export function refsOf(patterns: readonly string[], cmd: Command, one?: 'a want' | 'a taint'): string[] {
  let refs: string[];
  try {
    refs = expandPatterns(patterns);
  } catch (err) {
    if (err instanceof PatternError) usageError(cmd, err.message);
    throw err;
  }
  const tooMany = one !== undefined ? tooManyRefs(patterns, refs.length, one) : undefined;
  if (tooMany) usageError(cmd, tooMany);
  return refs;
}
