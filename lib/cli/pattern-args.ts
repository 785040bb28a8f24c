/**
 * Refs as the commands that name partitions take them (build, graph, taint, want create): each argument a ref or a
 * brace pattern (`daily/date={2026-01-01..2026-01-07}`), expanded; a malformed pattern is a usage error (exit 2).
 */
import type { Command } from 'commander';
import { expandPatterns, PatternError } from '../graph/partition-pattern.js';
import { usageError } from './output.js';

export function refsOf(patterns: readonly string[], cmd: Command): string[] {
  try {
    return expandPatterns(patterns);
  } catch (err) {
    if (err instanceof PatternError) usageError(cmd, err.message);
    throw err;
  }
}
