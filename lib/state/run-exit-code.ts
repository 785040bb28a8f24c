/**
 * A failed run's exit code as users read it. The log's `job_run_failed` holds an int32, which has no null, so the
 * executors write -1 where the job gave none: it was killed by a signal (`signal` names it) or never started (`reason`
 * says why). Shown, -1 read as an exit code the job never had; it is null instead. Events written by any version
 * fold the same way, and a record from a compaction base written before this fold (which kept -1) reads the same
 * through it too.
 */
export function exitCodeOf(recorded: number | null): number | null {
  return recorded === null || recorded < 0 ? null : recorded;
}
