/** How a job run's exit becomes its outcome: one pure rule for every adapter of the executor port. */
import { MISSING_DEPS_MARKER, type JobOutcome } from './job-launch.js';

/** Why the executor itself ended the run, if it did; it decides the outcome over the exit status. */
export type KillCause = { kind: 'cancel'; reason: string } | { kind: 'timeout' };

export interface RunExit {
  /** The exit code; null when the process was killed by a signal. */
  code: number | null;
  /** The signal that ended it ('' or null for none). */
  signal: string | null;
  kill: KillCause | undefined;
  /** Refs the job reported missing (PLATFORM_MISSING_DEPS) before it exited. */
  missing: readonly string[];
  /** What was wrong with a marker line that could not be read (MissingReport). */
  missingProblem?: string | undefined;
  timeout_seconds: number;
}

export function outcomeOfExit(job_run_id: string, exit: RunExit): JobOutcome {
  const { code, kill } = exit;
  const signal = exit.signal ?? '';
  if (kill?.kind === 'cancel') return { job_run_id, status: 'canceled', reason: kill.reason };
  if (kill?.kind === 'timeout') {
    return { job_run_id, status: 'failed', exit_code: code ?? -1, signal, reason: `timed out after ${exit.timeout_seconds} s` };
  }
  if (code === 0) return { job_run_id, status: 'succeeded' };
  if (exit.missing.length > 0) return { job_run_id, status: 'dep_missed', missing: [...exit.missing] };
  // A marker that could not be read is why nothing was built for it: said, with the form that is read.
  const marker = exit.missingProblem ? `; ${exit.missingProblem}: print ${MISSING_DEPS_MARKER} {"missing": ["<ref>", ...]} on a line of its own` : '';
  if (code !== null) return { job_run_id, status: 'failed', exit_code: code, signal: '', reason: `exited with code ${code}${marker}` };
  return { job_run_id, status: 'failed', exit_code: -1, signal, reason: signal ? `killed by ${signal}` : 'exited abnormally' };
}
