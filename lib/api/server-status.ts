/**
 * `GET /api/status`: who the server is (pid, port, workspace, version, since when) and how much it holds. Clients
 * check a server.json against it before they trust it.
 */
export interface StatusCounts {
  wants: number;
  job_runs: number;
  partitions: number;
  running_job_runs: number;
  queued_commands: number;
}

import type { ExecutorHealth } from './executor-health.js';
export type { ExecutorHealth } from './executor-health.js';

export interface ServerStatus {
  pid: number;
  port: number;
  started_at: string;
  uptime_seconds: number;
  workspace_root: string;
  version: string;
  counts: StatusCounts;
  /** Where job runs go and whether they can run there now (a Redis that does not answer, no worker). */
  executor: ExecutorHealth;
}
