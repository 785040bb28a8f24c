/**
 * `PlatformService.GetJobConfigs`: the JobConfig of every task that produces one of the requested refs, in the
 * order the refs were asked for. A task producing several of the refs (a config program's multi-output config, or
 * the same ref asked twice) is listed once: two configs are the same task when their job and their set of outputs
 * are the same. Inputs are not followed (that is AnalyzeGraph).
 */
import type { ProtoJobConfig, ProtoJobConfigResponse } from '../../api/platform-service.js';
import type { JobConfig } from '../../events/build-event.js';
import type { JobResolver, ResolvedTask } from '../../graph/job-resolver.js';

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

/** Rejects with the resolver's GraphError (`unknown_ref`, `ambiguous_ref`, `config_failed`). */
export async function getJobConfigs(resolver: JobResolver, outputRefs: readonly string[]): Promise<ProtoJobConfigResponse> {
  const tasks = await resolver.resolve(outputRefs);
  const seen = new Set<string>();
  const configs: ProtoJobConfig[] = [];
  for (const task of tasks.values()) {
    const id = taskIdentity(task);
    if (seen.has(id)) continue;
    seen.add(id);
    configs.push(protoJobConfig(task.config));
  }
  return { configs };
}
