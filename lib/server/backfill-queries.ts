/**
 * Reads of backfills. A backfill's counts are its want's, kept by the fold as partitions move, so a view costs
 * the runs running now (at most the graph's concurrency), never its range.
 */
import type { BackfillView } from '../api/backfills.js';
import { BACKFILL_POLICY_OF } from '../api/backfill-policy.js';
import type { Page } from '../api/page.js';
import { TERMINAL_WANT_STATUSES, wantsOfRun, type BuildState, type WantRecord } from '../state/build-state.js';
import type { PageQuery } from './queries.js';
import { openCount } from '../state/want-window.js';

const iso = (ms: number): string => new Date(ms).toISOString();

export function backfillView(state: BuildState, want: WantRecord): BackfillView {
  const c = want.counts;
  // The fold keeps counts for active wants only: an ended one's `active` and `waiting` are frozen at its end (a
  // canceled backfill read "building 2" with nothing running). Nothing builds or waits for an ended backfill.
  const ended = TERMINAL_WANT_STATUSES.has(want.status);
  const active = ended ? 0 : c.active;
  const total = want.partitions.length;
  const settled = c.live + c.failed + c.skipped;
  // Waiting: let into scheduling, not settled, no run of its own yet: its inputs are being built (or its run waits for
  // the backfill's cap). The fold's own `waiting` counts only a partition whose run went away (a dep_missed), so the
  // usual case read as pending, "not yet started", while its inputs were built. Let in: a small backfill's every
  // partition, a windowed one's open ones (two ranks of the index, O(log n)). Pending: those not let in yet.
  const letIn = want.window > 0 ? openCount(state, want.want_id) : total - settled;
  const waiting = ended ? 0 : Math.max(c.waiting, letIn - active);
  // A canceled backfill's unsettled partitions are its cancel's, not pending: none will be built for it.
  const canceled = want.status === 'canceled' ? Math.max(0, total - settled) : 0;
  let running = 0;
  for (const [, id] of state.job_runs_by_status.running) {
    const run = state.job_runs.get(id);
    if (run && servesRoot(state, run.job_run_id, want.want_id)) running++;
  }
  return {
    backfill_id: want.backfill_id,
    want_id: want.want_id,
    status: want.status,
    pattern: want.pattern,
    partitions: total,
    policy: BACKFILL_POLICY_OF[want.rebuild],
    priority: want.priority,
    max_concurrent_job_runs: want.max_concurrent_job_runs,
    comment: want.comment,
    counts: {
      live: c.live,
      failed: c.failed,
      skipped: c.skipped,
      building: active,
      waiting,
      pending: Math.max(0, total - settled - active - waiting - canceled),
      canceled,
    },
    // Rounded down, in integers: rounded to the nearest, 19,999 of 20,000 (0.99995) read 1 while one still built.
    progress: total === 0 ? 1 : Math.floor((settled * 10_000) / total) / 10_000,
    running_job_runs: running,
    created_at: iso(want.created_at),
    updated_at: iso(want.updated_at),
    cancel_reason: want.cancel_reason || null,
  };
}

/** The backfill's want, or undefined when there is no such backfill. */
export function backfillWant(state: BuildState, backfillId: string): WantRecord | undefined {
  const wantId = state.backfills.get(backfillId);
  return wantId === undefined ? undefined : state.wants.get(wantId);
}

/** Backfills in creation order (`reverse`: newest first). */
export function listBackfills(state: BuildState, q: PageQuery): Page<BackfillView> {
  const entries = q.reverse ? state.backfill_order.sliceReverse(q.offset, q.limit) : state.backfill_order.slice(q.offset, q.limit);
  const data: BackfillView[] = [];
  for (const [, id] of entries) {
    const want = backfillWant(state, id);
    if (want) data.push(backfillView(state, want));
  }
  return { data, total: state.backfill_order.size, offset: q.offset, limit: q.limit };
}

function servesRoot(state: BuildState, jobRunId: string, rootWantId: string): boolean {
  for (const id of wantsOfRun(state, jobRunId)) if (state.wants.get(id)?.root_want_id === rootWantId) return true;
  return false;
}
