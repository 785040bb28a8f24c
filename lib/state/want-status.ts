/** A want's status as a pure function of its partitions and derived wants. */
import type { BuildState, WantRecord, WantStatus } from './build-state.js';
import { ACTIVE_JOB_RUN_STATUSES, TERMINAL_WANT_STATUSES } from './build-state.js';

export function deriveWantStatus(state: BuildState, want: WantRecord): WantStatus {
  // Terminal states are final: a later rebuild or taint belongs to newer wants.
  if (TERMINAL_WANT_STATUSES.has(want.status)) return want.status;
  let live = 0;
  let runActive = false;
  let waiting = false;
  for (const ref of want.partitions) {
    const p = state.partitions.get(ref);
    if (!p) continue;
    // A partition that failed before this want existed is the reason to rebuild it, not this want's failure.
    if (p.status === 'failed' && p.changed_event_id > want.created_event_id) return 'failed';
    if (p.status === 'live') live++;
    if (p.status === 'building') {
      const run = state.job_runs.get(p.job_run_id);
      // A failed run waiting out its retry backoff is still this partition's build, not an upstream wait.
      if (run && (ACTIVE_JOB_RUN_STATUSES.has(run.status) || (run.status === 'failed' && run.retry_at > 0))) runActive = true;
      else waiting = true;
    }
  }
  if (live === want.partitions.length) return 'successful';
  let childActive = false;
  for (const childId of want.child_want_ids) {
    const child = state.wants.get(childId);
    if (!child) continue;
    if (child.status === 'failed' || child.status === 'upstream_failed') return 'upstream_failed';
    if (!TERMINAL_WANT_STATUSES.has(child.status)) childActive = true;
  }
  if (runActive) return 'building';
  if (childActive || waiting) return 'upstream_building';
  return 'idle';
}
