/**
 * Local job runs that outlive the daemon. Each run's job leads a session (and process group) of its own, with the
 * run's log files as its stdout and stderr, and a supervisor outside this process writes its exit status next to
 * them (run-files.ts) once it ended. Nothing of the run passes through this process, so a daemon that stops,
 * crashes or is upgraded leaves it running; the next one re-attaches by the pid in the log (checked against the
 * run's identity in /proc) and the status file. Runs are started off this event loop by a long-lived launcher
 * (run-launcher.ts), so `start` returns before the pid is known: it comes on `started$`.
 *
 * The supervisor: the native launcher itself for the runs it forked (it lives on, in a session of its own, until
 * the last of them ended; a run its records cannot carry gets its `--supervise` mode between it and the job), or a
 * process per run (`/bin/sh`) where it was not built. Not a node process, because a supervisor is paid for on every
 * run (a node one cost ~0.3 s, docs/decisions.md). All record a job killed by signal n as 128+n, as a shell does:
 * such a job and one that exits with 128+n look the same, and are reported as killed. All keep the run's timeout too,
 * with or without a daemon, and say in the status that they timed the job out; this daemon's own timer is a backstop.
 */
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { storageFault } from '../system/storage-fault.js';
import { constants as osConstants } from 'node:os';
import { join } from 'node:path';
import { Observable, Subject, type Subscription, interval } from 'rxjs';
import { STDERR_LOG, type JobLaunch, type JobOutcome } from './job-launch.js';
import { LOCAL_WORKER, ranHere, type AdoptedStart, type Executor, type Placement, type Reattached } from './executor-port.js';
import { RunLauncher, type LauncherNews, type RunSpec } from './run-launcher.js';
import type { RunLauncherKind } from '../api/executor-health.js';
import { outcomeOfExit, type KillCause } from './exit-outcome.js';
import { belongsToRun, findJobRunProcesses, killProcesses, launchedByLauncher, processStartMs, unreaped } from './job-process-identity.js';
import { scanOnce, type JobRunProcesses } from './job-run-process-scan.js';
import { LOST_RUN_REASON } from './lost-runs.js';
import { cancelAllAndWait } from './cancel-all.js';
import { missingDepsInLogs } from './missing-deps-scanner.js';
import { findProgram } from './program-path.js';
import { CANCEL_FILE, markSuperseded, readCancelReason, readExitStatus, removeExecFields, runDirsAmong, startFromFiles, statusPid, writeDurably, writeRunFiles } from './run-files.js';
import { holdDepth } from './hold-depth.js';
import { spawnFailureReason } from './spawn-failure.js';
import { groupAlive, signalGroup } from '../system/process-group.js';
import { MAX_TIMER_MS } from '../system/timer-ceiling.js';

/**
 * The shell supervisor, `sh -c SCRIPT <run dir>`: `run.sh` in the run's
 * directory sets the job's directory, environment and argv; the job gets `stdin.json` on its stdin and the two log
 * files. TERM is caught (not ignored, which the job would inherit) so that a cancel reaching the whole group lets the
 * shell outlive its job and record it.
 *
 * A run with a timeout (run.sh sets `platform_timeout_seconds`) gets a watchdog, a subshell in the run's group that
 * sleeps until the deadline, then does what the daemon does on a timeout: SIGTERM to the group, SIGKILL after the
 * grace. It tells the supervisor first (USR1, trapped: the status says `"timed_out":true`); a job that ignores
 * SIGTERM keeps the supervisor waiting until that SIGKILL ends it too, so the watchdog writes the status itself
 * before it. A job that ends in time, or a cancel's SIGTERM, ends the watchdog (its sleep with it). The job itself
 * still runs in the foreground: an asynchronous list would start it with SIGINT and SIGQUIT ignored. Names are
 * prefixed: run.sh exports the job's variables, and an assignment here would change one of the same name.
 *
 * The run's directory is held open (fd 9) from the start and named through it, /proc/self/fd/9, in whichever of
 * this shell, its watchdog, mv and ln opens a file there (each has the descriptor; not /proc/$$/: dash moves this
 * shell's fd 9 aside while the job runs, when the watchdog writes): the status and the timeout's line land in it
 * wherever it is by then, as the native launcher's do (a workspace moved while the run went on, its daemon stopped:
 * the path given names nothing any more). Where /proc cannot name it, the path, as before. The job does not get it.
 */
