/**
 * A want's status as a pure function of its partitions and derived wants. The partitions enter through
 * per-want counts kept up to date by `reduce` as each partition moves, and its derived wants through counts `putWant`
 * keeps as each of them moves, so deriving a status costs O(1): a want of ten thousand partitions, or of ten thousand
 * derived wants, is not re-read ten thousand times while it builds.
 */
import type { BuildState, PartitionRecord, WantRecord, WantStatus } from './build-state.js';
import { ACTIVE_JOB_RUN_STATUSES, TERMINAL_WANT_STATUSES } from './build-state.js';

/**
 * Where one partition stands for one want. `skipped`: left as it is by the want's policy (under 'absent', a
 * partition that failed before the want, or is tainted): settled without a build.
 */
export type PartitionCategory = 'live' | 'failed' | 'skipped' | 'active' | 'waiting' | 'none';

export interface PartitionCounts {
  readonly live: number;
  readonly failed: number;
  readonly skipped: number;
  readonly active: number;
  readonly waiting: number;
}

export const NO_COUNTS: PartitionCounts = { live: 0, failed: 0, skipped: 0, active: 0, waiting: 0 };

/** What of a want decides where its partitions stand: when it was made and what it rebuilds. */
export type WantBasis = Pick<WantRecord, 'created_event_id' | 'created_at' | 'rebuild'>;

/**
 * A live partition that a want must still rebuild: for 'stale' one stale, for 'all' any, built before the want. A
 * build made since is stale for it only once: when its job changed since its run was queued, or when that run was
 * queued before the want (one it joined, built from what was there then). A build of a run queued since is taken
 * as it is: still stale through an input it only QUERYs (never rebuilt for it), asking again would rebuild for ever.
 */
export function mustRebuild(state: Pick<BuildState, 'job_runs'>, want: WantBasis, p: PartitionRecord): boolean {
  if (want.rebuild === 'missing' || want.rebuild === 'absent') return false;
  if (p.built_event_id <= want.created_event_id) return want.rebuild === 'all' || p.stale_reasons.length > 0;
  if (p.stale_reasons.length === 0) return false;
  if (jobChanged(p)) return true;
  const run = state.job_runs.get(p.job_run_id);
  return run !== undefined && run.queued_at < want.created_at;
}

/** Its build's job was edited since (staleness.ts lists that reason last, and only it begins "job "). */
function jobChanged(p: PartitionRecord): boolean {
  return p.stale_reasons.length > 0 && p.stale_reasons[p.stale_reasons.length - 1]!.startsWith('job ');
}

/**
 * A partition with a build whose rebuild failed for good since the want was made: it stays as its build is (live, or
 * tainted), and a want that needed the rebuild fails with it rather than asking again for ever.
 */
function rebuildFailedSince(p: PartitionRecord, want: WantBasis): boolean {
  return (p.rebuild_failed_event_id ?? 0) > want.created_event_id;
}

export function partitionCategory(state: BuildState, p: PartitionRecord | undefined, want: WantBasis): PartitionCategory {
  if (!p) return 'none';
  switch (p.status) {
    case 'live':
      if (!mustRebuild(state, want, p)) return 'live';
      return rebuildFailedSince(p, want) ? 'failed' : 'none';
    // A partition that failed before this want existed is the reason to rebuild it, not this want's failure.
    case 'failed':
      if (p.changed_event_id > want.created_event_id) return 'failed';
      return want.rebuild === 'absent' ? 'skipped' : 'none';
    case 'tainted':
      if (want.rebuild === 'absent') return 'skipped';
      return rebuildFailedSince(p, want) ? 'failed' : 'none';
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
  // Its derived wants as the stored record counts them (build-state.ts): `want` may be a copy held aside.
  const children = state.wants.get(want.want_id) ?? want;
  const done = counts.live + counts.skipped;
  if (want.backfill_id) {
    // A backfill goes on past failures: it ends once every partition is settled, failed if any failed. A failed
    // input fails the partitions that needed it (plan-step.ts), so its derived wants' failures need no look here.
    if (done + counts.failed === want.partitions.length) return counts.failed > 0 ? 'failed' : 'successful';
    if (counts.active > 0) return 'building';
    if (counts.waiting > 0 || children.children_active > 0) return 'upstream_building';
    return 'idle';
  }
  if (counts.failed > 0) return 'failed';
  if (done === want.partitions.length) return 'successful';
  if (children.children_failed > 0) return 'upstream_failed';
  if (counts.active > 0) return 'building';
  if (children.children_active > 0 || counts.waiting > 0) return 'upstream_building';
  return 'idle';
}
