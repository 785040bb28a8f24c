/**
 * A want's `max_concurrent_job_runs` (a backfill's cap) covers the runs that serve it or the wants derived from
 * it. A run that also serves a want without a cap (someone waiting interactively) is not held back by anyone's cap:
 * that want must find room.
 */
import type { BuildState, JobRunRecord } from '../state/build-state.js';
import { TERMINAL_WANT_STATUSES, wantsOfRun } from '../state/build-state.js';

/** The capped root wants a run counts against; empty when it serves any active want without a cap. */
export function capsOf(state: Pick<BuildState, 'wants' | 'run_wants'>, run: JobRunRecord): Array<{ root: string; cap: number }> {
  const caps = new Map<string, number>();
  for (const id of wantsOfRun(state, run.job_run_id)) {
    const want = state.wants.get(id);
    if (!want || TERMINAL_WANT_STATUSES.has(want.status)) continue;
    const root = state.wants.get(want.root_want_id) ?? want;
    if (root.max_concurrent_job_runs === 0) return [];
    caps.set(root.want_id, root.max_concurrent_job_runs);
  }
  return [...caps].map(([root, cap]) => ({ root, cap }));
}

/** Counts of runs started (or starting) per capped root, and whether a run may start under them. */
export class CapCounter {
  private readonly running = new Map<string, number>();

  constructor(private readonly state: Pick<BuildState, 'wants' | 'run_wants'>) {}

  count(run: JobRunRecord): void {
    for (const { root } of capsOf(this.state, run)) this.running.set(root, (this.running.get(root) ?? 0) + 1);
  }

  /** A capped run waits only when every capped want it serves is at its cap. */
  mayStart(run: JobRunRecord): boolean {
    const caps = capsOf(this.state, run);
    return caps.length === 0 || caps.some(({ root, cap }) => (this.running.get(root) ?? 0) < cap);
  }
}
