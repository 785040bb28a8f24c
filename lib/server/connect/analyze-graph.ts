/**
 * `PlatformService.AnalyzeGraph`: the job graph of the requested refs, i.e. every task of their transitive
 * MATERIALIZE closure once, inputs before the tasks that need them (QUERY inputs are listed in the configs but not
 * followed). `graph.outputs` are the requested refs, duplicates once, in request order.
 */
import type { ProtoGraphAnalyzeResponse } from '../../api/platform-service.js';
import type { JobResolver } from '../../graph/job-resolver.js';
import { protoJobConfig } from './get-job-configs.js';

/** Rejects with the resolver's GraphError (`unknown_ref`, `ambiguous_ref`, `config_failed`, `cycle`). */
export async function analyzeGraph(resolver: JobResolver, outputRefs: readonly string[]): Promise<ProtoGraphAnalyzeResponse> {
  const { outputs, nodes } = await resolver.analyze(outputRefs);
  return {
    graph: {
      outputs: [...outputs],
      nodes: nodes.map((n) => ({ jobLabel: n.job_label, config: protoJobConfig(n.config) })),
    },
  };
}
