/**
 * Where a derived want's input came from, for the error of an input that cannot be built: the user never typed the
 * ref, so "no job produces missing/1" must say which job asked for it (its declared inputs) or which run reported it
 * missing. Looks at most ORIGIN_LOOK of the parent's partitions: an error's words, not a scan of a large want.
 */
import type { WantRecord } from '../state/build-state.js';
import type { StepDraft } from './step-draft.js';

const ORIGIN_LOOK = 1_000;

/** "an input of c/1 (job c's inputs)", "reported missing by run r-2 (job m) of m/1", or undefined when not found. */
export function inputOrigin(d: StepDraft, want: WantRecord, ref: string): string | undefined {
  const parent = want.parent_want_id ? d.state.wants.get(want.parent_want_id) : undefined;
  if (!parent) return undefined;
  const looked = Math.min(parent.partitions.length, ORIGIN_LOOK);
  for (let i = 0; i < looked; i++) {
    const needer = parent.partitions[i]!;
    if (want.source === 'dep_missed') {
      const run = d.state.job_runs.get(d.state.partitions.get(needer)?.job_run_id ?? '');
      if (run?.status === 'dep_missed' && run.missing.includes(ref)) return `reported missing by run ${run.job_run_id} (job ${run.job_label}) of ${needer}`;
    } else {
      const task = d.input.tasks.get(needer) ?? d.input.knownTasks?.(needer);
      if (task?.ok && task.config.inputs.some((dep) => dep.partition_ref === ref)) return `an input of ${needer}, in job ${task.job_label}'s inputs`;
    }
  }
  return undefined;
}