export const SUPERVISOR_SCRIPT = [
  // $1: env's absolute path when the job may run in the background (`env --default-signal` works: the launcher checked).
  // The PATH kept: run.sh exports the job's own, on which this script's programs may not be found.
  'platform_term=; platform_timed_out=; platform_watchdog=; d=$0; platform_env=$1; platform_path=$PATH',
  // First of all: until these are set a cancel's SIGTERM ends this shell, and the run with no status (lost).
  "trap 'platform_term=1' TERM",
  "trap 'platform_timed_out=1' USR1",
  // `command`: a redirection that fails does not end the shell, as it would of a bare `exec`; the braces keep the
  // 2>/dev/null to this line (on `exec` alone, it would redirect the rest of the script).
  // Tested by a program of its own (env test), not the builtin: mv and ln must see fd 9 too (ksh closes it for them).
  '{ command exec 9<"$d"; } 2>/dev/null && env test -d /proc/self/fd/9 && d=/proc/self/fd/9',
  'if . "$d/run.sh"; then',
  // A cancel that came while run.sh was read reached no job: none is started (it would run on until the SIGKILL).
  '  if [ -z "$platform_term" ] && [ "${platform_timeout_seconds:-0}" -gt 0 ]; then',
  '    (',
  '      PATH=$platform_path',
  "      trap 'kill $platform_sleep 2>/dev/null; exit' TERM",
  '      sleep "$platform_timeout_seconds" & platform_sleep=$!',
  '      wait $platform_sleep || exit',
  "      trap '' TERM",
  `      echo "platform: timed out after $platform_timeout_seconds s; killing the job's process group" >>"$d/stderr.log"`,
  '      kill -USR1 $$',
  '      kill -TERM 0',
  '      sleep "$platform_kill_grace" 2>/dev/null || sleep 1',
  `      if kill -0 $$ 2>/dev/null && [ ! -e "$d/status.json" ]; then printf '{"exit_code":137,"pid":%d,"timed_out":true}\\n' "$$" >"$d/status.json"; fi`,
  '      kill -KILL 0',
  '    ) </dev/null >/dev/null 2>&1 &',
  '    platform_watchdog=$!',
  '  fi',
  '  if [ -n "$platform_term" ]; then c=143;',
  // In the foreground, a cancel's TERM that came after the check above and before the fork (the shell opens the
  // redirections first) reached no job. In the background the job is forked first: such a TERM is sent to it once,
  // here (later ones reach it with its group); a trap breaks the wait, which is waited again. An asynchronous list
  // ignores SIGINT and SIGQUIT: env gives the job their defaults (a program named `x=y` it would take for a
  // variable: in the foreground).
  '  elif [ -n "$platform_env" ] && case $1 in *=*) false;; esac; then',
  '    "$platform_env" --default-signal=INT,QUIT "$@" <"$d/stdin.json" >>"$d/stdout.log" 2>>"$d/stderr.log" 9<&- &',
  '    platform_job=$!',
  '    [ -z "$platform_term" ] || kill -TERM "$platform_job" 2>/dev/null',
  // Above 128: the job's end, or a trap that broke the wait (the job is still there, or not yet reaped).
  '    while wait "$platform_job"; c=$?; [ "$c" -gt 128 ] && kill -0 "$platform_job" 2>/dev/null; do :; done',
  '  else "$@" <"$d/stdin.json" >>"$d/stdout.log" 2>>"$d/stderr.log" 9<&-; c=$?; fi',
  // From here the watchdog's TERM must not end the status's mv (an ignored signal is inherited across exec), and a
  // USR1 coming after the job ended by itself is not a timeout.
  "  trap '' TERM USR1",
  '  [ -z "$platform_watchdog" ] || kill "$platform_watchdog" 2>/dev/null',
  'else',
  '  c=$?',
  'fi',
  'PATH=$platform_path',
  // Timed out, the watchdog's SIGKILL may end this shell mid-write: renamed into place, the status is whole, the
  // watchdog's or this one.
  // A job that exited 0 ended by itself, whatever the watchdog said just then.
  'if [ -n "$platform_timed_out" ] && [ "$c" -ne 0 ]; then',
  `  printf '{"exit_code":%d,"pid":%d,"timed_out":true}\\n' "$c" "$$" >"$d/status.json.tmp" && mv -f "$d/status.json.tmp" "$d/status.json"`,
  'else',
  // Renamed into place, or, on a disk with no block left for it, the status as status.link's target (a short
  // symlink needs none): never an empty status.json, which a next daemon read as no status (lost). launcher.c does the same.
  `  s=$(printf '{"exit_code":%d,"pid":%d}' "$c" "$$")`,
  `  { printf '%s\\n' "$s" >"$d/status.json.tmp" && mv -f "$d/status.json.tmp" "$d/status.json"; } 2>/dev/null || { rm -f "$d/status.json.tmp"; ln -s "$s" "$d/status.link"; }`,
  'fi',
  'exit "$c"',
].join('\n');
const RUN_FILE = 'run.sh';
/**
 * How long after a run's deadline and kill grace this daemon's own timer kills it. The run's supervisor (launcher.c,
 * SUPERVISOR_SCRIPT) kills it at the deadline itself, whether or not a daemon runs, and says so in its status; this
 * timer is the backstop for one that does not (a run started before an upgrade, a native launcher killed by hand).
 * Later than the supervisor, so that the two do not race: were they to, both record the same timeout, once.
 */
