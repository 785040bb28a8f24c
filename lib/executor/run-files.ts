/**
 * The files a supervised run keeps in its log directory, so that what happened to it outlives any daemon:
 * `launch.json` (what to run, written before the supervisor starts), `supervisor.json` (its pid and the job's),
 * `cancel.json` (why it is being canceled, written before the supervisor is signalled) and `status.json` (how the
 * job ended, written once, atomically, after its logs are closed). A daemon reads them to re-attach.
 */
import { closeSync, fsyncSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { JobLaunch, JobOutcome } from './job-launch.js';

export const LAUNCH_FILE = 'launch.json';
export const SUPERVISOR_FILE = 'supervisor.json';
export const CANCEL_FILE = 'cancel.json';
export const STATUS_FILE = 'status.json';

export interface SupervisorInfo {
  supervisor_pid: number;
  job_pid: number;
}

/** Written whole or not at all (a crash mid-write leaves the old file, or none), and on disk before it returns. */
export function writeDurably(path: string, value: unknown): void {
  const tmp = `${path}.tmp`;
  const fd = openSync(tmp, 'w');
  try {
    writeSync(fd, JSON.stringify(value));
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
}

function readJson<T>(path: string): T | undefined {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as T;
  } catch {
    return undefined;
  }
}

export const readLaunch = (dir: string): JobLaunch | undefined => readJson<JobLaunch>(join(dir, LAUNCH_FILE));
export const readSupervisor = (dir: string): SupervisorInfo | undefined => readJson<SupervisorInfo>(join(dir, SUPERVISOR_FILE));
export const readStatus = (dir: string): JobOutcome | undefined => readJson<JobOutcome>(join(dir, STATUS_FILE));
export const readCancelReason = (dir: string): string | undefined => readJson<{ reason: string }>(join(dir, CANCEL_FILE))?.reason;
