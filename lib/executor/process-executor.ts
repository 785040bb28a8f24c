/**
 * Runs job runs as OS processes: the executor stage of the orchestrator, and the only place that spawns or
 * kills jobs. A thin adapter: the orchestrator calls start/cancel and reads outcomes$; it decides nothing.
 *
 * Each job run gets its own process group (`detached: true`), so canceling or timing out kills the job's
 * children and grandchildren too. stdout/stderr are appended to `<log_dir>/stdout.log` and `stderr.log` and
 * scanned line by line for `PLATFORM_MISSING_DEPS {...}` as they flow. The outcome of a run is emitted only
 * after the process exited, its pipes closed, and both log files were flushed and closed, so whoever sees the
 * outcome can read the whole log.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { storageFault } from '../system/storage-fault.js';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { Observable, Subject } from 'rxjs';
import { STDERR_LOG, STDOUT_LOG, type JobLaunch, type JobOutcome } from './job-launch.js';
import { MissingDepsScanner, type MissingReport } from './missing-deps-scanner.js';
import { signalGroup } from '../system/process-group.js';
import { spawnFailureReason, type SpawnPlace } from './spawn-failure.js';
import { MAX_TIMER_MS } from '../system/timer-ceiling.js';
import { LOCAL_WORKER, type Executor, type Reattached } from './executor-port.js';
import { outcomeOfExit, type KillCause } from './exit-outcome.js';

export interface ProcessExecutorOptions {
  /** Wait between SIGTERM and SIGKILL of a canceled / timed-out run's process group. Default 500 ms. */
  killGraceMs?: number;
  /**
   * After the job's main process exited, how long its pipes may stay open with nothing flowing (a background
   * process that inherited them) before the executor stops reading and reports the outcome. Default 2000 ms.
   */
  closeGraceMs?: number;
  /** Upper bound on how long shutdown() waits for the canceled runs to exit. Default 5000 ms. */
  shutdownTimeoutMs?: number;
  /** Where its runs start when that is a worker, named in why a program could not start. */
  place?: SpawnPlace;
}


interface Run {
  readonly launch: JobLaunch;
  pid: number;
  child: ChildProcess | undefined;
  /** The main process exited (its pipes may still be open). */
  exited: boolean;
  /** When it exited (epoch ms), 0 before. */
  exitedAt: number;
  /** A background process kept its output open past the exit, and the close grace stopped reading it. */
  heldOpen: boolean;
  /** Why the executor is killing the run; decides the outcome. Set only before the process exited. */
  kill: KillCause | undefined;
  /** What its output reported missing (both streams' scanners add to it). */
  readonly report: MissingReport;
  timeoutTimer: NodeJS.Timeout | undefined;
  closeGraceTimer: NodeJS.Timeout | undefined;
  /** stderr.log, for the executor's own notes. */
  errLog: WriteStream | undefined;
  finished: boolean;
  readonly done: Promise<void>;
  resolveDone: () => void;
}

export class ProcessExecutor implements Executor {
  /** Each run's log directory is made as it starts (Executor.keepsRunLogs). */
  readonly keepsRunLogs = true;
  private readonly subject = new Subject<JobOutcome>();
  /** Hot: exactly one outcome per started run. Subscribe before start() to be sure to see it. */
  readonly outcomes$: Observable<JobOutcome> = this.subject.asObservable();

  private readonly runs = new Map<string, Run>();
  /** SIGKILL follow-ups not yet sent; shutdown() waits for them. */
  private readonly pendingKills = new Set<Promise<void>>();
  private readonly killGraceMs: number;
  private readonly closeGraceMs: number;
  private readonly shutdownTimeoutMs: number;
  private shutDown = false;
  private readonly place: SpawnPlace | undefined;

  constructor(options: ProcessExecutorOptions = {}) {
    this.killGraceMs = options.killGraceMs ?? 500;
    this.closeGraceMs = options.closeGraceMs ?? 2000;
    this.shutdownTimeoutMs = options.shutdownTimeoutMs ?? 5000;
    this.place = options.place;
  }