const BACKSTOP_MS = 1000;

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
  /** The supervisor's pid: the leader of the run's process group (0 until the launcher said it started). */
  pid: number;
  /** Started by this daemon: the launcher tells its end. Otherwise (re-attached) the poll does. */
  ours: boolean;
  /**
   * When the log recorded `pid` as the run's (epoch ms; 0 when unknown): what identifies a re-attached job that hid
   * its environment. Only re-attached runs are looked for by their pid; the launcher tells this daemon's own.
   */
  readonly startedAt: number;
  readonly timeoutSeconds: number;
  kill: KillCause | undefined;
  timer: NodeJS.Timeout | undefined;
  /** The SIGKILL follow-up of a cancel or timeout, once sent. */
  killed: Promise<void> | undefined;
  settling: boolean;
  /** Given to the native launcher as a record: it counts against the launcher's slots, and may be held. */
  held: boolean;
  /** Asked back (`recall`) while it may be held. */
  recalling: boolean;
  /** When the launcher said it started (performance.now()); 0 until then. */
  heardStart: number;
}

export class SupervisedExecutor implements Executor {
  /** Each run's log directory is made as it starts (Executor.keepsRunLogs). */
  readonly keepsRunLogs = true;
  private readonly subject = new Subject<JobOutcome>();
  private readonly starts = new Subject<Placement>();
  private readonly recalls = new Subject<string>();
  readonly recalled$: Observable<string> = this.recalls.asObservable();
  readonly outcomes$: Observable<JobOutcome> = this.subject.asObservable();
  readonly started$: Observable<Placement> = this.starts.asObservable();
  private readonly runs = new Map<string, Run>();
  private readonly launcher: RunLauncher;

  /** How this executor starts runs (`/api/status`'s `executor.launcher`). */
  get launcherKind(): RunLauncherKind {
    return this.launcher.kind;
  }
  private readonly news: Subscription;
  private poll: Subscription | undefined;
  private stopped = false;
  /** Shutting down: the launcher was told no slots, and is not told otherwise again. */
  private closing = false;
  /** The cap the orchestrator gave (`holdBeyond`), and the slots last told the launcher. */
  private cap: number | undefined;
  private toldSlots: number | undefined;
  /** How long the run of this launcher's that ended last took, from its start to its end as heard: `holdDepth`. */
  private lastRunMs: number | undefined;

