/** The graph as the orchestrator's TaskSource: a failing job's refs fail alone, the rest still resolve. */
import { errorMessage } from '../errors.js';
import type { JobResolver } from '../graph/job-resolver.js';
import type { WorkspaceGraph } from '../graph/workspace-graph.js';
import type { JobPolicy, SchedulingPolicy, TaskResolution } from './plan-step.js';
import type { TaskSource } from './task-source.js';

export class GraphTaskSource implements TaskSource {
  private view: { resolver: JobResolver; policy: SchedulingPolicy };

  constructor(private readonly graph: WorkspaceGraph) {
    this.view = viewOf(graph.current());
  }

  /** Picks up an edited platform.json; true when the graph in use changed. */
  async refresh(): Promise<boolean> {
    await this.graph.refresh();
    if (this.graph.current() === this.view.resolver) return false;
    this.view = viewOf(this.graph.current());
    return true;
  }

  get policy(): SchedulingPolicy {
    return this.view.policy;
  }

  async resolve(refs: readonly string[]): Promise<Map<string, TaskResolution>> {
    const out = new Map<string, TaskResolution>();
    if (refs.length === 0) return out;
    const groups = new Map<string, string[]>();
    for (const ref of refs) {
      try {
        const label = this.view.resolver.jobFor(ref).label;
        groups.set(label, [...(groups.get(label) ?? []), ref]);
      } catch (err) {
        out.set(ref, { ok: false, job_label: '', error: errorMessage(err) });
      }
    }
    await Promise.all(
      [...groups].map(async ([label, group]) => {
        try {
          for (const [ref, task] of await this.view.resolver.resolve(group)) {
            out.set(ref, { ok: true, job_label: task.job_label, config: task.config, exec: task.job.exec, timeout_seconds: task.job.timeout_seconds });
          }
        } catch (err) {
          // One bad ref must not fail the others batched with it: alone, each gets its own answer.
          if (group.length === 1) {
            out.set(group[0]!, { ok: false, job_label: label, error: errorMessage(err) });
            return;
          }
          const alone = await Promise.all(group.map((ref) => this.resolve([ref])));
          for (const m of alone) for (const [ref, r] of m) out.set(ref, r);
        }
      }),
    );
    return out;
  }
}

function viewOf(resolver: JobResolver) {
  const graph = resolver.graph;
  const jobs = new Map<string, JobPolicy>(graph.jobs.map((j) => [j.label, { retries: j.retries, max_concurrency: j.max_concurrency }]));
  return {
    resolver,
    policy: { max_concurrent_job_runs: graph.max_concurrent_job_runs, jobs },
  };
}
