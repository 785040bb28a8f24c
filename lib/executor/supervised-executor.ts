/**
 * Local job runs that outlive the daemon: each run is started under a supervisor process of its own
 * (supervisor-main.ts) that holds the job's process group, keeps its logs and writes how it ended to the run's
 * directory (run-files.ts). This daemon follows its supervisors (their exit, or, for runs an earlier daemon
 * started, a poll of their status file and liveness) and turns each status into one outcome. Stopping leaves the
 * supervisors running unless asked to cancel the runs.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Observable, Subject, type Subscription, interval } from 'rxjs';
import type { JobLaunch, JobOutcome } from './job-launch.js';
import { LOCAL_WORKER, type Executor, type Reattached } from './executor-port.js';
import { belongsToRun, findJobRunProcesses, killProcesses } from './job-process-identity.js';
import { LOST_RUN_REASON } from './lost-runs.js';
import { CANCEL_FILE, LAUNCH_FILE, readStatus, readSupervisor, writeDurably } from './run-files.js';
import { signalGroup } from '../system/process-group.js';

const SUPERVISOR_MAIN = join(dirname(fileURLToPath(import.meta.url)), 'supervisor-main.js');

export interface SupervisedExecutorOptions {
  workspaceRoot: string;
  /** How often runs re-attached from an earlier daemon are looked at. Default 250 ms. */
  pollMs?: number;
  /** Upper bound on how long a shutdown that cancels waits for the outcomes. Default 5000 ms. */
  shutdownTimeoutMs?: number;
}

interface Followed {
  readonly dir: string;
  readonly pid: number;
  /** Ours (started by this daemon): its exit tells. Absent for a re-attached run: the poll tells. */
  child: ChildProcess | undefined;
  cancelReason: string | undefined;
}

export class SupervisedExecutor implements Executor {
  private readonly subject = new Subject<JobOutcome>();
  readonly outcomes$: Observable<JobOutcome> = this.subject.asObservable();
  private readonly runs = new Map<string, Followed>();
  private poll: Subscription | undefined;
  private stopped = false;

  constructor(private readonly opts: SupervisedExecutorOptions) {}

  start(launch: JobLaunch): { pid: number; worker: string } {
    const id = launch.job_run_id;
    if (this.runs.has(id)) throw new Error(`job run ${id} is already running`);
    const dir = launch.log_dir;
    try {
      mkdirSync(dir, { recursive: true });
      writeDurably(join(dir, LAUNCH_FILE), launch);
    } catch (err) {
      this.later({ job_run_id: id, status: 'failed', exit_code: -1, signal: '', reason: `could not write the run's directory '${dir}': ${String(err)}` });
      return { pid: 0, worker: LOCAL_WORKER };
    }
    // The supervisor carries the run's identity in its environment, as the job does: a later daemon finds it by it.
    const child = spawn(process.execPath, [SUPERVISOR_MAIN, dir], {
      cwd: launch.cwd,
      detached: true,
      stdio: 'ignore',
      env: { ...process.env, PLATFORM_JOB_RUN_ID: id, PLATFORM_WORKSPACE: this.opts.workspaceRoot },
    });
    child.unref();
    const run: Followed = { dir, pid: child.pid ?? 0, child, cancelReason: undefined };
    this.runs.set(id, run);
    child.once('error', (err) => this.end(id, { job_run_id: id, status: 'failed', exit_code: -1, signal: '', reason: `could not start its supervisor: ${err.message}` }));
    child.once('exit', () => this.settle(id));
    return { pid: run.pid, worker: LOCAL_WORKER };
  }