  constructor(private readonly opts: SupervisedExecutorOptions) {
    this.launcher = new RunLauncher(SUPERVISOR_SCRIPT, opts.workspaceRoot);
    this.news = this.launcher.news$.subscribe((news) => this.hear(news));
  }

  start(launch: JobLaunch): { pid: number; worker: string } | undefined {
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
    const jobEnv: Record<string, string> = { ...launch.env, PLATFORM_JOB_RUN_ID: id, PLATFORM_OUTPUTS: JSON.stringify(launch.outputs) };
    const found = findProgram(program, launch.cwd, jobEnv.PATH ?? process.env.PATH);
    if ('error' in found) return fail(spawnFailureReason(program, launch.cwd, found.error, undefined, launch.env.PATH));
    const seconds = launch.timeout_seconds;
    const deadline = Number.isFinite(seconds) && seconds > 0 ? Date.now() + seconds * 1000 : 0;
    const argv = [found.path, ...launch.argv.slice(1)];
    // A variable the shell cannot name is set by a direct spawn instead.
    const shellNames = Object.keys(jobEnv).every((k) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(k));
    // The shell launcher runs run.sh; the native one is given all of it, and only needs it for a deadline (what a
    // next daemon reads). Without run.sh the native launcher writes the run's files itself, off this event loop.
    const runSh = this.launcher.kind !== 'native' || deadline > 0;
    const timeout = deadline > 0 ? { timeoutMs: seconds * 1000, killGraceMs: this.graceMs() } : undefined;
    if (runSh) {
      try {
        writeRunFiles(dir, launch.stdin);
        writeFileSync(join(dir, RUN_FILE), runScript(launch.cwd, shellNames ? jobEnv : {}, deadline, argv, timeout));
      } catch (err) {
        return fail(runFilesFault(err, dir));
      }
    }
    const run = this.follow(id, dir, 0, true, seconds, deadline);
    const spec: RunSpec = { id, dir, jobEnv, cwd: launch.cwd, argv, ...(runSh ? {} : { stdin: launch.stdin }), ...timeout };
    // Every run the native launcher is given counts in its slots (one too wide for a record too: launcher.c's
    // `--supervise`), so the cap is kept there alone.
    run.held = this.launcher.kind === 'native';
    this.launcher.launch(spec, shellNames);
    return undefined;
  }

  recall(job_run_id: string): void {
    const run = this.runs.get(job_run_id);
    if (!run || run.kill) return;
    if (!run.held || run.pid !== 0 || run.recalling) return;
    run.recalling = true;
    this.launcher.cancelHeld(job_run_id);
  }

  holdBeyond(cap: number): number {
    if (this.launcher.kind !== 'native') return 0;
    this.cap = cap;
    this.tellSlots();
    return holdDepth(cap, this.lastRunMs);
  }

  /**
   * The launcher's slots: the cap less the runs it does not count (re-attached from an earlier daemon, or a gone
   * launcher's), so that with them it never runs more than the cap.
   */
  private tellSlots(): void {
    if (this.cap === undefined || this.stopped || this.closing) return;
    let others = 0;
    for (const run of this.runs.values()) if (!run.held) others++;
    const slots = Math.max(0, this.cap - others);
    if (slots === this.toldSlots) return;
    this.toldSlots = slots;
    this.launcher.setSlots(slots);
  }

  cancel(job_run_id: string, reason: string): void {
    const run = this.runs.get(job_run_id);
    if (!run || run.kill) return;
    run.kill = { kind: 'cancel', reason };
    // Held by the launcher, it is dropped there; started meanwhile, its start's news kills it (killGroup waits for it).
    // Told first, before the durable write: a run of the launcher's that ends meanwhile must not start this one.
    if (run.pid === 0 && run.held) this.launcher.cancelHeld(run.id);
    try {
      writeDurably(join(run.dir, CANCEL_FILE), { reason });
    } catch {
      // Only a next daemon misses it: it would record the run lost instead of canceled.
    }
    this.note(run, `canceled: ${reason}; killing the job's process group`);
    // The kill waits for the other cancels of this turn, in whatever order they come: a run it ends frees a slot the
    // launcher would at once give to a held run, whose own cancel must be on disk and sent first.
    setImmediate(() => {
      if (this.runs.get(run.id) === run && !run.settling) this.killGroup(run);
    });
  }

