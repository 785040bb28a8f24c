/**
 * `GET /api/job_runs/:id/logs/:stream`: the log as text, or with `?follow=true` as SSE: `log` messages (one line
 * each), then one `end` message with a `LogEnd` as data.
 */
import type { JobRunStatus } from './statuses.js';

export type LogStream = 'stdout' | 'stderr';

/** The most lines `?tail=` (`platform logs -n`) reads. */
export const MAX_TAIL_LINES = 10_000;

/** The end of a followed log: how the job run ended. */
export interface LogEnd {
  status: JobRunStatus | 'unknown';
  /** null when the job gave none: killed by a signal (then `signal`), or never started. */
  exit_code: number | null;
  /** The signal that killed it, e.g. 'SIGKILL'; null when it exited, or had not started. */
  signal: string | null;
}
