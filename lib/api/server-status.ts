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
import type { ExecutorConfigStatus } from './executor-config.js';
import type { StoreStart } from '../state/store-start.js';
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
  /**
   * The executor in use against the one configured now (an edit of platform.json's "executor" is not applied live; a
   * daemon that found runs in flight on another executor keeps that one until they end). null for a server on a
   * platform given its executor (an embedder's); absent from an older daemon.
   */
  executor_config?: ExecutorConfigStatus | null;
  /** Where this server's state came from when it started (a start that could not use its snapshot paid for a replay). */
  start: StateStart;
  /**
   * Why platform.json as it is on disk was refused (it does not parse, a field is wrong, it was removed), with where;
   * null when the file is the graph in use. While it is refused the daemon goes on with the last valid graph: a
   * schedule or job added by the refused edit does not exist for it.
   */
  graph_problem: string | null;
}

/**
 * How the state was read when the server (or an embedding `Platform`) opened: from the snapshot (the usual after a
 * clean stop, or the snapshot written before a crash), from the compaction base (a compacted log whose snapshot could
 * not be used), or from the log alone (a fresh workspace, a snapshot of another version, a damaged or missing one).
 */
export type StateStart = StoreStart;