  reattach(launch: JobLaunch, pid: number, startedAt = 0): Reattached {
    const { job_run_id, log_dir: logDir, timeout_seconds } = launch;
    const ended = (): 'ended' | undefined => {
      if (!readExitStatus(logDir, pid)) return undefined;
      // Settled on the next turn: a run that exited 0 settles synchronously, and the caller has not subscribed
      // to outcomes$ yet while it re-attaches (the outcome would be lost and the run left running for ever).
      const run = this.follow(job_run_id, logDir, pid, false, timeout_seconds, 0, startedAt);
      setImmediate(() => void this.settle(run, undefined));
      return 'ended';
    };
    if (ended()) return 'ended';
    // Unreaped: the job ended this instant and its supervisor is writing its status.
    if (belongsToRun(pid, this.opts.workspaceRoot, job_run_id, startedAt) || unreaped(pid)) {
      this.follow(job_run_id, logDir, pid, false, timeout_seconds, deadlineOf(logDir), startedAt);
      this.poll ??= interval(this.opts.pollMs ?? 250).subscribe(() => this.check());
      return 'following';
    }
    // Read again: the job may have ended, its status written and it reaped, between the first read and the look.
    if (ended()) return 'ended';
    const reason = readCancelReason(logDir);
    if (reason !== undefined) {
      this.later({ job_run_id, status: 'canceled', reason });
      return 'ended';
    }
    // Neither its job (or supervisor) nor a status: the run is lost. What is left of its processes is the caller's to
    // kill (the restart's one pass over /proc finds them with the others').
    return 'lost';
  }

  /** Runs of this machine only: a job a Redis worker runs here names its run too, but is that worker's. */
  canFollow(worker: string): boolean {
    return ranHere(worker);
  }

  adoptStarted(queued: ReadonlySet<string>, launchOf: (jobRunId: string) => JobLaunch, processes?: JobRunProcesses): Map<string, AdoptedStart> {
    const adopted = new Map<string, AdoptedStart>();
    if (queued.size === 0) return adopted;
    const found = (processes ?? scanOnce(this.opts.workspaceRoot, queued))();
    // Only a run with a directory was ever handed to a launcher: of 100,000 queued runs (a backfill behind a busy
    // executor), the few a crash caught are looked at, not every one's files. The pass may cover more than the
    // queued runs (the restart's covers the running ones too).
    const looked = new Set([...[...found.keys()].filter((id) => queued.has(id)), ...runDirsAmong(this.opts.workspaceRoot, queued)]);
    for (const id of looked) {
      if (this.runs.has(id)) continue;
      const launch = launchOf(id);
      const pids = found.get(id) ?? [];
      // Going, the pid its start records is the launcher's child (the job, or its supervisor); ended, its
      // supervisor's status names that pid. A start clears an earlier start's status, a run canceled or recalled
      // unstarted has none, and one killed to start again is marked (markSuperseded): any other status in a queued
      // run's directory is of its unrecorded start.
      const live = pids.find(launchedByLauncher);
      const pid = live ?? (readCancelReason(launch.log_dir) === undefined ? statusPid(launch.log_dir) : undefined);
      if (pid !== undefined && this.reattach(launch, pid, 0) !== 'lost') {
        // Its real start, not this restart's: the kernel's for a process still there (a pid from a status may be
        // another's by now), else its files'.
        const started_at = (live !== undefined ? processStartMs(live) : undefined) ?? startFromFiles(launch.log_dir);
        adopted.set(id, { pid, started_at });
        continue;
      }
      // Not taken: what is left of it is killed, and it starts again (the orchestrator's reattach).
      if (pids.length > 0) markSuperseded(launch.log_dir);
    }
    return adopted;
  }

  waitingToStart(): number {
    let n = 0;
    for (const run of this.runs.values()) if (run.held && run.pid === 0) n++;
    return n;
  }

