/** The graph as the orchestrator's TaskSource: a failing job's refs fail alone, the rest still resolve. */
import type { Observable } from 'rxjs';
import { errorMessage } from '../errors.js';
import { GraphError } from '../graph/graph-error.js';
import { jobFingerprint, legacyJobFingerprint } from '../graph/job-fingerprint.js';
import type { JobResolver } from '../graph/job-resolver.js';
import type { WorkspaceGraph } from '../graph/workspace-graph.js';
import type { JobPolicy, SchedulingPolicy, TaskResolution } from './step-input.js';
import type { TaskSource } from './task-source.js';

export class GraphTaskSource implements TaskSource {
  private view: { resolver: JobResolver; policy: SchedulingPolicy };

  constructor(private readonly graph: WorkspaceGraph) {
    this.view = viewOf(graph.current());
  }

  get changes$(): Observable<unknown> {
    return this.graph.changes$;
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
        let group = groups.get(label);
        if (!group) groups.set(label, (group = []));
        group.push(ref);
      } catch (err) {
        out.set(ref, { ok: false, job_label: '', error: errorMessage(err) });
      }
    }
    await Promise.all([...groups].map(([label, group]) => this.resolveGroup(label, group, out)));
    return out;
  }

  /**
   * One job's refs in one config-program run. When the run fails, the batch is split in halves and each is tried
   * again, so one bad ref fails alone for about 2·log2(n) extra runs; a run that timed out is not split, since n
   * more waits would not help.
   */
  private async resolveGroup(label: string, group: string[], out: Map<string, TaskResolution>): Promise<void> {
    try {
      for (const [ref, task] of await this.view.resolver.resolve(group)) {
        const { exec, timeout_seconds } = task.job;
        const job_fingerprint = this.view.policy.jobs.get(task.job_label)?.fingerprint ?? '';
        out.set(ref, { ok: true, job_label: task.job_label, config: task.config, exec, timeout_seconds, job_fingerprint });
      }
    } catch (err) {
      if (group.length === 1 || (err instanceof GraphError && err.timedOut)) {
        for (const ref of group) out.set(ref, { ok: false, job_label: label, error: errorMessage(err) });
        return;
      }
      const half = Math.ceil(group.length / 2);
      await Promise.all([this.resolveGroup(label, group.slice(0, half), out), this.resolveGroup(label, group.slice(half), out)]);
    }
  }
}

function viewOf(resolver: JobResolver) {
  const graph = resolver.graph;
  const jobs = new Map<string, JobPolicy>(
    graph.jobs.map((j): [string, JobPolicy] => {
      const legacy = legacyJobFingerprint(j);
      const policy: JobPolicy = { retries: j.retries, max_concurrency: j.max_concurrency, fingerprint: jobFingerprint(j), ...(j.batch ? { batch: j.batch } : {}) };
      return [j.label, legacy === undefined ? policy : { ...policy, legacy_fingerprint: legacy }];
    }),
  );
  return {
    resolver,
    policy: {
      max_concurrent_job_runs: graph.max_concurrent_job_runs,
      jobs,
      schedules: graph.schedules,
      producerOf: (ref: string) => {
        try {
          return resolver.matcher.tryMatch(ref)?.job.label;
        } catch {
          return undefined; // two jobs make it: no one successor
        }
      },
    },
  };
}
