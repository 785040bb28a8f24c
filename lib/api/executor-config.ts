/**
 * `/api/status`'s `executor_config`: the executor this daemon hands runs to against the one configured now (what a
 * daemon started now would use), and why they differ. A daemon takes its executor once, at its start: an edit of
 * platform.json's `"executor"` is not applied live, and a daemon that found runs in flight on another executor keeps
 * that one until a restart after they ended (docs/scale-out.md).
 */
export interface ExecutorConfigStatus {
  /** Where this daemon hands runs: 'local', 'in-process', or the Redis URL (password hidden) and queue. */
  in_use: string;
  /** What is configured now: the --executor option, $PLATFORM_EXECUTOR, platform.json's "executor", or the default. */
  configured: string;
  configured_by: 'option' | 'environment' | 'platform.json' | 'default';
  /** in_use is not configured. */
  differs: boolean;
  /**
   * The daemon kept in_use at its start because job runs were in flight on it (placed by an earlier daemon): how
   * many of those runs have not ended yet. null when it did not keep it for that.
   */
  held_runs: number | null;
  /** What is going on and what to do, in words; null when in_use is what is configured. */
  note: string | null;
}
