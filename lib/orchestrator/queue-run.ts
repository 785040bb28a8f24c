/**
 * Queued runs: a run of a ref's config, of a batch, or again of an earlier run; and a ref that cannot be configured,
 * recorded as a run that failed before it started.
 */
import type { WantRecord } from '../state/build-state.js';
import type { BatchTask } from './batch-runs.js';
import type { StepDraft } from './step-draft.js';

/** A run to queue: a resolved config, an earlier run of the same outputs, or a batch of refs joined (batch-runs.ts). */
export type QueuedTask = BatchTask;

/** The job label of a run recorded for a ref no job could be found or configured for. */
const UNRESOLVED_JOB = '(unresolved)';

/**
 * Queues a run of `task`: a resolved config, or an earlier run of the same outputs being run again; `retry_of`, the
 * failed run it is the next attempt of ('' for none: a first attempt, or a run again after missing inputs).
 */
export function queueRun(d: StepDraft, task: QueuedTask, want: WantRecord, attempt: number, retry_of = ''): string {
  const job_run_id = `r-${d.state.created.job_runs + 1}`;
  const { job_label, config, exec, timeout_seconds, job_fingerprint } = task;
  // What it consumes: the builds of its inputs (MATERIALIZE and QUERY) live now.
  const input_builds = config.inputs.flatMap((dep) => {
    const p = d.state.partitions.get(dep.partition_ref);
    return p?.status === 'live' && p.build_id ? [{ partition_ref: dep.partition_ref, build_id: p.build_id }] : [];
  });
  d.emit({
    type: 'job_run_queued',
    job_run_queued: {
      job_run_id,
      job_label,
      config,
      want_ids: [want.want_id],
      attempt,
      exec: [...exec],
      timeout_seconds,
      input_builds,
      job_fingerprint,
      output_inputs: task.output_inputs ? task.output_inputs.map((o) => ({ output: o.output, inputs: [...o.inputs] })) : [],
      retry_of,
    },
  });
  return job_run_id;
}

/** A ref whose config cannot be made fails as a run that never started, so the reason is on record. */
export function failUnresolvable(d: StepDraft, ref: string, task: { job_label: string; error: string }, want: WantRecord): void {
  const unresolved = { outputs: [ref], inputs: [], args: [], env: {} };
  const job_run_id = queueRun(
    d,
    { job_label: task.job_label || UNRESOLVED_JOB, config: unresolved, exec: [], timeout_seconds: 0, job_fingerprint: '' },
    want,
    1,
  );
  const neededBy = want.parent_want_id
    ? `it is an input wanted by ${want.want_id} for ${want.parent_want_id}`
    : `it was asked for by want ${want.want_id}`;
  d.emit({
    type: 'job_run_failed',
    job_run_failed: { job_run_id, exit_code: -1, signal: '', reason: `${task.error} (${neededBy})`, retry_at: 0, ended_at: 0 },
  });
}
