/** `POST /api/wants`: the body a client sends and the server's reply. */
import type { RebuildPolicy } from '../events/build-event.js';
import type { WantView } from './views.js';
import { groupDigits } from '../group-digits.js';

/** Most partitions a want (or a taint) takes; a backfill takes up to 100,000. */
export const MAX_PARTITIONS_PER_WANT = 10_000;

/**
 * Why refs expanded from `patterns` are too many for `one` (a want, a taint), in the words the CLI and the dashboard
 * both say before anything is sent; undefined when they are not. The server's refusal names a field the user never
 * typed, or (past 1 MiB of refs) only the body's size.
 */
export function tooManyRefs(patterns: readonly string[], count: number, one: 'a want' | 'a taint'): string | undefined {
  if (count <= MAX_PARTITIONS_PER_WANT) return undefined;
  return (
    `${patterns.length === 1 ? `'${patterns[0]}' expands` : 'the refs given expand'} to ${groupDigits(count)} partitions; ${one} takes at most ` +
    `${groupDigits(MAX_PARTITIONS_PER_WANT)}: split them${one === 'a want' ? ", or use 'platform backfill <pattern>' (up to 100,000, scheduled a window at a time)" : ''}.`
  );
}

export interface CreateWantBody {
  partitions: string[];
  comment?: string;
  /** ISO 8601 or epoch milliseconds. */
  data_timestamp?: string | number;
  ttl_seconds?: number;
  sla_seconds?: number;
  /** What to rebuild: 'missing' (default), 'stale' (also stale or tainted inputs), 'all'. */
  rebuild?: RebuildPolicy;
  /** Whole number, default 0; higher first when runs wait for capacity. */
  priority?: number;
}

export interface CreateWantReply {
  want_id: string;
  want: WantView;
}
