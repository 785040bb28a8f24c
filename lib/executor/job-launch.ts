/**
 * What the orchestrator hands the executor to run one job run, and what it gets back. Plain data: the
 * orchestrator builds a JobLaunch from the JobConfig (DESIGN.md "Job graph", Exec) and turns a JobOutcome
 * into the matching `job_run_*` event.
 */
import { join } from 'node:path';

export interface JobLaunch {
  job_run_id: string;
  /** `exec` + the JobConfig's `args`; argv[0] is the program (looked up on PATH when it has no slash). */
  argv: string[];
  /** The job's env; merged over process.env. */
  env: Record<string, string>;
  /** The refs this run builds; passed to the job as PLATFORM_OUTPUTS (a JSON array). */
  outputs: string[];
  /** The workspace root. */
  cwd: string;
  /** The JobConfig as JSON; written to the job's stdin, which is then closed. */
  stdin: string;
  /** `<workspace>/.platform/logs/<job_run_id>`; gets stdout.log and stderr.log. */
  log_dir: string;
  /** 0 = no timeout. */
  timeout_seconds: number;
  /**
   * When the run was queued (epoch ms), where known: a run's id repeats in a workspace made again at the same path
   * (`r-1` anew), so a queue's job added before this moment is not this run's (redis-executor.ts).
   */
  queued_at?: number;
}

/**
 * `ended_at` (epoch ms) is given when the job ended before the daemon heard of it: a run that ended while no daemon
 * ran, whose end is read from its status file. Otherwise the run ends when its outcome is recorded.
 */
export type JobOutcome =
  | { job_run_id: string; status: 'succeeded'; ended_at?: number }
  | {
      job_run_id: string;
      status: 'failed';
      ended_at?: number;
      /** -1 if signalled or never started. */
      exit_code: number;
      /** e.g. 'SIGKILL'; '' when the process exited with a code. */
      signal: string;
      reason: string;
    }
  | { job_run_id: string; status: 'dep_missed'; missing: string[]; ended_at?: number }
  | { job_run_id: string; status: 'canceled'; reason: string };

export type JobOutcomeStatus = JobOutcome['status'];

/** The line prefix a job prints (stdout or stderr) before exiting non-zero when an input is missing. */
export const MISSING_DEPS_MARKER = 'PLATFORM_MISSING_DEPS';

/** Where a run's logs are: `.platform/logs/<run>/` (its log_dir). */
export function runLogDir(workspaceRoot: string, jobRunId: string): string {
  return join(workspaceRoot, '.platform', 'logs', jobRunId);
}

/** Log file names inside a run's log_dir. */
export const STDOUT_LOG = 'stdout.log';
export const STDERR_LOG = 'stderr.log';