  runningCount(): number {
    return this.runs.size;
  }

  async shutdown(reason: string, options: { cancelRuns?: boolean } = {}): Promise<void> {
    // The launcher starts nothing it holds from here on, and every start it made before is heard (and recorded by
    // the orchestrator's last step) before this stops listening.
    if (this.cap !== undefined && !this.stopped) {
      this.closing = true;
      this.toldSlots = 0;
      this.launcher.setSlots(0);
      await this.launcher.sync(1000);
    }
    if (options.cancelRuns && this.runs.size > 0) {
      this.poll ??= interval(this.opts.pollMs ?? 250).subscribe(() => this.check());
      // In any order: the launcher was told no slots above, and each cancel's kill waits for the turn's other cancels
      // (`cancel`), so no kill frees a slot a held run could start on.
      await cancelAllAndWait(this, [...this.runs.keys()], reason, this.opts.shutdownTimeoutMs ?? 5000);
    }
    // The rest go on without us (their supervisors keep their timeouts; the next daemon records them): no more
    // outcomes from this one.
    this.stopped = true;
    this.poll?.unsubscribe();
    for (const run of this.runs.values()) clearTimeout(run.timer);
    this.runs.clear();
    this.news.unsubscribe();
    this.launcher.close();
  }

  /** What the launcher says of the runs it started. */
  private hear(news: LauncherNews): void {
    if (news.kind === 'launcher-gone') {
      // No more news: each run's end is read from its status file. A run whose supervisor was this launcher has none
      // coming (the launcher is gone): once its job is gone too, it is lost and rebuilt.
      const unstarted: Run[] = [];
      for (const run of this.runs.values()) {
        // Only the native launcher's runs: the shell launcher's are told of by their own subshells, which outlive it.
        if (!run.ours || !run.held) continue;
        run.ours = false;
        // The next launcher does not know it: it counts against that one's slots as a re-attached run does.
        run.held = false;
        if (run.pid === 0 && !run.settling) unstarted.push(run);
      }
      // Held (or in the pipe) when it went: never started, or started with no news of it. Whatever of it runs is
      // killed, and it comes back queued (no outcome), as a recalled run does; a canceled one is recorded canceled.
      if (unstarted.length > 0) {
        for (const [id, pids] of findJobRunProcesses(this.opts.workspaceRoot, new Set(unstarted.map((r) => r.id)))) {
          const run = this.runs.get(id);
          // A canceled one keeps its cancel's reason; any other comes back queued, its status of no start on record.
          if (run && run.kill?.kind !== 'cancel') markSuperseded(run.dir);
          killProcesses(pids);
        }
        for (const run of unstarted) {
          if (run.kill?.kind === 'cancel') {
            void this.settle(run, undefined, { job_run_id: run.id, status: 'canceled', reason: run.kill.reason });
            continue;
          }
          clearTimeout(run.timer);
          this.runs.delete(run.id);
          this.recalls.next(run.id);
        }
      }
      // The next launcher starts with no limit until told.
      this.toldSlots = undefined;
      if (this.cap !== undefined && this.runs.size > 0) this.tellSlots();
      this.poll ??= interval(this.opts.pollMs ?? 250).subscribe(() => this.check());
      return;
    }
    const run = this.runs.get(news.id);
    if (!run || !run.ours) return;
    if (news.kind === 'started') {
      run.pid = news.pid;
      run.heardStart = performance.now();
      // When it started, not when a step takes this news: a run the launcher started on its own while the daemon was
      // busy was recorded as starting after it had ended.
      this.starts.next({ job_run_id: run.id, worker: LOCAL_WORKER, pid: news.pid, ...(news.at !== undefined ? { started_at: news.at } : {}) });
      if (run.kill) this.killGroup(run);
    } else if (news.kind === 'exited') {
      if (run.heardStart > 0) this.lastRunMs = performance.now() - run.heardStart;
      void this.settle(run, fromShell(news.status, null), undefined, news.at);
    } else if (news.kind === 'dropped') {
      // Never started: a wide run's fields (the daemon's environment) leave the disk with it.
      removeExecFields(run.dir);
      if (run.recalling && !run.kill) {
        clearTimeout(run.timer);
        this.runs.delete(run.id);
        this.recalls.next(run.id);
      } else {
        const reason = run.kill?.kind === 'cancel' ? run.kill.reason : 'canceled before it started';
        void this.settle(run, undefined, { job_run_id: run.id, status: 'canceled', reason });
      }
    } else {
      const reason = news.runFiles ? runFilesFault(news.error, run.dir) : `could not start the run: ${news.error.message}`;
      if (news.runFiles) this.note(run, reason);
      void this.settle(run, undefined, { job_run_id: run.id, status: 'failed', exit_code: -1, signal: '', reason });
    }
  }

