/**
 * `PlatformService.AnalyzeGraph`: the job graph of the requested refs, i.e. every task of their transitive
 * MATERIALIZE closure once, inputs before the tasks that need them (QUERY inputs are listed in the configs but not
 * followed). `graph.outputs` are the requested refs, duplicates once, in request order.
 *
 * Bounded by `budget` (a graph over it is refused, GraphError `too_large`) and paced by `pacer`, which lets the
 * event loop turn between slices and stops the walk when the request's deadline passes or its client goes.
 */
import type { ProtoGraphAnalyzeResponse, ProtoTask } from '../../api/platform-service.js';
import type { GraphBudget } from '../../graph/graph-budget.js';
import type { JobResolver } from '../../graph/job-resolver.js';
import type { WorkPacer } from '../../system/work-pacer.js';
import { protoJobConfig } from './get-job-configs.js';

/** Rejects with the resolver's GraphError (`unknown_ref`, `ambiguous_ref`, `config_failed`, `cycle`, `too_large`). */
export async function analyzeGraph(
  resolver: JobResolver,
  outputRefs: readonly string[],
  budget: GraphBudget,
  pacer: WorkPacer,
): Promise<ProtoGraphAnalyzeResponse> {
  const { outputs, nodes } = await resolver.analyze(outputRefs, { budget, pacer });
  const protoNodes: ProtoTask[] = [];
  for (const n of nodes) {
    if (pacer.due(1 + n.config.inputs.length)) await pacer.pause();
    protoNodes.push({ jobLabel: n.job_label, config: protoJobConfig(n.config) });
  }
  return { graph: { outputs: [...outputs], nodes: protoNodes } };
}