  cancel(job_run_id: string, reason: string): void {
    const run = this.runs.get(job_run_id);
    if (!run) return;
    run.cancelReason = reason;
    try {
      writeDurably(join(run.dir, CANCEL_FILE), { reason });
    } catch {
      // Without the file the supervisor still cancels, under a generic reason; the outcome says ours.
    }
    try {
      process.kill(run.pid, 'SIGTERM');
    } catch {
      // Its supervisor is gone: end what is left of the job ourselves.
      const job = readSupervisor(run.dir)?.job_pid ?? 0;
      if (job > 0 && belongsToRun(job, this.opts.workspaceRoot, job_run_id)) signalGroup(job, 'SIGKILL');
      this.end(job_run_id, { job_run_id, status: 'canceled', reason });
    }
  }

  reattach(job_run_id: string, logDir: string, pid: number): Reattached {
    if (readStatus(logDir)) {
      this.runs.set(job_run_id, { dir: logDir, pid, child: undefined, cancelReason: undefined });
      setImmediate(() => this.settle(job_run_id));
      return 'ended';
    }
    const supervisor = readSupervisor(logDir)?.supervisor_pid ?? pid;
    if (belongsToRun(supervisor, this.opts.workspaceRoot, job_run_id)) {
      this.runs.set(job_run_id, { dir: logDir, pid: supervisor, child: undefined, cancelReason: undefined });
      this.poll ??= interval(this.opts.pollMs ?? 250).subscribe(() => this.check());
      return 'following';
    }
    // No supervisor and no status: whatever is left of its processes is killed; the run is lost.
    for (const pids of findJobRunProcesses(this.opts.workspaceRoot, new Set([job_run_id])).values()) killProcesses(pids);
    return 'lost';
  }

  runningCount(): number {
    return this.runs.size;
  }

  async shutdown(reason: string, options: { cancelRuns?: boolean } = {}): Promise<void> {
    if (options.cancelRuns) {
      const ids = [...this.runs.keys()];
      const done = new Promise<void>((resolve) => {
        if (this.runs.size === 0) return resolve();
        const sub = this.outcomes$.subscribe(() => {
          if (this.runs.size === 0) {
            sub.unsubscribe();
            resolve();
          }
        });
      });
      for (const id of ids) this.cancel(id, reason);
      this.poll ??= interval(this.opts.pollMs ?? 250).subscribe(() => this.check());
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([done, new Promise<void>((r) => (timer = setTimeout(r, this.opts.shutdownTimeoutMs ?? 5000)))]);
      clearTimeout(timer);
    }
    // The rest go on without us: no more outcomes from this daemon.
    this.stopped = true;
    this.poll?.unsubscribe();
    for (const run of this.runs.values()) run.child?.removeAllListeners('exit');
    this.runs.clear();
  }

  /** Re-attached runs (and ours whose exit was missed): a status ends them; a supervisor gone without one loses them. */
  private check(): void {
    for (const [id, run] of this.runs) {
      if (readStatus(run.dir)) this.settle(id);
      else if (!run.child && !belongsToRun(run.pid, this.opts.workspaceRoot, id)) this.settle(id);
    }
  }

  /** Its supervisor ended (or is gone): the status it wrote is the outcome; none means the run is lost. */
  private settle(id: string): void {
    const run = this.runs.get(id);
    if (!run) return;
    const status = readStatus(run.dir);
    if (status) return this.end(id, { ...status, job_run_id: id });
    if (run.cancelReason !== undefined) return this.end(id, { job_run_id: id, status: 'canceled', reason: run.cancelReason });
    this.end(id, { job_run_id: id, status: 'canceled', reason: `${LOST_RUN_REASON} (its supervisor ended without recording how the job ended; see its stderr.log)` });
  }

  private end(id: string, outcome: JobOutcome): void {
    if (!this.runs.has(id) || this.stopped) return;
    this.runs.delete(id);
    if (this.runs.size === 0 || [...this.runs.values()].every((r) => r.child)) {
      this.poll?.unsubscribe();
      this.poll = undefined;
    }
    this.subject.next(outcome);
  }

  private later(outcome: JobOutcome): void {
    setImmediate(() => this.subject.next(outcome));
  }
}