  /**
   * Spawns the run. Never throws for a job that cannot start (missing program, bad cwd, unwritable log
   * dir): it returns `{pid: 0}` and emits a 'failed' outcome asynchronously. Throws only for a job_run_id
   * that is already running (a caller bug).
   */
  start(launch: JobLaunch): { pid: number; worker: string } {
    const id = launch.job_run_id;
    if (this.runs.has(id)) throw new Error(`job run ${id} is already running`);
    let resolveDone!: () => void;
    const done = new Promise<void>((resolve) => (resolveDone = resolve));
    const run: Run = {
      launch,
      pid: 0,
      child: undefined,
      exited: false,
      exitedAt: 0,
      heldOpen: false,
      kill: undefined,
      report: { missing: new Set() },
      timeoutTimer: undefined,
      closeGraceTimer: undefined,
      errLog: undefined,
      finished: false,
      done,
      resolveDone,
    };
    this.runs.set(id, run);

    if (this.shutDown) {
      this.failNotStarted(run, undefined, 'the executor is shut down');
      return { pid: 0, worker: LOCAL_WORKER };
    }
    try {
      mkdirSync(launch.log_dir, { recursive: true });
    } catch (err) {
      this.failNotStarted(run, undefined, storageFault(err, launch.log_dir)?.message ?? `could not create log directory '${launch.log_dir}': ${errText(err)}`);
      return { pid: 0, worker: LOCAL_WORKER };
    }
    const logs = {
      out: createWriteStream(join(launch.log_dir, STDOUT_LOG), { flags: 'a' }),
      err: createWriteStream(join(launch.log_dir, STDERR_LOG), { flags: 'a' }),
    };
    // A log file that cannot be written must not crash the server; the run goes on without it.
    logs.out.on('error', () => {});
    logs.err.on('error', () => {});
    run.errLog = logs.err;

    const program = launch.argv[0];
    if (program === undefined || program === '') {
      this.failNotStarted(run, logs, 'could not start the job: exec is empty; check exec in platform.json');
      return { pid: 0, worker: LOCAL_WORKER };
    }

    let child: ChildProcess;
    try {
      child = spawn(program, launch.argv.slice(1), {
        cwd: launch.cwd,
        env: {
          ...process.env,
          ...launch.env,
          PLATFORM_JOB_RUN_ID: id,
          PLATFORM_OUTPUTS: JSON.stringify(launch.outputs),
        },
        detached: true,
        stdio: ['pipe', 'pipe', 'pipe'],
        windowsHide: true,
      });
    } catch (err) {
      this.failNotStarted(run, logs, spawnFailureReason(program, launch.cwd, err, this.place, launch.env.PATH));
      return { pid: 0, worker: LOCAL_WORKER };
    }
    run.child = child;

    if (child.pid === undefined) {
      // ENOENT, EACCES, ...: reported by an 'error' event on the next tick.
      child.once('error', (err) => {
        child.stdin?.destroy();
        child.stdout?.destroy();
        child.stderr?.destroy();
        this.failNotStarted(run, logs, spawnFailureReason(program, launch.cwd, err, this.place, launch.env.PATH));
      });
      return { pid: 0, worker: LOCAL_WORKER };
    }
    run.pid = child.pid;

    // Errors after a successful spawn (e.g. from kill) carry no outcome; the 'close' event still comes.
    child.on('error', () => {});
    child.stdin?.on('error', () => {}); // EPIPE when the job does not read its stdin
    child.stdin?.end(launch.stdin);

    const pumped = Promise.all([
      this.pump(run, child.stdout, logs.out),
      this.pump(run, child.stderr, logs.err),
    ]);
    const closed = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.once('close', (code, signal) => resolve({ code, signal })),
    );
    child.once('exit', () => {
      run.exited = true;
      run.exitedAt = Date.now();
      clearTimeout(run.timeoutTimer);
      run.timeoutTimer = undefined;
      this.armCloseGrace(run);
    });

    const seconds = launch.timeout_seconds;
    if (Number.isFinite(seconds) && seconds > 0) {
      run.timeoutTimer = setTimeout(() => {
        run.timeoutTimer = undefined;
        if (run.exited || run.kill) return;
        run.kill = { kind: 'timeout' };
        note(logs.err, `timed out after ${seconds} s; killing the job's process group`);
        this.killGroup(run);
      }, Math.min(seconds * 1000, MAX_TIMER_MS));
    }

