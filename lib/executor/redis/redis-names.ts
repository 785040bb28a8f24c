/**
 * What the daemon and its workers agree on in Redis besides BullMQ's own keys: the queue's default name, the
 * stream a run's output travels in, the channel cancels travel on, and the id a run has in the queue (workspaces
 * may share a queue, and each has its own r-1).
 */
import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';

export const DEFAULT_QUEUE = 'platform-runs';

/** Entries kept per run's output stream (XADD MAXLEN ~): a chunk each, so a run's last ~10,000 chunks. */
export const LOG_STREAM_MAXLEN = 10_000;
/** How long a finished run's output stream stays in Redis for a daemon that was away. */
export const LOG_STREAM_TTL_SECONDS = 7 * 24 * 3600;

export const logStreamKey = (queue: string, jobId: string): string => `platform:logs:${queue}:${jobId}`;
export const cancelChannel = (queue: string): string => `platform:cancel:${queue}`;

/** BullMQ job ids may not contain ':'; the workspace's hash keeps equal run ids of two workspaces apart. */
export function queueJobId(workspaceRoot: string, jobRunId: string): string {
  return `${createHash('sha256').update(workspaceRoot).digest('hex').slice(0, 12)}-${jobRunId}`;
}

/** A connection as BullMQ needs it (no retry limit per request: its blocking commands wait as long as they must). */
export function connectRedis(url: string): Redis {
  return new Redis(url, { maxRetriesPerRequest: null, enableReadyCheck: true });
}

/** A cancel as published on the channel. */
export interface CancelMessage {
  jobId: string;
  reason: string;
}

/** What a worker reports with `job.updateProgress` once the job's process runs. */
export interface PlacementReport {
  worker: string;
  pid: number;
}
