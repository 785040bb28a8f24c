/**
 * What a step is given: the state, the commands and job-run news since the last step, the clock reading, the
 * resolved configs, and the graph's scheduling policy. Plain data, read by every part of the plan.
 */
import type { JobConfig } from '../events/build-event.js';
import type { JobOutcome } from '../executor/job-launch.js';
import type { BuildState } from '../state/build-state.js';
import type { ScheduleDefinition } from '../graph/schedule-definition.js';
import type { BatchPolicy } from '../graph/graph-definition.js';
import type { Candidates, Waiters } from './candidates.js';
import type { Command } from './command.js';

export type TaskResolution =
  | { ok: true; job_label: string; config: JobConfig; exec: string[]; timeout_seconds: number; job_fingerprint: string }
  | { ok: false; job_label: string; error: string };

export interface JobPolicy {
  retries: number;
  max_concurrency: number;
  /** Build its ready refs by runs of several (batch-runs.ts). */
  batch?: BatchPolicy;
  /** Of the job definition (exec, templates, version): recorded with each build; a change makes them stale. */
  fingerprint: string;
  /** Its fingerprint as hashed before session 31, where that differs: builds of then carry it (job-fingerprint.ts). */
  legacy_fingerprint?: string;
}

export interface SchedulingPolicy {
  max_concurrent_job_runs: number;
  jobs: ReadonlyMap<string, JobPolicy>;
  /** Cron schedules that make wants at their ticks (none when absent). */
  schedules?: readonly ScheduleDefinition[];
  /** The label of the job of the graph that produces a ref, if one does (a renamed job's successor is found so). */
  producerOf?: (ref: string) => string | undefined;
}

export interface StepInput {
  state: BuildState;
  now: number;
  commands: readonly Command[];
  /** `started_at`: when the run began, when before it was heard of (epoch ms; absent or 0: now). */
  started: ReadonlyArray<{ job_run_id: string; pid: number; worker: string; started_at?: number }>;
  /** `started_at`: when the worker took the run, when before it was heard of (epoch ms; absent or 0: now). */
  placed?: ReadonlyArray<{ job_run_id: string; pid: number; worker: string; started_at?: number }>;
  outcomes: readonly JobOutcome[];
  /** Queued runs already handed to the executor whose start is not yet recorded. */
  launched: ReadonlySet<string>;
  /**
   * Runs the executor holds beyond the cap and starts as its runs end (`Executor.holdBeyond`): so many more may be
   * handed over. Only runs without a timeout: a timeout counts from the hand-over's start, which must be at once.
   */
  holdBeyond?: number;
  /** Configs for the refs `refsToResolve` named (and the refs of this step's new wants). */
  tasks: ReadonlyMap<string, TaskResolution>;
  /**
   * Configs resolved by earlier steps and still kept, read without resolving anything: what a look for a dependency
   * cycle follows beyond this step's own refs (dependency-cycle.ts). Absent: only `tasks`.
   */
  knownTasks?: (ref: string) => TaskResolution | undefined;
  policy: SchedulingPolicy;
  /** The last step before shutdown: record what happened, schedule and start nothing. */
  final?: boolean;
  /**
   * The wants to schedule, besides those this step's own events touch; absent: every active want (a full scan,
   * which the loop does on every tick, so a want missed here waits a tick at most).
   */
  candidates?: Candidates;
  /**
   * When this orchestrator started (epoch ms): a schedule's tick before it fell due while no daemon ran, and was
   * missed (what `catchup` counts). Absent: `now`.
   */
  upSince?: number;
  /**
   * Since when each schedule has been served, keyed `name\0cron\0timezone` (an added schedule counts from then, not
   * from the daemon's start). Absent for a schedule: `upSince`.
   */
  schedulesUpSince?: ReadonlyMap<string, number>;
  /** Record job definition edits and fire due schedule ticks (a tick, a deadline): implied by a full scan. */
  housekeeping?: boolean;
  /** Which refs wait for which inputs: a change of an input makes its waiting refs candidates. */
  waiters?: Waiters;
}
