/** `/api/backfills`: a range of partitions built (or rebuilt) as one want, with its own cap and priority. */
import type { BackfillPolicy } from '../orchestrator/command.js';
import type { WantStatus } from './statuses.js';

export type { BackfillPolicy };

export interface CreateBackfillBody {
  /** A brace pattern: 'daily/revenue/date={2026-01-01..2026-03-31}'. Exactly one of `pattern` and `partitions`. */
  pattern?: string;
  partitions?: string[];
  /** 'missing' (default): what was never built; 'failed': also what failed or is tainted; 'all': everything. */
  policy?: BackfillPolicy;
  /** Whole number, default 0; higher first when runs wait for capacity. */
  priority?: number;
  /** Most job runs serving the backfill at once; 0 or absent: no cap of its own. */
  max_concurrent_job_runs?: number;
  comment?: string;
}

export interface CreateBackfillReply {
  backfill_id: string;
  want_id: string;
  /** How many partitions its range holds. */
  partitions: number;
}

/** Its partitions by where they stand for it; they add up to `partitions`. */
export interface BackfillCounts {
  live: number;
  failed: number;
  /** Left as they are by its policy ('missing': failed or tainted before it began). */
  skipped: number;
  /** A run is building them (queued, running, or waiting out a retry). */
  building: number;
  /** Let into scheduling, no run of their own yet: waiting for their inputs to be built (or for the backfill's cap). */
  waiting: number;
  /** Not let into scheduling yet (a large backfill is scheduled a window at a time). */
  pending: number;
  /** Not settled when the backfill was canceled (begun or not): nothing builds them for it any more. 0 unless canceled. */
  canceled: number;
}

export interface BackfillView {
  backfill_id: string;
  want_id: string;
  /** Its want's status: it ends once every partition is settled (failed if any failed), or when canceled. */
  status: WantStatus;
  pattern: string;
  partitions: number;
  policy: BackfillPolicy;
  priority: number;
  max_concurrent_job_runs: number;
  comment: string;
  counts: BackfillCounts;
  /** Settled partitions (live, failed, skipped) over all of them, 0 to 1, rounded down to 4 decimals (1: all settled). */
  progress: number;
  /** Job runs serving it that are running now. */
  running_job_runs: number;
  created_at: string;
  updated_at: string;
  cancel_reason: string | null;
}

/**
 * A progress (0 to 1, 4 decimals) as a whole percent, rounded down: 99.99% settled is 99%, not a 100% that still
 * builds. A millionth is added first: 0.29 * 100 is 28.999999999999996, which read 28% (QA, session 36).
 */
export function progressPercent(progress: number): number {
  return Math.floor(progress * 100 + 1e-6);
}
