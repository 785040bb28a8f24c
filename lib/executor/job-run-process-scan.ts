/**
 * The processes of the job runs a restart looks for, found by one pass over /proc made when first asked for. A
 * restart asks twice: for the queued runs an earlier daemon may have started without recording it
 * (Executor.adoptStarted), then for what is left of the runs that start again or were lost, to kill it. A pass reads
 * the environment of every process on the machine whatever it looks for, so one pass over all of those runs answers
 * both; and none is made when nothing asks (a restart with no run queued, and every running one found).
 */
import { findJobRunProcesses } from './job-process-identity.js';

/** The live processes of each run looked for (those without any are absent), as the one pass found them. */
export type JobRunProcesses = () => ReadonlyMap<string, readonly number[]>;

export function scanOnce(workspace: string, ids: ReadonlySet<string>): JobRunProcesses {
  let found: ReadonlyMap<string, readonly number[]> | undefined;
  return () => (found ??= findJobRunProcesses(workspace, ids));
}
