/**
 * Batched jobs (`"batch": {"max_partitions", "max_wait_ms"}`): the refs of one job that are ready in a step are
 * built by runs of up to `max_partitions` refs each. A run's config is its refs' configs joined: outputs and args in
 * ref order (each ref's args are its own templates filled), inputs without repeats, the env (the same for every
 * ref, parse-graph.ts sees to it) once. Pure: the planner hands in what is ready and gets back what to queue.
 *
 * A run's refs are also bounded by their size: the job gets them as one environment variable, PLATFORM_OUTPUTS (a
 * JSON array), and Linux refuses to start a program with a string of its environment over 128 KiB (`spawn E2BIG`:
 * a batch of 10,000 refs failed so). A batch is closed before its PLATFORM_OUTPUTS would pass
 * {@link MAX_OUTPUTS_BYTES}, and before its args, concatenated per ref, would pass {@link MAX_ARGS_BYTES} (the OS
 * limits all of argv and the environment together, 2 MiB on a default Linux stack).
 */
import type { DataDep, JobConfig, OutputInputs } from '../events/build-event.js';
import type { BatchPolicy } from '../graph/graph-definition.js';

/** Most bytes of a batch's PLATFORM_OUTPUTS: below Linux's 128 KiB a string (MAX_ARG_STRLEN), with room to spare. */
export const MAX_OUTPUTS_BYTES = 96 * 1024;
/** Most bytes of a batch's args (each with its NUL): half of Linux's usual 2 MiB for argv and environment together. */
export const MAX_ARGS_BYTES = 1024 * 1024;

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
 * Groups a job's ready refs into runs of `max_partitions`, or fewer where their size says so (MAX_OUTPUTS_BYTES,
 * MAX_ARGS_BYTES); a last group that is not full waits until its oldest ref has waited `max_wait_ms` (then it goes
 * as it is). A group closed by its size is full. A ref named twice (two wants) goes once.
 */
export function planBatches<T>(ready: ReadonlyArray<ReadyRef<T>>, policy: BatchPolicy, now: number): BatchPlan<T> {
  const unique = new Map<string, ReadyRef<T>>();
  for (const r of ready) if (!unique.has(r.ref)) unique.set(r.ref, r);
  const runs: Array<Array<ReadyRef<T>>> = [];
  let group: Array<ReadyRef<T>> = [];
  let outputsBytes = 2; // []
  let argsBytes = 0;
  for (const r of unique.values()) {
    const refBytes = Buffer.byteLength(JSON.stringify(r.ref)) + 1; // and its comma
    let refArgsBytes = 0;
    for (const a of r.task.config.args) refArgsBytes += Buffer.byteLength(a) + 1;
    if (group.length > 0 && (outputsBytes + refBytes > MAX_OUTPUTS_BYTES || argsBytes + refArgsBytes > MAX_ARGS_BYTES)) {
      runs.push(group);
      group = [];
      outputsBytes = 2;
      argsBytes = 0;
    }
    group.push(r);
    outputsBytes += refBytes;
    argsBytes += refArgsBytes;
    if (group.length === policy.max_partitions) {
      runs.push(group);
      group = [];
      outputsBytes = 2;
      argsBytes = 0;
    }
  }
  const held: BatchPlan<T>['held'] = [];
  if (group.length > 0) {
    let oldest = Infinity; // a loop, not Math.min(...group): a group of 100,000 is more arguments than a call takes
    for (const r of group) oldest = Math.min(oldest, r.readyAt);
    const due = oldest + policy.max_wait_ms;
    if (policy.max_wait_ms > 0 && now < due) held.push({ at: due, refs: group });
    else runs.push(group);
  }
  return { runs, held };
}

/** A failed batch retried in halves, so one bad ref stops failing the others (after enough retries, alone). */
export function halves<T>(items: readonly T[]): T[][] {
  if (items.length <= 1) return [items.slice()];
  const mid = Math.ceil(items.length / 2);
  return [items.slice(0, mid), items.slice(mid)];
}
