/**
 * Local job runs that outlive the daemon. Each run is started under a supervisor: `/bin/sh` in a session (and
 * process group) of its own, running the job as its child with the run's log files as its stdout and stderr, then
 * writing the job's exit status next to them (run-files.ts) and exiting with it. Nothing of the run passes through
 * this process, so a daemon that stops, crashes or is upgraded leaves it running; the next one re-attaches by the
 * pid in the log (checked against the run's identity in /proc) and the status file.
 *
 * A shell, not a node process, because a supervisor is paid for on every run: it costs a fork and an exec of
 * `sh` (about a millisecond) where a node supervisor cost ~0.3 s (docs/decisions.md). The price is the shell's
 * exit status: a job killed by a signal and one that exits with 128+n look the same, and are reported as killed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, closeSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { constants as osConstants } from 'node:os';
import { join } from 'node:path';
import { Observable, Subject, type Subscription, interval } from 'rxjs';
import { STDERR_LOG, STDOUT_LOG, type JobLaunch, type JobOutcome } from './job-launch.js';
import { LOCAL_WORKER, type Executor, type Reattached } from './executor-port.js';
import { outcomeOfExit, type KillCause } from './exit-outcome.js';
import { belongsToRun, findJobRunProcesses, killProcesses } from './job-process-identity.js';
import { LOST_RUN_REASON } from './lost-runs.js';
import { cancelAllAndWait } from './cancel-all.js';
import { missingDepsInLogs } from './missing-deps-scanner.js';
import { findProgram } from './program-path.js';
import { CANCEL_FILE, STATUS_FILE, readCancelReason, readExitStatus, writeDurably } from './run-files.js';
import { spawnFailureReason } from './spawn-failure.js';
import { signalGroup } from '../system/process-group.js';
import { MAX_TIMER_MS } from '../system/timer-ceiling.js';

/**
 * `sh -c SCRIPT <status file> <deadline ms> <program> <args...>`. TERM is caught (not ignored, which the job would
 * inherit) so that a cancel reaching the whole group lets the shell outlive its job and record it; the deadline is
 * there for the next daemon to read from /proc and keep enforcing the run's timeout.
 */
const SUPERVISOR_SCRIPT = 'trap : TERM; s=$0; shift; "$@"; c=$?; printf \'{"exit_code":%d}\\n\' "$c" >"$s"; exit "$c"';
const STDIN_FILE = 'stdin.json';

export interface SupervisedExecutorOptions {
  workspaceRoot: string;
  /** How often runs re-attached from an earlier daemon are looked at. Default 250 ms. */
  pollMs?: number;
  /** Wait between SIGTERM and SIGKILL of a canceled / timed-out run's process group. Default 500 ms. */
  killGraceMs?: number;
  /** Upper bound on how long a shutdown that cancels waits for the outcomes. Default 5000 ms. */
  shutdownTimeoutMs?: number;
}

interface Run {
  readonly id: string;
  readonly dir: string;
  /** The supervisor's pid: the leader of the run's process group. */
  readonly pid: number;
  /** Ours (started by this daemon): its exit tells. Absent for a re-attached run: the poll tells. */
  readonly child: ChildProcess | undefined;
  readonly timeoutSeconds: number;
  kill: KillCause | undefined;
  timer: NodeJS.Timeout | undefined;
  /** The SIGKILL follow-up of a cancel or timeout, once sent. */
  killed: Promise<void> | undefined;
  settling: boolean;
}

export class SupervisedExecutor implements Executor {
  private readonly subject = new Subject<JobOutcome>();
  readonly outcomes$: Observable<JobOutcome> = this.subject.asObservable();
  private readonly runs = new Map<string, Run>();
  private poll: Subscription | undefined;
  private stopped = false;

  constructor(private readonly opts: SupervisedExecutorOptions) {}

