/**
 * Runs a server that is gone left `running` cannot be supervised (no exit code will reach us): their
 * processes are killed and the runs reported canceled ("lost"), so active wants rebuild them without spending
 * the job's retries on the server's fault. Runs left `queued` may have been spawned without their start being
 * recorded: their processes are killed too, and the runs are started again as usual.
 */
import type { JobOutcome } from './job-launch.js';
import { findJobRunProcesses, killProcesses } from './job-process-identity.js';

export const LOST_RUN_REASON = 'lost: the server stopped while it ran';

/** Kills what is left of the given runs' processes; returns the outcomes to record for the running ones. */
export function recoverLostRuns(workspaceRoot: string, running: readonly string[], queued: readonly string[]): JobOutcome[] {
  for (const pids of findJobRunProcesses(workspaceRoot, new Set([...running, ...queued])).values()) killProcesses(pids);
  return running.map((job_run_id) => ({ job_run_id, status: 'canceled', reason: LOST_RUN_REASON }));
}
