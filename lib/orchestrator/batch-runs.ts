/**
 * Batched jobs (`"batch": {"max_partitions", "max_wait_ms"}`): the refs of one job that are ready in a step are
 * built by runs of up to `max_partitions` refs each. A run's config is its refs' configs joined: outputs and args in
 * ref order (each ref's args are its own templates filled), inputs without repeats, the env (the same for every
 * ref, parse-graph.ts sees to it) once. Pure: the planner hands in what is ready and gets back what to queue.
 */
import type { DataDep, JobConfig, OutputInputs } from '../events/build-event.js';
import type { BatchPolicy } from '../graph/graph-definition.js';

export interface BatchTask {
  job_label: string;
  config: JobConfig;
  exec: readonly string[];
  timeout_seconds: number;
  job_fingerprint: string;
  /** Set for a joined task: each output's own inputs (its lineage). */
  output_inputs?: readonly OutputInputs[];
}

export interface ReadyRef<T> {
  ref: string;
  task: BatchTask;
  /** Since when it is ready (epoch ms): its want was made, or its last input turned live. */
  readyAt: number;
  /** Whoever asked (the planner's want record). */
  item: T;
}

/** One run's task for several refs of the same job. */
export function joinTasks(tasks: readonly BatchTask[]): BatchTask {
  const first = tasks[0]!;
  if (tasks.length === 1) return first;
  const inputs: DataDep[] = [];
  const seen = new Set<string>();
  for (const t of tasks) {
    for (const dep of t.config.inputs) {
      const key = `${dep.dep_type}\0${dep.partition_ref}`;
      if (seen.has(key)) continue;
      seen.add(key);
      inputs.push(dep);
    }
  }
  return {
    ...first,
    output_inputs: tasks.map((t) => ({ output: t.config.outputs[0]!, inputs: t.config.inputs.map((d) => d.partition_ref) })),
    config: {
      outputs: tasks.flatMap((t) => t.config.outputs),
      inputs,
      args: tasks.flatMap((t) => t.config.args),
      env: first.config.env,
    },
  };
}

export interface BatchPlan<T> {
  /** Each: the refs of one run, in the order they became ready. */
  runs: Array<Array<ReadyRef<T>>>;
  /** Batches held back for their wait, and when each is due to go anyway. */
  held: Array<{ at: number; refs: Array<ReadyRef<T>> }>;
}

/**
 * Groups a job's ready refs into runs of `max_partitions`; a last group that is not full waits until its oldest ref
 * has waited `max_wait_ms` (then it goes as it is). A ref named twice (two wants) goes once.
 */
export function planBatches<T>(ready: ReadonlyArray<ReadyRef<T>>, policy: BatchPolicy, now: number): BatchPlan<T> {
  const unique = new Map<string, ReadyRef<T>>();
  for (const r of ready) if (!unique.has(r.ref)) unique.set(r.ref, r);
  const refs = [...unique.values()];
  const runs: Array<Array<ReadyRef<T>>> = [];
  const held: BatchPlan<T>['held'] = [];
  for (let i = 0; i < refs.length; i += policy.max_partitions) {
    const group = refs.slice(i, i + policy.max_partitions);
    if (group.length < policy.max_partitions && policy.max_wait_ms > 0) {
      const due = Math.min(...group.map((r) => r.readyAt)) + policy.max_wait_ms;
      if (now < due) {
        held.push({ at: due, refs: group });
        continue;
      }
    }
    runs.push(group);
  }
  return { runs, held };
}

/** A failed batch retried in halves, so one bad ref stops failing the others (after enough retries, alone). */
export function halves<T>(items: readonly T[]): T[][] {
  if (items.length <= 1) return [items.slice()];
  const mid = Math.ceil(items.length / 2);
  return [items.slice(0, mid), items.slice(mid)];
}