  start(launch: JobLaunch): { pid: number; worker: string } {
    const id = launch.job_run_id;
    if (this.runs.has(id)) throw new Error(`job run ${id} is already running`);
    const dir = launch.log_dir;
    const fail = (reason: string): { pid: number; worker: string } => {
      try {
        appendFileSync(join(dir, STDERR_LOG), `platform: ${reason}\n`);
      } catch {
        // The reason is in the outcome either way.
      }
      this.later({ job_run_id: id, status: 'failed', exit_code: -1, signal: '', reason });
      return { pid: 0, worker: LOCAL_WORKER };
    };
    if (this.stopped) return fail('the executor is shut down');
    const program = launch.argv[0];
    if (program === undefined || program === '') return fail('could not start the job: exec is empty; check exec in platform.json');
    const env: NodeJS.ProcessEnv = { ...process.env, ...launch.env, PLATFORM_JOB_RUN_ID: id, PLATFORM_OUTPUTS: JSON.stringify(launch.outputs) };
    const found = findProgram(program, launch.cwd, env.PATH);
    const fds: number[] = [];
    try {
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, STDIN_FILE), launch.stdin);
      fds.push(openSync(join(dir, STDIN_FILE), 'r'), openSync(join(dir, STDOUT_LOG), 'a'), openSync(join(dir, STDERR_LOG), 'a'));
    } catch (err) {
      fds.forEach((fd) => closeSync(fd));
      return fail(`could not write the run's log directory '${dir}': ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
    }
    if ('error' in found) {
      fds.forEach((fd) => closeSync(fd));
      return fail(spawnFailureReason(program, launch.cwd, found.error));
    }
    const seconds = launch.timeout_seconds;
    const deadline = Number.isFinite(seconds) && seconds > 0 ? Date.now() + seconds * 1000 : 0;
    let child: ChildProcess;
    try {
      child = spawn('/bin/sh', ['-c', SUPERVISOR_SCRIPT, join(dir, STATUS_FILE), String(deadline), found.path, ...launch.argv.slice(1)], {
        cwd: launch.cwd,
        env,
        detached: true,
        stdio: [fds[0]!, fds[1]!, fds[2]!],
      });
    } catch (err) {
      return fail(spawnFailureReason(program, launch.cwd, err));
    } finally {
      fds.forEach((fd) => closeSync(fd));
    }
    child.unref();
    if (child.pid === undefined) {
      child.once('error', (err) => this.later({ job_run_id: id, status: 'failed', exit_code: -1, signal: '', reason: spawnFailureReason(program, launch.cwd, err) }));
      return { pid: 0, worker: LOCAL_WORKER };
    }
    child.on('error', () => {}); // after a spawn, only from kill(): the exit still comes
    const run = this.follow(id, dir, child.pid, child, seconds, deadline);
    child.once('exit', (code, signal) => void this.settle(run, fromShell(code, signal)));
    return { pid: run.pid, worker: LOCAL_WORKER };
  }

  cancel(job_run_id: string, reason: string): void {
    const run = this.runs.get(job_run_id);
    if (!run || run.kill) return;
    run.kill = { kind: 'cancel', reason };
    try {
      writeDurably(join(run.dir, CANCEL_FILE), { reason });
    } catch {
      // Only a next daemon misses it: it would record the run lost instead of canceled.
    }
    this.note(run, `canceled: ${reason}; killing the job's process group`);
    this.killGroup(run);
  }

  reattach(launch: JobLaunch, pid: number): Reattached {
    const { job_run_id, log_dir: logDir, timeout_seconds } = launch;
    if (readExitStatus(logDir)) {
      void this.settle(this.follow(job_run_id, logDir, pid, undefined, timeout_seconds, 0), undefined);
      return 'ended';
    }
    if (belongsToRun(pid, this.opts.workspaceRoot, job_run_id)) {
      this.follow(job_run_id, logDir, pid, undefined, timeout_seconds, deadlineOf(pid));
      this.poll ??= interval(this.opts.pollMs ?? 250).subscribe(() => this.check());
      return 'following';
    }
    const reason = readCancelReason(logDir);
    if (reason !== undefined) {
      this.later({ job_run_id, status: 'canceled', reason });
      return 'ended';
    }
    // No supervisor and no status: whatever is left of its processes is killed; the run is lost.
    for (const pids of findJobRunProcesses(this.opts.workspaceRoot, new Set([job_run_id])).values()) killProcesses(pids);
    return 'lost';
  }

  runningCount(): number {
    return this.runs.size;
  }

  async shutdown(reason: string, options: { cancelRuns?: boolean } = {}): Promise<void> {
    if (options.cancelRuns && this.runs.size > 0) {
      this.poll ??= interval(this.opts.pollMs ?? 250).subscribe(() => this.check());
      await cancelAllAndWait(this, [...this.runs.keys()], reason, this.opts.shutdownTimeoutMs ?? 5000);
    }
    // The rest go on without us (their timeouts are kept by the next daemon): no more outcomes from this one.
    this.stopped = true;
    this.poll?.unsubscribe();
    for (const run of this.runs.values()) {
      clearTimeout(run.timer);
      run.child?.removeAllListeners('exit');
    }
    this.runs.clear();
  }

  private follow(id: string, dir: string, pid: number, child: ChildProcess | undefined, timeoutSeconds: number, deadline: number): Run {
    const run: Run = { id, dir, pid, child, timeoutSeconds, kill: undefined, timer: undefined, killed: undefined, settling: false };
    this.runs.set(id, run);
    if (deadline > 0) {
      run.timer = setTimeout(() => {
        if (run.kill || run.settling) return;
        run.kill = { kind: 'timeout' };
        this.note(run, `timed out after ${timeoutSeconds} s; killing the job's process group`);
        this.killGroup(run);
      }, Math.min(Math.max(0, deadline - Date.now()), MAX_TIMER_MS));
    }
    return run;
  }

  /** Re-attached runs: a status ends them; a supervisor gone without one is settled by what is on disk. */
  private check(): void {
    for (const run of this.runs.values()) {
      if (run.child || run.settling) continue;
      if (readExitStatus(run.dir) || !belongsToRun(run.pid, this.opts.workspaceRoot, run.id)) void this.settle(run, undefined);
    }
  }

  /**
   * The supervisor ended (`exit`, from its own exit status) or is found gone (undefined: the status file tells, or
   * the cancel file, or nothing and the run is lost). A canceled or timed-out run is reported once its group is
   * gone (its SIGKILL follow-up sent), so that no process of it outlives its outcome.
   */
  private async settle(run: Run, exit: { code: number | null; signal: string | null } | undefined): Promise<void> {
    if (run.settling) return;
    run.settling = true;
    clearTimeout(run.timer);
    const recorded = exit ? undefined : readExitStatus(run.dir);
    const status = exit ?? (recorded && 'exit_code' in recorded ? fromShell(recorded.exit_code, null) : undefined);
    let outcome: JobOutcome;
    if (recorded && 'outcome' in recorded) {
      outcome = { ...recorded.outcome, job_run_id: run.id };
    } else if (status) {
      const missing = status.code !== 0 && !run.kill ? await missingDepsInLogs(run.dir) : [];
      outcome = outcomeOfExit(run.id, { ...status, kill: run.kill, missing, timeout_seconds: run.timeoutSeconds });
    } else if (run.kill?.kind === 'cancel' || readCancelReason(run.dir) !== undefined) {
      outcome = { job_run_id: run.id, status: 'canceled', reason: run.kill?.kind === 'cancel' ? run.kill.reason : readCancelReason(run.dir)! };
    } else {
      outcome = { job_run_id: run.id, status: 'canceled', reason: `${LOST_RUN_REASON} (its supervisor ended without recording how the job ended)` };
    }
    if (run.killed && groupAlive(run.pid)) await run.killed;
    this.end(run, outcome);
  }

  private end(run: Run, outcome: JobOutcome): void {
    if (this.runs.get(run.id) !== run || this.stopped) return;
    this.runs.delete(run.id);
    if ([...this.runs.values()].every((r) => r.child)) {
      this.poll?.unsubscribe();
      this.poll = undefined;
    }
    this.subject.next(outcome);
  }

  /** SIGTERM to the run's process group now, SIGKILL after the grace (for members that ignore SIGTERM). */
  private killGroup(run: Run): void {
    clearTimeout(run.timer);
    signalGroup(run.pid, 'SIGTERM', false);
    run.killed = new Promise<void>((resolve) =>
      setTimeout(() => {
        signalGroup(run.pid, 'SIGKILL', false);
        resolve();
      }, this.opts.killGraceMs ?? 500),
    );
  }

  private note(run: Run, text: string): void {
    try {
      appendFileSync(join(run.dir, STDERR_LOG), `platform: ${text}\n`);
    } catch {
      // A note is a courtesy: the outcome carries the reason.
    }
  }

  private later(outcome: JobOutcome): void {
    setImmediate(() => {
      if (!this.stopped) this.subject.next(outcome);
    });
  }
}

/**
 * The shell exits with its job's status: 128+n when the job was killed by signal n (the job's own `exit 130` looks
 * the same). The shell itself killed (by a cancel's SIGKILL) reports its signal.
 */
function fromShell(code: number | null, signal: NodeJS.Signals | null): { code: number | null; signal: string | null } {
  if (code !== null && code > 128) {
    const name = signalName(code - 128);
    if (name) return { code: null, signal: name };
  }
  return { code, signal };
}

function signalName(n: number): string | undefined {
  return Object.entries(osConstants.signals).find(([, v]) => v === n)?.[0];
}

/** Whether any process is left in the group `pid` led. */
function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The deadline a supervisor was started with (its argv, readable in /proc), 0 for none or unknown. */
function deadlineOf(pid: number): number {
  try {
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    const at = Number(argv[4]);
    return Number.isSafeInteger(at) && at > 0 ? at : 0;
  } catch {
    return 0;
  }
}
