/**
 * Ready refs of a step: queued at once, or, for a batched job, gathered while every want of the step is looked at
 * and then queued as batches (batch-runs.ts plans them), the refs held back for a fuller batch looked at again later.
 */
import type { WantRecord } from '../state/build-state.js';
import { joinTasks, planBatches } from './batch-runs.js';
import { carriedInputs, queueRun, type QueuedTask } from './queue-run.js';
import type { StepDraft } from './step-draft.js';

/** A ref ready to build: queued now, or, for a batched job, gathered into this step's batches. */
export function queueReady(d: StepDraft, task: QueuedTask, want: WantRecord, ref: string): void {
  const batch = d.input.policy.jobs.get(task.job_label)?.batch;
  if (!batch) {
    queueRun(d, task, want, 1, '', carriedInputs(d.state, task.config.outputs));
    return;
  }
  let readyAt = want.created_at;
  for (const dep of task.config.inputs) {
    const p = d.state.partitions.get(dep.partition_ref);
    if (dep.dep_type === 'MATERIALIZE' && p) readyAt = Math.max(readyAt, p.updated_at);
  }
  const list = d.ready.get(task.job_label) ?? [];
  list.push({ ref, task, readyAt, item: want });
  d.ready.set(task.job_label, list);
}

export function queueBatches(d: StepDraft): void {
  for (const [label, ready] of d.ready) {
    const policy = d.input.policy.jobs.get(label)?.batch;
    // Always there (a ref is gathered only for a job with a batch policy, which a step does not change): for the type.
    if (!policy) continue;
    const plan = planBatches(ready, policy, d.input.now);
    for (const run of plan.runs) {
      const task = joinTasks(run.map((r) => r.task));
      queueRun(d, task, run[0]!.item, 1, '', carriedInputs(d.state, task.config.outputs));
    }
    for (const { at, refs } of plan.held) {
      d.deadlines.push(at);
      for (const r of refs) d.held.push([r.item.want_id, r.ref]);
    }
  }
  d.ready.clear();
}
