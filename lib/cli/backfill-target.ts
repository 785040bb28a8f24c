/**
 * What `platform backfill <pattern>` sends: the pattern itself when the API records it (at most MAX_REF_LENGTH
 * characters, as a ref), else its refs, listed, when they fit a request body; a pattern that fits neither is refused
 * with what to do. A list of 300 dates in braces is 1,100 characters: `build`, `taint` and `partitions lookup`
 * (which send refs) took it, `backfill` answered with the schema's "Field 'pattern' must be a string of at most 1024
 * characters". Pure.
 */
import { MAX_REF_LENGTH } from '../api/schemas/common.js';
import { expandPattern } from '../graph/partition-pattern.js';
import { groupDigits } from '../group-digits.js';

/** The server's body limit (lib/server/json-body.ts MAX_BODY_BYTES), less room for the request's other fields. */
export const BACKFILL_REFS_BYTES = 1024 * 1024 - 64 * 1024;

export type BackfillTarget = { pattern: string } | { partitions: string[] };

export class BackfillTargetError extends Error {}

/** The pattern must be well formed (checkPattern): its expansion is not checked again here. */
export function backfillTarget(pattern: string, maxBytes = BACKFILL_REFS_BYTES): BackfillTarget {
  if (pattern.length <= MAX_REF_LENGTH) return { pattern };
  const partitions = expandPattern(pattern);
  // JSON of the list: each ref quoted and a comma, its own escapes counted.
  let bytes = 2;
  for (const ref of partitions) {
    bytes += Buffer.byteLength(JSON.stringify(ref)) + 1;
    if (bytes > maxBytes) {
      throw new BackfillTargetError(
        `the pattern is ${groupDigits(pattern.length)} characters, more than the ${groupDigits(MAX_REF_LENGTH)} a backfill records, ` +
          `and its ${groupDigits(partitions.length)} refs are too many to send one by one (over ${groupDigits(Math.floor(maxBytes / 1024))} KiB): ` +
          'write its lists as ranges ({1..300}, {2026-01-01..2026-03-31}), or split it into several backfills.',
      );
    }
  }
  return { partitions };
}