  private follow(id: string, dir: string, pid: number, ours: boolean, timeoutSeconds: number, deadline: number, startedAt = 0): Run {
    const run: Run = { id, dir, pid, ours, startedAt, timeoutSeconds, kill: undefined, timer: undefined, killed: undefined, settling: false, held: false, recalling: false, heardStart: 0 };
    this.runs.set(id, run);
    if (deadline > 0) {
      run.timer = setTimeout(() => {
        if (run.kill || run.settling) return;
        run.kill = { kind: 'timeout' };
        this.note(run, `timed out after ${timeoutSeconds} s; killing the job's process group`);
        this.killGroup(run);
      }, Math.min(Math.max(0, deadline + this.graceMs() + BACKSTOP_MS - Date.now()), MAX_TIMER_MS));
    }
    return run;
  }

  /** Re-attached runs: a status ends them; a supervisor gone without one is settled by what is on disk. */
  private check(): void {
    for (const run of this.runs.values()) {
      if (run.ours || run.settling) continue;
      if (readExitStatus(run.dir, run.pid) || !(belongsToRun(run.pid, this.opts.workspaceRoot, run.id, run.startedAt) || unreaped(run.pid))) void this.settle(run, undefined);
    }
  }

  /**
   * The supervisor ended (`exit`, from its own exit status) or is found gone (undefined: the status file tells, or
   * the cancel file, or nothing and the run is lost). A canceled or timed-out run is reported once its group is
   * gone (its SIGKILL follow-up sent), so that no process of it outlives its outcome.
   */
  private async settle(run: Run, exit: { code: number | null; signal: string | null } | undefined, failure?: JobOutcome, exitedAt?: number): Promise<void> {
    if (run.settling) return;
    run.settling = true;
    clearTimeout(run.timer);
    if (failure) return this.end(run, failure);
    const recorded = exit ? undefined : readExitStatus(run.dir, run.pid);
    let status = exit ?? (recorded && 'exit_code' in recorded ? fromShell(recorded.exit_code, null) : undefined);
    // Its supervisor timed it out (its status says so; an exit heard live cannot: read for runs with a timeout only).
    // Recorded as this daemon's own timeout is, with the supervisor's word on how the job ended: the shell's watchdog
    // and the native launcher end in the group's SIGKILL themselves, after writing it (a `--supervise` whose launcher
    // died in the grace writes it from the launcher's `timed-out` mark).
    const told = recorded ?? (exit && !run.kill && run.timeoutSeconds > 0 ? readExitStatus(run.dir, run.pid) : undefined);
    if (!run.kill && told && 'exit_code' in told && told.timed_out) {
      run.kill = { kind: 'timeout' };
      status = fromShell(told.exit_code, null);
      // What is left of its group (what ignored the SIGTERM) goes before the outcome, as after this daemon's timeout;
      // the supervisor sends the same SIGKILL, from its deadline.
      if (groupAlive(run.pid)) this.killGroup(run, false);
    }
    let outcome: JobOutcome;
    if (recorded && 'outcome' in recorded) {
      outcome = { ...recorded.outcome, job_run_id: run.id };
    } else if (status) {
      const report = status.code !== 0 && !run.kill ? await missingDepsInLogs(run.dir) : undefined;
      const missing = report ? [...report.missing] : [];
      outcome = outcomeOfExit(run.id, { ...status, kill: run.kill, missing, missingProblem: report?.problem, timeout_seconds: run.timeoutSeconds });
    } else if (run.kill?.kind === 'cancel' || readCancelReason(run.dir) !== undefined) {
      outcome = { job_run_id: run.id, status: 'canceled', reason: run.kill?.kind === 'cancel' ? run.kill.reason : readCancelReason(run.dir)! };
    } else {
      outcome = { job_run_id: run.id, status: 'canceled', reason: `${LOST_RUN_REASON} (its supervisor ended without recording how the job ended)` };
    }
    // Read from the status file: the job ended when it was written, perhaps long before this daemon ran.
    if (recorded && outcome.status !== 'canceled') outcome = { ...outcome, ended_at: recorded.ended_at };
    // Heard from the launcher, with when it exited (a canceled run's end is when its group was gone: now).
    else if (exitedAt !== undefined && outcome.status !== 'canceled' && !run.kill) outcome = { ...outcome, ended_at: exitedAt };
    if (run.killed && groupAlive(run.pid)) await run.killed;
    this.end(run, outcome);
  }

