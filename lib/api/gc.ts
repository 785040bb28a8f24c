/** What `POST /api/gc` (`platform gc`) did, or with `dry_run` would do, under `retention` in platform.json. */
import type { RetentionReport } from '../executor/job-log-retention.js';

export interface EventCompactionReport {
  /** `retention.events_keep`, or null when the event log is kept whole. */
  keep: number | null;
  /** The first event still in the log after the pass (before it, for a dry run). */
  first_event_id: number;
  latest_event_id: number;
  /** Events removed (a dry run: that would be), now held by the compaction base `.platform/compacted.bin`. */
  removed_events: number;
  /**
   * Records of history that ended before the first event kept and that nothing current needs, dropped from the
   * state (a dry run: would be): finished want trees, their runs, builds no current build descends from.
   */
  pruned: { wants: number; job_runs: number; builds: number };
}

export interface GcReport extends RetentionReport {
  events: EventCompactionReport;
}
