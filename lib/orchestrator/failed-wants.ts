/**
 * The derived wants a failed want leaves behind. A want fails (or fails upstream) while wants derived for its other
 * inputs still build: they served it alone, yet went on building for nobody (found by QA, session 32), where a cancel
 * of it stopped them. Now a want's failure cancels its active derived wants, and with them the runs not started yet
 * that no other active want needs; a run already running ends as it would (make, after an error, lets its running
 * jobs finish and starts no more), and what it builds is live for whoever asks next.
 */
import { listItems } from '../state/append-list.js';
import { TERMINAL_WANT_STATUSES, wantsOfRun, type WantRecord } from '../state/build-state.js';
import { cancelWant } from './cancel-want.js';
import type { StepDraft } from './step-draft.js';

/** Most wants above a failed run's wants looked at: a chain of derived wants is as deep as the graph. */
const ANCESTORS_LOOKED_AT = 1000;

/**
 * Cancels the active derived wants of every want that the runs failed for good in this step's events (from `from`)
 * left failed, up their chains. A want already failed before has none left active (its count says so at once).
 */
export function cancelForFailedWants(d: StepDraft, from = 0): void {
  const seen = new Set<string>();
  for (let i = from; i < d.events.length; i++) {
    const e = d.events[i]!;
    if (e.type !== 'job_run_failed' || e.job_run_failed.retry_at > 0) continue;
    for (const wantId of [...wantsOfRun(d.state, e.job_run_failed.job_run_id)]) {
      let want = d.state.wants.get(wantId);
      for (let n = 0; want !== undefined && n < ANCESTORS_LOOKED_AT && !seen.has(want.want_id); n++) {
        seen.add(want.want_id);
        if (failed(want) && want.children_active > 0) cancelActiveChildren(d, want);
        want = want.parent_want_id ? d.state.wants.get(want.parent_want_id) : undefined;
      }
    }
  }
}

function failed(want: WantRecord): boolean {
  return want.status === 'failed' || want.status === 'upstream_failed';
}

function cancelActiveChildren(d: StepDraft, want: WantRecord): void {
  const reason = `want ${want.want_id}, which it was derived for, ${want.status === 'failed' ? 'failed' : 'failed upstream'}: nothing needs it any more`;
  for (const id of listItems(want.child_want_ids)) {
    const child = d.state.wants.get(id);
    if (child && !TERMINAL_WANT_STATUSES.has(child.status)) cancelWant(d, child, reason, { keepRunning: true });
  }
}
