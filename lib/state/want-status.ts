/**
 * A want's status as a pure function of its partitions and derived wants. The partitions enter through
 * per-want counts kept up to date by `reduce` as each partition moves, so deriving a status costs O(children),
 * not O(partitions): a want of ten thousand partitions is not re-read ten thousand times while it builds.
 */
import type { BuildState, PartitionRecord, WantRecord, WantStatus } from './build-state.js';
import { ACTIVE_JOB_RUN_STATUSES, TERMINAL_WANT_STATUSES } from './build-state.js';

/** Where one partition stands for one want. */
export type PartitionCategory = 'live' | 'failed' | 'active' | 'waiting' | 'none';

export interface PartitionCounts {
  readonly live: number;
  readonly failed: number;
  readonly active: number;
  readonly waiting: number;
}

export const NO_COUNTS: PartitionCounts = { live: 0, failed: 0, active: 0, waiting: 0 };

/** What of a want decides where its partitions stand: when it was made and what it rebuilds. */
export type WantBasis = Pick<WantRecord, 'created_event_id' | 'rebuild'>;

/** A live partition that a want must still rebuild: stale or tainted ones for 'stale', older ones for 'all'. */
export function mustRebuild(want: WantBasis, p: PartitionRecord): boolean {
  switch (want.rebuild) {
    case 'missing':
      return false;
    case 'stale':
      return p.stale_reasons.length > 0;
    case 'all':
      return p.built_event_id <= want.created_event_id;
  }
}

export function partitionCategory(state: BuildState, p: PartitionRecord | undefined, want: WantBasis): PartitionCategory {
  if (!p) return 'none';
  switch (p.status) {
    case 'live':
      return mustRebuild(want, p) ? 'none' : 'live';
    // A partition that failed before this want existed is the reason to rebuild it, not this want's failure.
    case 'failed':
      return p.changed_event_id > want.created_event_id ? 'failed' : 'none';
    case 'building': {
      const run = state.job_runs.get(p.job_run_id);
      // A failed run waiting out its retry backoff is still this partition's build, not an upstream wait.
      const building = run && (ACTIVE_JOB_RUN_STATUSES.has(run.status) || (run.status === 'failed' && run.retry_at > 0));
      return building ? 'active' : 'waiting';
    }
    default:
      return 'none';
  }
}

export function countPartitions(state: BuildState, refs: readonly string[], want: WantBasis): PartitionCounts {
  const counts = { ...NO_COUNTS };
  for (const ref of refs) {
    const c = partitionCategory(state, state.partitions.get(ref), want);
    if (c !== 'none') counts[c]++;
  }
  return counts;
}

export function moveCount(counts: PartitionCounts, from: PartitionCategory, to: PartitionCategory): PartitionCounts {
  if (from === to) return counts;
  const next = { ...counts };
  if (from !== 'none') next[from]--;
  if (to !== 'none') next[to]++;
  return next;
}

export function deriveWantStatus(state: BuildState, want: WantRecord): WantStatus {
  // Terminal states are final: a later rebuild or taint belongs to newer wants.
  if (TERMINAL_WANT_STATUSES.has(want.status)) return want.status;
  const { counts } = want;
  if (counts.failed > 0) return 'failed';
  if (counts.live === want.partitions.length) return 'successful';
  let childActive = false;
  for (const childId of want.child_want_ids) {
    const child = state.wants.get(childId);
    if (!child) continue;
    if (child.status === 'failed' || child.status === 'upstream_failed') return 'upstream_failed';
    if (!TERMINAL_WANT_STATUSES.has(child.status)) childActive = true;
  }
  if (counts.active > 0) return 'building';
  if (childActive || counts.waiting > 0) return 'upstream_building';
  return 'idle';
}
