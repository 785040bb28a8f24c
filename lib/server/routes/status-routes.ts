/**
 * `GET /api/status`: who this server is (pid, port, workspace, version, since when) and how much it holds. Clients
 * use it to check that a server.json really describes a live daemon of their workspace and version; `platform
 * status` shows it. Every figure is an index size, so it costs nothing whatever the history; `start` (where the state
 * came from at start) was kept by the store when it opened; `graph_problem` is why platform.json is refused, if it is.
 */
import { Router } from 'express';
import type { ServerStatus } from '../../api/server-status.js';
import { VERSION } from '../../version.js';
import type { ServerContext } from '../server-context.js';

/** `startedAt` defaults to the moment the router is built, i.e. when the server's app is created. */
export function statusRoutes({ platform }: ServerContext, startedAt: Date = new Date()): Router {
  const router = Router();
  router.get('/api/status', async (req, res) => {
    // Looked at now (a stat; a parse when the file changed): an edit made since the last step or write counts.
    const graphProblem = await platform.refreshGraphAfterTurn();
    const s = platform.state();
    const body: ServerStatus = {
      pid: process.pid,
      port: req.socket.localPort ?? 0,
      started_at: startedAt.toISOString(),
      uptime_seconds: Math.max(0, Math.floor((Date.now() - startedAt.getTime()) / 1000)),
      workspace_root: platform.workspaceRoot,
      version: VERSION,
      counts: {
        wants: s.wants.size,
        job_runs: s.job_runs.size,
        partitions: s.partitions.size,
        running_job_runs: s.job_runs_by_status.running.size,
        queued_commands: platform.queue.size,
      },
      executor: platform.executorHealth(),
      executor_config: platform.executorConfig?.() ?? null,
      start: { ...platform.store.start },
      graph_problem: graphProblem ? graphProblem.message : null,
    };
    res.json(body);
  });
  return router;
}
