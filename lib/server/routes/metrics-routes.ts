import { Router } from 'express';
import { JOB_RUN_STATUSES, PARTITION_STATUSES, WANT_STATUSES } from '../../state/build-state.js';
import type { ServerContext } from '../server-context.js';

/** Prometheus text exposition. Every figure comes from an index size: O(statuses), whatever the history. */
export function metricsRoutes({ platform }: ServerContext): Router {
  const router = Router();
  router.get('/metrics', (_req, res) => {
    const s = platform.state();
    const lines: string[] = [];
    const metric = (name: string, type: 'gauge' | 'counter', help: string, samples: Array<[string, number]>) => {
      lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
      for (const [labels, value] of samples) lines.push(`${name}${labels} ${value}`);
    };
    metric('platform_wants_total', 'counter', 'Total number of wants.', [['', s.wants.size]]);
    metric('platform_job_runs_total', 'counter', 'Total number of job runs.', [['', s.job_runs.size]]);
    metric('platform_wants_sla_missed_total', 'counter', 'Wants not successful by their sla deadline.', [['', s.wants_sla_missed]]);
    metric('platform_builds_total', 'counter', 'Times a partition became live (builds).', [['', s.builds.size]]);
    metric('platform_taints_total', 'counter', 'Taints created.', [['', s.taints.size]]);
    metric('platform_wants', 'gauge', 'Wants by status.', WANT_STATUSES.map((st) => [`{status="${st}"}`, s.wants_by_status[st].size]));
    metric('platform_job_runs', 'gauge', 'Job runs by status.', JOB_RUN_STATUSES.map((st) => [`{status="${st}"}`, s.job_runs_by_status[st].size]));
    metric('platform_partitions', 'gauge', 'Partitions by status.', PARTITION_STATUSES.map((st) => [`{status="${st}"}`, s.partitions_by_status[st].size]));
    metric('platform_events_total', 'counter', 'Events in the build event log.', [['', platform.log.latestId()]]);
    metric('platform_command_queue_depth', 'gauge', 'Write commands waiting for the orchestrator.', [['', platform.queue.size]]);
    metric('platform_command_queue_capacity', 'gauge', 'Capacity of the command queue.', [['', platform.queue.capacity]]);
    res.type('text/plain; version=0.0.4; charset=utf-8').send(`${lines.join('\n')}\n`);
  });
  return router;
}
