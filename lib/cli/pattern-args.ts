/**
 * Refs as the commands that name partitions take them (build, graph, taint, want create): each argument a ref or a
 * brace pattern (`daily/date={2026-01-01..2026-01-07}`), expanded; a malformed pattern is a usage error (exit 2).
 */
import type { Command } from 'commander';
import { expandPatterns, PatternError } from '../graph/partition-pattern.js';
import { MAX_PARTITIONS_PER_WANT } from '../api/schemas/wants.js';
import { groupDigits } from '../group-digits.js';
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
  if (one !== undefined && refs.length > MAX_PARTITIONS_PER_WANT) {
    usageError(
      cmd,
      `${patterns.length === 1 ? `'${patterns[0]}' expands` : 'the refs given expand'} to ${groupDigits(refs.length)} partitions; ${one} takes at most ` +
        `${groupDigits(MAX_PARTITIONS_PER_WANT)}: split them${one === 'a want' ? ", or use 'platform backfill <pattern>' (up to 100,000, scheduled a window at a time)" : ''}.`,
    );
  }
  return refs;
}
