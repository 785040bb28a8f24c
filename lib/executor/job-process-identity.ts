/**
 * Whether a pid still belongs to a given job run. A pid recorded before a crash may since have been reused by
 * an unrelated process; every job run carries PLATFORM_JOB_RUN_ID in its environment, so the environment tells.
 */
import { readFileSync } from 'node:fs';

export function isProcessOfJobRun(pid: number, job_run_id: string): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    const environ = readFileSync(`/proc/${pid}/environ`, 'latin1');
    return environ.split('\0').includes(`PLATFORM_JOB_RUN_ID=${job_run_id}`);
  } catch {
    // Gone, or not ours to read: either way not a process we may kill.
    return false;
  }
}