    void Promise.all([closed, pumped]).then(([{ code, signal }]) => this.finish(run, code, signal));
    return { pid: run.pid, worker: LOCAL_WORKER };
  }

  /**
   * Kills the run's whole process group (SIGTERM, then SIGKILL after the grace); its outcome will be
   * 'canceled'. A run whose main process already exited keeps the outcome of that exit (its leftover
   * group members are still killed). Unknown or finished id: no-op.
   */
  cancel(job_run_id: string, reason: string): void {
    const run = this.runs.get(job_run_id);
    if (!run || run.finished || run.pid <= 0) return;
    if (!run.exited && !run.kill) {
      run.kill = { kind: 'cancel', reason };
      if (run.errLog) note(run.errLog, `canceled: ${reason}; killing the job's process group`);
      clearTimeout(run.timeoutTimer);
      run.timeoutTimer = undefined;
    }
    this.killGroup(run);
  }

  /** Its runs are children of this process: none outlives it, none can be found again. */
  reattach(): Reattached {
    return 'lost';
  }

  /** True from start() until the run's outcome is emitted. */
  isRunning(job_run_id: string): boolean {
    return this.runs.has(job_run_id);
  }

  /** Runs started whose outcome has not been emitted yet. */
  runningCount(): number {
    return this.runs.size;
  }

  /**
   * Cancels every running run with `reason` and resolves once all of them reported their outcome (and their
   * SIGKILL follow-ups were sent), or after the shutdown timeout. Later start() calls fail their run.
   */
  async shutdown(reason: string): Promise<void> {
    this.shutDown = true;
    const runs = [...this.runs.values()];
    for (const run of runs) this.cancel(run.launch.job_run_id, reason);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all([...runs.map((r) => r.done), ...this.pendingKills]),
      new Promise<void>((resolve) => (timer = setTimeout(resolve, this.shutdownTimeoutMs))),
    ]);
    clearTimeout(timer);
  }

  /** Copies one output pipe to its log file and scans it; resolves once the log file is closed. */
  private pump(run: Run, src: Readable | null, file: WriteStream): Promise<void> {
    return new Promise<void>((resolve) => {
      file.once('close', () => resolve());
      let ended = false;
      const endFile = () => {
        if (ended) return;
        ended = true;
        if (file.destroyed) return; // already closed (write error); 'close' was or will be emitted
        file.end();
      };
      if (!src) {
        endFile();
        return;
      }
      const scanner = new MissingDepsScanner(run.report);
      // A log file that failed must not stall the job on a full pipe.
      file.on('error', () => src.resume());
      src.on('data', (chunk: Buffer) => {
        scanner.push(chunk);
        if (run.exited) this.armCloseGrace(run);
        if (file.destroyed || file.writableEnded) return;
        if (!file.write(chunk)) {
          src.pause();
          file.once('drain', () => src.resume());
        }
      });
      const onEnd = () => {
        scanner.end();
        endFile();
      };
      src.once('end', onEnd);
      src.once('close', onEnd);
      src.on('error', onEnd);
    });
  }

  /**
   * (Re)starts the wait for the pipes to close after the main process exited. A background process that
   * inherited the pipes could hold them open forever; when nothing flows for closeGraceMs we stop reading.
   */
  private armCloseGrace(run: Run): void {
    if (run.finished) return;
    clearTimeout(run.closeGraceTimer);
    run.closeGraceTimer = setTimeout(() => {
      run.closeGraceTimer = undefined;
      const child = run.child;
      if (run.finished || !child) return;
      run.heldOpen = true;
      if (run.errLog) note(run.errLog, 'the job exited but a background process kept its output open; stopped reading');
      child.stdout?.destroy();
      child.stderr?.destroy();
    }, this.closeGraceMs);
  }

  /** SIGTERM to the process group now, SIGKILL after the grace (for members that ignore SIGTERM). */
  private killGroup(run: Run): void {
    signalRun(run, 'SIGTERM');
    const pending = new Promise<void>((resolve) => {
      setTimeout(() => {
        signalRun(run, 'SIGKILL');
        resolve();
      }, this.killGraceMs);
    });
    this.pendingKills.add(pending);
    void pending.then(() => this.pendingKills.delete(pending));
  }

  private finish(run: Run, code: number | null, signal: NodeJS.Signals | null): void {
    clearTimeout(run.timeoutTimer);
    clearTimeout(run.closeGraceTimer);
    const { job_run_id, timeout_seconds } = run.launch;
    const outcome = outcomeOfExit(job_run_id, { code, signal, kill: run.kill, missing: [...run.report.missing], missingProblem: run.report.problem, timeout_seconds });
    // The job ended when it exited, not when the grace gave up on the output a background process held open: a job
    // of 3 ms read as 2 s long (a worker's runs, whose output comes through pipes; a local run's goes to files).
    this.emit(run, run.heldOpen && outcome.status !== 'canceled' ? { ...outcome, ended_at: run.exitedAt } : outcome);
  }

  /** A run that never got a process: note the reason in stderr.log, close the logs, then emit 'failed'. */
  private failNotStarted(run: Run, logs: { out: WriteStream; err: WriteStream } | undefined, reason: string): void {
    const id = run.launch.job_run_id;
    const outcome: JobOutcome = { job_run_id: id, status: 'failed', exit_code: -1, signal: '', reason };
    if (!logs) {
      setImmediate(() => this.emit(run, outcome));
      return;
    }
    note(logs.err, reason);
    void Promise.all([this.pump(run, null, logs.out), this.pump(run, null, logs.err)]).then(() =>
      // setImmediate: asynchronous even if the files closed at once, and outside the promise chain so a
      // throwing subscriber surfaces as an error instead of an unhandled rejection.
      setImmediate(() => this.emit(run, outcome)),
    );
  }

  private emit(run: Run, outcome: JobOutcome): void {
    if (run.finished) return;
    run.finished = true;
    this.runs.delete(run.launch.job_run_id);
    run.resolveDone();
    this.subject.next(outcome);
  }
}

function signalRun(run: Run, signal: NodeJS.Signals): void {
  // Once the process has exited its pid may be reused: only its group (still ours while members live) is signalled.
  signalGroup(run.pid, signal, !run.exited);
}

function note(file: WriteStream, text: string): void {
  if (!file.destroyed && !file.writableEnded) file.write(`platform: ${text}\n`);
}

function errText(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  return e?.code ?? e?.message ?? String(err);
}

