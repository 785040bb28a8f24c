/**
 * What the orchestrator knows of an executor: the port its adapters implement (ProcessExecutor: processes of this
 * daemon; SupervisedExecutor: processes supervised outside it, outliving it). Launches go in, one outcome per run comes out.
 */
import type { Observable } from 'rxjs';
import type { JobLaunch, JobOutcome } from './job-launch.js';
import type { ExecutorHealth } from '../api/executor-health.js';
import type { JobRunProcesses } from './job-run-process-scan.js';

export type { ExecutorHealth } from '../api/executor-health.js';

/** What became of a run an earlier daemon left running, when this one looks for it. */
export type Reattached =
  /** Still going: its outcome will come on outcomes$. */
  | 'following'
  /** It ended meanwhile: its real outcome comes on outcomes$. */
  | 'ended'
  /** Nothing runs it and nothing recorded how it ended. */
  | 'lost';

/** A start an earlier daemon made and did not record: the pid to record, and when it began (epoch ms; 0: unknown). */
export interface AdoptedStart {
  pid: number;
  started_at: number;
}

export interface Placement {
  job_run_id: string;
  worker: string;
  pid: number;
  /**
   * Epoch ms it started there, when that was before it is told (a run a worker took while no daemon ran, read back
   * from the queue); absent or 0: as it is told.
   */
  started_at?: number;
}

/** The worker name of runs on this machine. */
export const LOCAL_WORKER = 'local';

/** Whether the log's `worker` of a run names this machine's own (or none yet), not a queue's or a worker's. */
export function ranHere(worker: string): boolean {
  return worker === LOCAL_WORKER || worker === '';
}

export interface Executor {
  /** Hot: exactly one outcome per run started or followed. */
  readonly outcomes$: Observable<JobOutcome>;
  /**
   * True when every run it starts has its log directory (`JobLaunch.log_dir`) from its start: then a finished run
   * without one lost its logs (removed by retention or by hand), and reading them is a 410. Absent (an executor that
   * writes its logs elsewhere, or none, or one written before this was asked): a run's logs are what is in its
   * directory, empty when there is none.
   */
  readonly keepsRunLogs?: boolean;
  /**
   * Hot, for executors that hand runs to a queue (whose `start` names the queue, not the worker): which worker took
   * a run, and the job's pid there.
   */
  readonly placements$?: Observable<Placement>;
  /**
   * Starts the run; `pid` and `worker` are what the log records for it (pid 0 when it could not start: a failed
   * outcome follows). Undefined when the process is started off this thread: its pid comes on `started$`.
   */
  start(launch: JobLaunch): { pid: number; worker: string } | undefined;
  /** Hot, for executors whose start returns undefined: each run's process is up (before its outcome). */
  readonly started$?: Observable<Placement>;
  /** Ends the run (its process group within a second); its outcome is 'canceled'. Unknown id: no-op. */
  cancel(job_run_id: string, reason: string): void;
  /**
   * For executors whose cancels travel (a queue's workers): whether the cancel asked of this run has not reached
   * where it runs, so it runs on. A stop that cancels its runs leaves such a run running in the log for the next
   * daemon to follow, rather than record it canceled and have it built again beside itself. Absent: every cancel
   * arrives.
   */
  cancelUndelivered?(job_run_id: string): boolean;
  /**
   * Looks for a run the log shows running (started by an earlier daemon as `launch`, recorded with `pid` at
   * `startedAt`, epoch ms; 0 when unknown). What is left of a run found lost is the caller's to kill (the
   * orchestrator's restart does, from its one pass over /proc).
   */
  reattach(launch: JobLaunch, pid: number, startedAt?: number): Reattached;
  /**
   * Whether this executor can follow a run the log records as placed on `worker` ('local', a queue's `redis:<queue>`,
   * a worker's name): one it cannot is not given to `reattach` (it would be taken for lost and run again, or a
   * worker's job on this machine taken for a local run). Absent: every run.
   */
  canFollow?(worker: string): boolean;
  /**
   * For executors whose runs outlive the daemon: of the runs the log has queued (`queued`, their launches made by
   * `launchOf` only for those looked at), those an earlier daemon started without recording it (it died between the
   * start and the step that records it), running or ended since. Each one found is followed from here as a
   * re-attached run is (its outcome comes on outcomes$); the map gives its pid and when it started, recorded as its
   * start. A run not in it never started, and starts anew. `processes`: the restart's one pass over /proc, covering
   * `queued` (default: a pass of its own).
   */
  adoptStarted?(queued: ReadonlySet<string>, launchOf: (jobRunId: string) => JobLaunch, processes?: JobRunProcesses): Map<string, AdoptedStart>;
  /**
   * For executors that can hold runs and start the next the moment one of theirs ends (the native launcher: no step's
   * round trip between a run's end and the next start): at most `cap` runs go at once, and this returns how many
   * runs beyond `cap` the planner may hand over. Asked before each step; absent: none.
   */
  holdBeyond?(cap: number): number;
  /**
   * A run handed over beyond the cap should not start next after all (a more urgent one came): if still held, it
   * comes back unstarted on `recalled$` (no outcome); if it started meanwhile, nothing changes.
   */
  recall?(job_run_id: string): void;
  readonly recalled$?: Observable<string>;
  /** Runs handed over and held that have not started yet (`holdBeyond`); absent: none are held. */
  waitingToStart?(): number;
  /** Runs started or followed whose outcome has not come yet. */
  runningCount(): number;
  /**
   * As last seen; executors on this machine need not say (they are healthy while the daemon is). `launcher` may be
   * left out (an executor written before it was asked): it is then null, runs not started by this daemon's launcher.
   */
  health?(): Omit<ExecutorHealth, 'launcher'> & { launcher?: ExecutorHealth['launcher'] };
  /**
   * Stops. With `cancelRuns` every run is canceled and their outcomes awaited; without, runs that can outlive the
   * daemon are left running for the next one to re-attach (the others are canceled).
   */
  shutdown(reason: string, options?: { cancelRuns?: boolean }): Promise<void>;
}