  private end(run: Run, outcome: JobOutcome): void {
    if (this.runs.get(run.id) !== run || this.stopped) return;
    this.runs.delete(run.id);
    if ([...this.runs.values()].every((r) => r.ours)) {
      this.poll?.unsubscribe();
      this.poll = undefined;
    }
    if (!run.held) this.tellSlots();
    this.subject.next(outcome);
  }

  /**
   * SIGTERM to the run's process group now (`term`; not when its supervisor sent it already), SIGKILL after the grace
   * (for members that ignore SIGTERM).
   */
  private killGroup(run: Run, term = true): void {
    clearTimeout(run.timer);
    if (run.pid <= 0) return; // not started yet: killed as soon as the launcher says it started
    if (term) signalGroup(run.pid, 'SIGTERM', false);
    run.killed = new Promise<void>((resolve) =>
      setTimeout(() => {
        signalGroup(run.pid, 'SIGKILL', false);
        resolve();
      }, this.graceMs()),
    );
  }

  /** Between SIGTERM and SIGKILL of a canceled or timed-out run's group (this daemon's and the supervisor's). */
  private graceMs(): number {
    return this.opts.killGraceMs ?? 500;
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


/** The deadline the run was started with (in its run.sh), 0 for none or unknown. */
function deadlineOf(dir: string): number {
  try {
    const at = Number(/^deadline=(\d+)/m.exec(readFileSync(join(dir, RUN_FILE), 'utf8'))?.[1]);
    return Number.isSafeInteger(at) && at > 0 ? at : 0;
  } catch {
    return 0;
  }
}

/**
 * run.sh: what the shell supervisor sources (the job's directory, environment and argv) and the run's deadline (epoch
 * ms, what a next daemon reads back), with, for a run with a timeout, what its watchdog needs: the timeout in whole
 * seconds (`[ -gt ]` and a POSIX `sleep` take no fraction) and the kill grace in seconds.
 */
function runScript(cwd: string, env: Record<string, string>, deadline: number, argv: string[], timeout?: { timeoutMs: number; killGraceMs: number }): string {
  return [
    `cd ${shq(cwd)} &&`,
    ...Object.entries(env).map(([k, v]) => `export ${k}=${shq(v)} &&`),
    `deadline=${deadline} &&`,
    ...(timeout ? [`platform_timeout_seconds=${Math.ceil(timeout.timeoutMs / 1000)} &&`, `platform_kill_grace=${(timeout.killGraceMs / 1000).toFixed(3)} &&`] : []),
    `set -- ${argv.map(shq).join(' ')}`,
    '',
  ].join('\n');
}

/** A word quoted for sh: any bytes, newlines included. */
function shq(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/** Why a run's directory or files could not be written, for the person reading the run's reason. */
function runFilesFault(err: unknown, dir: string): string {
  return storageFault(err, dir)?.message ?? `could not write the run's log directory '${dir}': ${(err as NodeJS.ErrnoException).code ?? String(err)}`;
}
