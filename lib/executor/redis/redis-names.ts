/**
 * What the daemon and its workers agree on in Redis besides BullMQ's own keys: the queue's default name, the
 * stream a run's output travels in, the channel cancels travel on, and the id a run has in the queue (workspaces
 * may share a queue, and each has its own r-1).
 */
import { createHash } from 'node:crypto';
import { Redis, type RedisOptions } from 'ioredis';

export const DEFAULT_QUEUE = 'platform-runs';

/** Entries kept per run's output stream (XADD MAXLEN ~): a chunk each, so a run's last ~10,000 chunks. */
export const LOG_STREAM_MAXLEN = 10_000;
/** A stream entry's bytes at most: with the cap, a run's output keeps at most ~625 MiB of Redis. */
export const LOG_CHUNK_BYTES = 64 * 1024;
/** How long a finished run's output stream stays in Redis for a daemon that was away. */
export const LOG_STREAM_TTL_SECONDS = 7 * 24 * 3600;

export const logStreamKey = (queue: string, jobId: string): string => `platform:logs:${queue}:${jobId}`;
export const cancelChannel = (queue: string): string => `platform:cancel:${queue}`;
/**
 * A cancel kept, besides published: a worker cut off from Redis when it was published (pub/sub keeps nothing) reads
 * it when it is back, and a worker that takes the run just as it is canceled reads it as it starts the run.
 */
export const cancelMarkKey = (queue: string, jobId: string): string => `platform:cancel:${queue}:${jobId}`;
/** How long a cancel mark is kept: as long as BullMQ keeps an ended job, past any wait in the queue. */
export const CANCEL_MARK_TTL_SECONDS = 7 * 24 * 3600;

/** BullMQ job ids may not contain ':'; the workspace's hash keeps equal run ids of two workspaces apart. */
export function queueJobId(workspaceRoot: string, jobRunId: string): string {
  return `${createHash('sha256').update(workspaceRoot).digest('hex').slice(0, 12)}-${jobRunId}`;
}

/** The job run id a queue job id names (`queueJobId`'s inverse). */
export function runIdOfQueueJob(jobId: string): string {
  return jobId.replace(/^[0-9a-f]{12}-/, '');
}

/** A connection of our own (output streams, cancels): no retry limit per request, as BullMQ's. */
export function connectRedis(url: string): Redis {
  const client = new Redis(url, { maxRetriesPerRequest: null, enableReadyCheck: true });
  // It reconnects by itself; BullMQ's classes on the same server report the outage once, as errors of theirs.
  client.on('error', () => {});
  return client;
}

/**
 * The URL as connection options for BullMQ's classes, so that each opens and closes its own connections (a client
 * shared with BullMQ is left open by its close(), and its errors after that had no listener).
 */
export function bullConnection(url: string): RedisOptions {
  const u = new URL(url);
  const db = Number(u.pathname.replace(/^\//, '') || '0');
  return {
    host: u.hostname,
    port: Number(u.port || 6379),
    ...(u.username ? { username: decodeURIComponent(u.username) } : {}),
    ...(u.password ? { password: decodeURIComponent(u.password) } : {}),
    ...(Number.isInteger(db) ? { db } : {}),
    ...(u.protocol === 'rediss:' ? { tls: {} } : {}),
    maxRetriesPerRequest: null,
  };
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
