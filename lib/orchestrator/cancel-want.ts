/** A want's cancel, asked for (a command) or by its ttl: it takes its derived wants and the runs only they needed. */
import { listItems } from '../state/append-list.js';
import type { WantRecord } from '../state/build-state.js';
import { ACTIVE_JOB_RUN_STATUSES, TERMINAL_WANT_STATUSES } from '../state/build-state.js';
import type { StepDraft } from './step-draft.js';

/**
 * Cancels the want and the wants derived from it, then every run that no active want still needs; with `keepRunning`,
 * only those not running yet: a run under way is left to end and record what it built, as make lets its running jobs
 * finish after an error.
 */
export function cancelWant(d: StepDraft, want: WantRecord, reason: string, options: { keepRunning?: boolean } = {}): void {
  const runs = new Set<string>();
  const stack = [want.want_id];
  while (stack.length > 0) {
    const w = d.state.wants.get(stack.pop()!);
    if (!w || TERMINAL_WANT_STATUSES.has(w.status)) continue;
    d.emit({ type: 'want_canceled', want_canceled: { want_id: w.want_id, reason } });
    for (const id of listItems(w.job_run_ids)) runs.add(id);
    for (const id of listItems(w.child_want_ids)) stack.push(id);
  }
  // The run says why, as the want does: a ttl that ran out is not someone's cancel.
  const runReason = reason.startsWith('canceled') ? `want ${want.want_id} ${reason}` : `want ${want.want_id} canceled: ${reason}`;
  for (const id of runs) {
    const run = d.state.job_runs.get(id);
    if (!run || !ACTIVE_JOB_RUN_STATUSES.has(run.status)) continue;
    const stillWanted = run.config.outputs.some((ref) => d.state.active_wants_by_ref.has(ref));
    if (stillWanted || (options.keepRunning && (run.status === 'running' || d.input.launched.has(id)))) continue;
    if (run.status === 'running' || d.input.launched.has(id)) d.kill.push(id);
    d.emit({ type: 'job_run_canceled', job_run_canceled: { job_run_id: id, reason: runReason } });
  }
}
