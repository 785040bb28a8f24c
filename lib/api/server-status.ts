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

export interface ServerStatus {
  pid: number;
  port: number;
  started_at: string;
  uptime_seconds: number;
  workspace_root: string;
  version: string;
  counts: StatusCounts;
}
