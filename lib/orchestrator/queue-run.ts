/**
 * Queued runs: a run of a ref's config, of a batch, or again of an earlier run; and a ref that cannot be configured,
 * recorded as a run that failed before it started.
 */
import { outputInputBuilds, type BuildState, type JobRunRecord, type WantRecord } from '../state/build-state.js';
import type { BatchTask } from './batch-runs.js';
import type { StepDraft } from './step-draft.js';
import { inputOrigin } from './input-origin.js';

/** A run to queue: a resolved config, an earlier run of the same outputs, or a batch of refs joined (batch-runs.ts). */
export type QueuedTask = BatchTask;

/** The job label of a run recorded for a ref no job could be found or configured for. */
const UNRESOLVED_JOB = '(unresolved)';

/**
 * Queues a run of `task`: a resolved config, or an earlier run of the same outputs being run again; `retry_of`, the
 * failed run it is the next attempt of ('' for none: a first attempt, or a run again after missing inputs); `found`,
 * inputs beyond its config's that an earlier attempt reported missing (foundInputs): it reads them as well.
 */
export function queueRun(d: StepDraft, task: QueuedTask, want: WantRecord, attempt: number, retry_of = '', found: readonly string[] = []): string {
  const job_run_id = `r-${d.state.created.job_runs + 1}`;
  const { job_label, config, exec, timeout_seconds, job_fingerprint } = task;
  const declared = config.inputs.map((dep) => dep.partition_ref);
  const extra = found.length === 0 ? found : [...new Set(found)].filter((ref) => !declared.includes(ref));
  // What it consumes: the current builds of its inputs (MATERIALIZE and QUERY), whatever their status: a tainted
  // build, or one being rebuilt, is still what the job reads, and its lineage must say so (the consumer is then stale).
  const input_builds = (extra.length === 0 ? declared : [...declared, ...extra]).flatMap((partition_ref) => {
    const p = d.state.partitions.get(partition_ref);
    return p?.build_id ? [{ partition_ref, build_id: p.build_id }] : [];
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
      output_inputs: task.output_inputs ? task.output_inputs.map((o) => ({ output: o.output, inputs: [...o.inputs, ...extra] })) : [],
      retry_of,
    },
  });
  return job_run_id;
}

/**
 * The inputs a run read beyond its config's: those an attempt of it reported missing (a dep_missed) and those its
 * attempt before had found so, carried from attempt to attempt, so the build that follows consumed them.
 */
export function foundInputs(run: JobRunRecord): readonly string[] {
  const declared = new Set(run.config.inputs.map((dep) => dep.partition_ref));
  const found = run.input_builds.map((b) => b.partition_ref).filter((ref) => !declared.has(ref));
  return [...found, ...run.missing];
}

/**
 * The inputs the current builds of `outputs` read beyond their job's config (found missing by an attempt, foundInputs):
 * a new run of them reads them too, though it may not say so (they are live now, so nothing is missing), and its build
 * must list them, or a change of one passes the new build by. Carried from build to build; the job's own
 * inputs are not among them (a config that now declares one has it as its own).
 */
export function carriedInputs(state: Pick<BuildState, 'partitions' | 'builds' | 'job_runs'>, outputs: readonly string[]): readonly string[] {
  let carried: string[] | undefined;
  for (const ref of outputs) {
    const buildId = state.partitions.get(ref)?.build_id;
    const build = buildId ? state.builds.get(buildId) : undefined;
    const run = build ? state.job_runs.get(build.job_run_id) : undefined;
    if (!run || run.input_builds.length === 0) continue;
    const inputs = run.config.inputs;
    // Most jobs have a few inputs: looked through, where a set a run would cost every run queued.
    const declared = inputs.length > 16 ? new Set(inputs.map((dep) => dep.partition_ref)) : undefined;
    for (const b of outputInputBuilds(run, ref)) {
      const own = declared ? declared.has(b.partition_ref) : inputs.some((dep) => dep.partition_ref === b.partition_ref);
      if (!own) (carried ??= []).push(b.partition_ref);
    }
  }
  return carried ?? [];
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
  const origin = want.parent_want_id ? inputOrigin(d, want, ref) : undefined;
  const neededBy = want.parent_want_id
    ? `it is ${origin ?? 'an input'}, wanted by ${want.want_id} for ${want.parent_want_id}`
    : `it was asked for by want ${want.want_id}`;
  d.emit({
    type: 'job_run_failed',
    job_run_failed: { job_run_id, exit_code: -1, signal: '', reason: `${task.error} (${neededBy})`, retry_at: 0, ended_at: 0 },
  });
}
