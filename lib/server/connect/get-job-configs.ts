/**
 * `PlatformService.GetJobConfigs`: the JobConfig of every task that produces one of the requested refs, in the
 * order the refs were asked for. A task producing several of the refs (a config program's multi-output config, or
 * the same ref asked twice) is listed once: two configs are the same task when their job and their set of outputs
 * are the same. Inputs are not followed (that is AnalyzeGraph).
 *
 * Bounded by `budget.maxInputs` over the configs of the answer (refused past it, GraphError `too_large`; the
 * number of configs is bounded by the refs of the request) and paced by `pacer`, as AnalyzeGraph is.
 */
import type { ProtoJobConfig, ProtoJobConfigResponse } from '../../api/platform-service.js';
import type { JobConfig } from '../../events/build-event.js';
import { tooManyInputs, type GraphBudget } from '../../graph/graph-budget.js';
import type { JobResolver, ResolvedTask } from '../../graph/job-resolver.js';
import type { WorkPacer } from '../../system/work-pacer.js';

/** A copy in proto field names (the resolver's configs are shared and cached: never handed out). */
export function protoJobConfig(config: JobConfig): ProtoJobConfig {
  return {
    outputs: [...config.outputs],
    inputs: config.inputs.map((d) => ({ depType: d.dep_type, partitionRef: d.partition_ref })),
    args: [...config.args],
    env: { ...config.env },
  };
}

/** Identifies a task: its job and the set of refs its config outputs. */
export function taskIdentity(task: Pick<ResolvedTask, 'job_label' | 'config'>): string {
  return JSON.stringify([task.job_label, [...new Set(task.config.outputs)].sort()]);
}

/** Rejects with the resolver's GraphError (`unknown_ref`, `ambiguous_ref`, `config_failed`, `too_large`). */
export async function getJobConfigs(
  resolver: JobResolver,
  outputRefs: readonly string[],
  budget: GraphBudget,
  pacer: WorkPacer,
): Promise<ProtoJobConfigResponse> {
  const tasks = await resolver.resolve(outputRefs, pacer);
  const unique: Array<[string, ResolvedTask]> = [];
  const seen = new Set<string>();
  let inputs = 0;
  let largest = { ref: '', job: '', inputs: -1 };
  // Counted before any config is copied: a refused answer costs no copy.
  for (const [ref, task] of tasks) {
    if (pacer.due()) await pacer.pause();
    const id = taskIdentity(task);
    if (seen.has(id)) continue;
    seen.add(id);
    unique.push([ref, task]);
    const listed = task.config.inputs.length;
    inputs += listed;
    if (listed > largest.inputs) largest = { ref, job: task.job_label, inputs: listed };
  }
  if (inputs > budget.maxInputs) throw tooManyInputs('GetJobConfigs', budget, new Set(outputRefs).size, largest);
  const configs: ProtoJobConfig[] = [];
  for (const [, task] of unique) {
    if (pacer.due(1 + task.config.inputs.length)) await pacer.pause();
    configs.push(protoJobConfig(task.config));
  }
  return { configs };
}
