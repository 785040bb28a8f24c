/**
 * A platform opened on a workspace, without HTTP: the log, the state fold, the orchestrator and the executor
 * wired together. The server, the tests and other RxJS apps all start here.
 */
import { JobLogRetention, type RetentionReport } from './executor/job-log-retention.js';
import type { EventCompactionReport, GcReport } from './api/gc.js';
import { compactEvents } from './state/event-compaction.js';
import { join } from 'node:path';
import { type Observable, type SchedulerLike, defer, distinctUntilChanged, filter, map, startWith, take, throwError } from 'rxjs';
import type { BuildEvent } from './events/build-event.js';
import { errorMessage } from './errors.js';
import { EventLog } from './events/event-log.js';
import { tailEvents } from './events/event-tail.js';
import { followFile, followFileLines, type FileLine, type FollowOptions } from './executor/follow-file.js';
import { STDERR_LOG, STDOUT_LOG, runLogDir } from './executor/job-launch.js';
import { InProcessExecutor } from './executor/in-process-executor.js';
import { SupervisedExecutor } from './executor/supervised-executor.js';
import type { Executor, ExecutorHealth } from './executor/executor-port.js';
import type { ExecutorConfigStatus } from './api/executor-config.js';
import type { GraphDefinition } from './graph/graph-definition.js';
import { GraphError } from './graph/graph-error.js';
import { GRAPH_FILE } from './graph/graph-file.js';
import { graphFileMissingWithHistory, RESTORE_GRAPH_FILE } from './graph/graph-file-missing.js';
import type { JobResolver } from './graph/job-resolver.js';
import { WorkspaceGraph } from './graph/workspace-graph.js';
import { unproducedProblem } from './graph/unproduced-refs.js';
import { MAX_EXPANSION } from './graph/partition-pattern.js';
import { MAX_PARTITIONS_PER_WANT } from './api/schemas/wants.js';
import { partitionsProblem, requestObjectProblem } from './orchestrator/request-checks.js';
import { requestFieldsProblem, type WriteKind } from './orchestrator/request-fields.js';
import type { CommandResult } from './orchestrator/command.js';
import { backfillWithDefaults, taintWithDefaults, wantWithDefaults, type BackfillInput, type TaintInput, type WantInput } from './orchestrator/request-defaults.js';
import { CommandQueue } from './orchestrator/command-queue.js';
import { platformOptionsProblem } from './platform-options-check.js';
import { workspaceDirProblem } from './workspace-dir-check.js';
import { retentionOptionsProblem, type RetentionOptions } from './retention-options-check.js';
import { GraphTaskSource } from './orchestrator/graph-task-source.js';
import { Orchestrator } from './orchestrator/orchestrator.js';
import { ACTIVE_JOB_RUN_STATUSES, type BuildState, type JobRunRecord } from './state/build-state.js';
import { SNAPSHOT_EVERY_EVENTS, StateStore } from './state/state-store.js';
import type { StartProgress } from './state/store-start.js';

export interface PlatformOptions {
  /**
   * The job graph; default: `<workspace>/platform.json` (none = no jobs). parseGraph's result, or platform.json's
   * content as read (parsed at open, a bad one refused with parseGraph's message). One built by hand is checked as
   * platform.json is (graph/given-graph.ts).
   */
  graph?: GraphDefinition;
  /** Command queue capacity (at least 1); default 100. */
  queueCapacity?: number;
  /** Orchestrator tick (1 ms to setTimeout's ceiling, 2,147,483,647); default 500 ms. Options that make no sense are refused at open. */
  tickMs?: number;
  /** Take a state snapshot in the background every this many events (0: only at close); default 100,000. */
  snapshotEveryEvents?: number;
  /**
   * Where the orchestrator's steps, tick, deadlines and retries are scheduled, and its clock; default
   * asyncScheduler. A test passes one it can hold (no step starts until released) or a virtual one.
   */
  scheduler?: SchedulerLike;
  logError?: (message: string) => void;
  /**
   * Start the orchestrator at once (default true). A daemon passes false and calls `start()` once its port is
   * bound, so a server that cannot listen never touches a job run. Commands offered before `start()` wait (counted
   * against `queueCapacity`) and are taken by the first steps after it, in the order offered.
   */
  start?: boolean;
  /**
   * Where job runs run. `'supervised'` (what the daemon uses): each under a supervisor process, outliving the
   * platform (the next open re-attaches to them): the native launcher (a `/bin/sh` per run where no C compiler
   * built it). Default `'in-process'`:
   * children of this process, canceled when it closes. A function is called once the state is read (`state`: what the
   * log says, e.g. which runs are in flight and where: the daemon keeps the executor they were placed on).
   */
  executor?: 'supervised' | 'in-process' | ((workspaceRoot: string, state: BuildState) => Executor | Promise<Executor>);
  /** Cancel the running job runs when closing (and record them canceled) rather than leave them running. */
  cancelRunsOnClose?: boolean;
  /** As the log is replayed at open (after each batch): a long replay (an upgrade, a snapshot lost) is shown. */
  onStartProgress?: (progress: StartProgress) => void;
}

/** `.platform/snapshot.bin`: the state at an event id, so a start replays only the events after it. */
function snapshotPath(workspaceRoot: string): string {
  return join(workspaceRoot, '.platform', 'snapshot.bin');
}

/** `.platform/compacted.bin`: the state the events removed by `retention.events_keep` made (event-compaction.ts). */
export function compactionBasePath(workspaceRoot: string): string {
  return join(workspaceRoot, '.platform', 'compacted.bin');
}

export class Platform {
  private closing: Promise<void> | undefined;
  private readonly retention: JobLogRetention;
  /** The retention pass, a minute after open and then every hour (unref'd: it never keeps a process alive). */
  private readonly retentionTimers: NodeJS.Timeout[] = [];
  /** The gc pass under way: one at a time. */
  private gcRunning: Promise<unknown> = Promise.resolve();

  private constructor(
    readonly workspaceRoot: string,
    readonly log: EventLog,
    readonly store: StateStore,
    readonly queue: CommandQueue,
    readonly executor: Executor,
    private readonly graph: WorkspaceGraph,
    readonly orchestrator: Orchestrator,
    private readonly logError: (message: string) => void,
  ) {
    this.retention = new JobLogRetention(workspaceRoot);
    const pass = () => void this.gc().catch((err: unknown) => this.logError(`the retention pass failed: ${errorMessage(err)}`));
    this.retentionTimers.push(setTimeout(pass, 60_000).unref(), setInterval(pass, 3_600_000).unref());
    // An edit that breaks platform.json is seen by a step or a write, and said there; the log says it too, once, for
    // whoever looks at the daemon rather than at a command (schedules go on ticking on the last valid graph).
    this.graph.refusals$.subscribe((err) =>
      this.logError(`platform.json was edited but not taken into use, the last valid graph goes on: ${err.message}`),
    );
  }

  static async open(workspaceRoot: string, options: PlatformOptions = {}): Promise<Platform> {
    const problem = platformOptionsProblem(options);
    if (problem) throw new RangeError(problem);
    // A mistyped path, or a directory that is no workspace, would otherwise become a new, empty workspace, silently.
    const notWorkspace = workspaceDirProblem(workspaceRoot, options.graph !== undefined);
    if (notWorkspace) throw new Error(notWorkspace);
    const graph = await WorkspaceGraph.open(workspaceRoot, options.graph);
    const belDir = join(workspaceRoot, '.platform', 'bel');
    // A log that cannot be read stops the start, saying which and what to run: never a silent fresh start.
    const unreadable = (err: unknown) =>
      new Error(`the event log at ${belDir} cannot be read (${errorMessage(err)}); run \`platform doctor\` to see what is wrong and how to fix it`, { cause: err });
    let log: EventLog;
    try {
      log = await EventLog.open(belDir);
    } catch (err) {
      // Held by another process (a daemon already running) is not damage: its own words say so.
      throw heldByAnother(err) ? err : unreadable(err);
    }
    try {
      // A workspace with a history had a graph: started on none, every active want would fail for want of a job.
      if (graph.fileMissing && log.latestId() > 0) {
        throw new GraphError(
          'invalid_graph',
          `${graphFileMissingWithHistory(join(workspaceRoot, GRAPH_FILE), log.latestId())} ${RESTORE_GRAPH_FILE}`,
        );
      }
      const logError = options.logError ?? ((m: string) => process.stderr.write(`${m}\n`));
      const store = await StateStore.open(log, snapshotPath(workspaceRoot), {
        snapshotEveryEvents: options.snapshotEveryEvents ?? SNAPSHOT_EVERY_EVENTS,
        onSnapshotError: (err) => logError(`could not write the state snapshot (the next start replays more of the log): ${errorMessage(err)}`),
        compactionBasePath: compactionBasePath(workspaceRoot),
        ...(options.onStartProgress ? { onReplay: options.onStartProgress } : {}),
      }).catch((err: unknown) => {
        throw unreadable(err);
      });
      const queue = new CommandQueue(options.queueCapacity ?? 100);
      const choice = options.executor ?? 'in-process';
      const executor: Executor =
        typeof choice === 'function' ? await choice(workspaceRoot, store.current()) : choice === 'in-process' ? new InProcessExecutor(workspaceRoot) : new SupervisedExecutor({ workspaceRoot });
      const orchestrator = new Orchestrator({
        log,
        store,
        queue,
        executor,
        tasks: new GraphTaskSource(graph),
        workspaceRoot,
        cancelRunsOnShutdown: options.cancelRunsOnClose === true,
        ...(options.tickMs !== undefined ? { tickMs: options.tickMs } : {}),
        ...(options.scheduler ? { scheduler: options.scheduler } : {}),
        ...(options.logError ? { logError: options.logError } : {}),
      });
      if (options.start !== false) orchestrator.start();
      return new Platform(workspaceRoot, log, store, queue, executor, graph, orchestrator, logError);
    } catch (err) {
      await log.close();
      throw err;
    }
  }

  /**
   * Removes the logs of finished runs older than `retention.job_logs_days` (none configured: nothing), or with
   * `dryRun` says what it would remove. The daemon does this every hour by itself.
   */
  collectJobLogs(options: RetentionOptions = {}): Promise<RetentionReport> {
    const problem = retentionOptionsProblem(options, 'collectJobLogs');
    if (problem) return Promise.reject(new RangeError(problem));
    return this.retention.pass(this.state(), this.jobLogsDays(), options.now ?? Date.now(), options.dryRun === true);
  }

  /**
   * Keeps the newest `retention.events_keep` events of the log (none configured: all), the state of the ones before
   * living on in the compaction base; with `dryRun`, says how many it would remove.
   */
  compactEvents(options: Pick<RetentionOptions, 'dryRun'> = {}): Promise<EventCompactionReport> {
    const problem = retentionOptionsProblem(options, 'compactEvents');
    if (problem) return Promise.reject(new RangeError(problem));
    return this.oneAtATime(() => this.compactNow(options));
  }

  private compactNow(options: { dryRun?: boolean }): Promise<EventCompactionReport> {
    const paths = { base: compactionBasePath(this.workspaceRoot), snapshot: snapshotPath(this.workspaceRoot), runLogs: (id: string) => runLogDir(this.workspaceRoot, id) };
    return compactEvents(this.log, this.store, paths, this.graph.current().graph.retention?.events_keep, options.dryRun === true);
  }

  /**
   * What `retention` lets go, job logs and old events; the daemon runs it a minute after start and then hourly.
   * Options it does not take, or of the wrong type (`{dry_run: true}`, `{dryRun: 'yes'}`, null), reject with a
   * RangeError saying which, and nothing is removed: read as no dry run, they removed what was meant to be counted.
   */
  gc(options: RetentionOptions = {}): Promise<GcReport> {
    const problem = retentionOptionsProblem(options, 'gc');
    if (problem) return Promise.reject(new RangeError(problem));
    return this.oneAtATime(async () => {
      const logs = await this.collectJobLogs(options);
      return { ...logs, events: await this.compactNow(options) };
    });
  }

  /** Retention passes one at a time, none once closing (close waits for the one under way). */
  private oneAtATime<T>(pass: () => Promise<T>): Promise<T> {
    const run = this.gcRunning.then(() => {
      if (this.closing) throw new Error('the platform is closing; retention runs at the next start');
      return pass();
    });
    this.gcRunning = run.catch(() => undefined);
    return run;
  }

  /** `retention.job_logs_days` of the graph in use. */
  jobLogsDays(): number | undefined {
    return this.graph.current().graph.retention?.job_logs_days;
  }

  /** The job graph in use (platform.json as last read). */
  get resolver(): JobResolver {
    return this.graph.current();
  }

  /**
   * Re-reads platform.json if it changed. Returns its problem when the file on disk is invalid (the last good
   * graph stays in use).
   */
  refreshGraph(): Promise<GraphError | undefined> {
    return this.graph.refresh();
  }

  /** refreshGraph for a request: the requests of one turn of the event loop share one look at the file. */
  refreshGraphAfterTurn(): Promise<GraphError | undefined> {
    return this.graph.refreshAfterTurn();
  }

  /** The graph in use, now and after each reload of platform.json. */
  get graph$(): Observable<JobResolver> {
    return this.graph.changes$.pipe(startWith(this.graph.current()));
  }

  /** Starts the orchestrator loop (only needed after `open(..., { start: false })`). */
  start(): void {
    this.orchestrator.start();
  }

  /** Every event appended from now on, as it is written (before `state$` holds it, within its batch). */
  get events$(): Observable<BuildEvent> {
    return this.log.appended$;
  }

  /**
   * Events after `afterId` (0 = from the start), then live ones; `ready` paces the backlog (see tailEvents). An id
   * past the latest event (kept from a log since restored from a backup, or from another workspace) errors with a
   * RangeError, as the event stream's 400 does: followed, it waited silently, then skipped every event up to it.
   */
  eventsSince(afterId: number, ready?: () => Promise<void>): Observable<BuildEvent> {
    return defer(() => {
      // Asked after close(): its log is let go, and a read of it would complete with nothing, as if it had no events.
      if (this.closing !== undefined) {
        return throwError(() => new Error('eventsSince: this platform is closed (or closing); open the workspace again (Platform.open) to read its events'));
      }
      const latest = this.log.latestId();
      if (!Number.isSafeInteger(afterId) || afterId < 0) {
        return throwError(() => new RangeError(`eventsSince takes an event id, a whole number of at least 0 (0: from the first event), got ${String(afterId)}`));
      }
      if (afterId > latest) {
        return throwError(() => new RangeError(`eventsSince(${afterId}): that is past the latest event of this log (${latest}), no id it gave; resume with an id of at most ${latest}`));
      }
      return tailEvents(this.log, afterId, ready);
    });
  }

  /**
   * The build state, current value first, then after each batch of events (an orchestrator step writes its events
   * as one batch, and the state moves once, at its last: `events$` may run ahead of it within a batch), and once
   * after each snapshot: an equal state whose records are kept encoded as the snapshot wrote them (state-store.ts).
   * Never the same object twice in a row. To see the state an event brought: `state$.pipe(filter((s) =>
   * s.last_event_id >= event.event_id))`.
   */
  get state$(): Observable<BuildState> {
    return this.store.state$.pipe(distinctUntilChanged());
  }

  state(): BuildState {
    return this.store.current();
  }

  /**
   * Whether the executor makes each run's log directory as the run starts (Executor.keepsRunLogs): only then is a
   * finished run's missing directory logs that were removed, rather than logs its executor never wrote there.
   */
  executorKeepsRunLogs(): boolean {
    return this.executor.keepsRunLogs === true;
  }

  /** Where a job run's stdout or stderr log is (it may not exist yet). */
  logPath(job_run_id: string, stream: 'stdout' | 'stderr'): string {
    return join(runLogDir(this.workspaceRoot, job_run_id), stream === 'stdout' ? STDOUT_LOG : STDERR_LOG);
  }

  /** Emits the job run's record once it has ended (at once if it already has); never for an unknown id. */
  jobRunEnded$(job_run_id: string): Observable<JobRunRecord> {
    return this.store.state$.pipe(
      map((s) => s.job_runs.get(job_run_id)),
      filter((r): r is JobRunRecord => r !== undefined && !ACTIVE_JOB_RUN_STATUSES.has(r.status)),
      take(1),
    );
  }

  /** A job run's log lines: what is there, then live lines until the run ends. */
  logLines$(job_run_id: string, stream: 'stdout' | 'stderr'): Observable<string> {
    return followFile(this.logPath(job_run_id, stream), this.jobRunEnded$(job_run_id));
  }

  /**
   * The same from byte `start`, each line with the offset after it (to resume from), read only as fast as
   * `ready` lets (see followFileLines).
   */
  logFileLines$(job_run_id: string, stream: 'stdout' | 'stderr', options: FollowOptions = {}): Observable<FileLine> {
    return followFileLines(this.logPath(job_run_id, stream), this.jobRunEnded$(job_run_id), options);
  }

  /**
   * Refused (`ok: false`, status 400, why) when a field is out of range or a ref is malformed or no job produces
   * it, as the JSON API refuses it; rejects with QueueFullError when the command queue (capacity `queueCapacity`,
   * default 100) is full.
   */
  createWant(input: WantInput): Promise<CommandResult> {
    const refused = this.refused(input, 'want', MAX_PARTITIONS_PER_WANT);
    return refused ? Promise.resolve(refused) : this.queue.offer({ kind: 'create_want', request: wantWithDefaults(input) });
  }

  cancelWant(want_id: string, reason = 'canceled by request'): Promise<CommandResult> {
    return this.queue.offer({ kind: 'cancel_want', want_id, reason });
  }

  /** Taints built partitions (and with `downstream` what consumed them); the reply's `taint` lists every ref. */
  createTaint(input: TaintInput): Promise<CommandResult> {
    // Whether its refs were built is the planner's question (a taint of what was never built is its 400).
    const refused = this.refused(input, 'taint', MAX_PARTITIONS_PER_WANT, { producedOnly: false });
    return refused ? Promise.resolve(refused) : this.queue.offer({ kind: 'create_taint', request: taintWithDefaults(input) });
  }

  /**
   * A backfill: a want over a range that goes on past failures, under its own cap; the reply's `backfill` has its
   * id. Refused as `createWant` is.
   */
  createBackfill(input: BackfillInput): Promise<CommandResult> {
    const refused = this.refused(input, 'backfill', MAX_EXPANSION);
    return refused ? Promise.resolve(refused) : this.queue.offer({ kind: 'create_backfill', request: backfillWithDefaults(input) });
  }

  /**
   * Pauses the schedule of platform.json named `name`: it makes no wants until resumed, across restarts (the pause is
   * an event). The ticks that fell due before this call are still made (or skipped as missed, per `catchup`): only
   * those due after it are the pause's. The reply's `schedule.changed` is false when it was paused already (nothing
   * is recorded then); a name platform.json has no schedule of is refused with 404.
   */
  pauseSchedule(name: string, reason = ''): Promise<CommandResult> {
    return this.queue.offer({ kind: 'pause_schedule', name, reason, requested_at: this.orchestrator.now() });
  }

  /**
   * Resumes a paused schedule: the ticks that fell due while it was paused are recorded as skipped, not made; its
   * next tick is made as usual. `schedule.changed` is false when it was not paused.
   */
  resumeSchedule(name: string): Promise<CommandResult> {
    return this.queue.offer({ kind: 'resume_schedule', name });
  }

  /**
   * A write the JSON API would refuse for its shape is refused now, in its words: a field its body does not take or
   * of the wrong type (request-fields.ts); and a want or backfill naming refs no job of the graph in use makes (the
   * graph as last read: `refreshGraph()` first to see an edit of this instant). The rest (ranges, null for a field)
   * is checked where every write passes (the planner). Offered at once otherwise, in call order.
   */
  private refused(input: unknown, kind: WriteKind, max: number, { producedOnly = true } = {}): CommandResult | undefined {
    const what = ({ want: 'createWant', backfill: 'createBackfill', taint: 'createTaint' } as const)[kind];
    const partitions = (input as { partitions?: unknown } | null | undefined)?.partitions;
    const problem =
      requestObjectProblem(input, what) ??
      partitionsProblem(partitions, max) ??
      requestFieldsProblem(kind, input as object) ??
      (producedOnly ? unproducedProblem(this.resolver, partitions as string[]) : undefined);
    return problem === undefined ? undefined : { ok: false, status: 400, error: problem };
  }

  /**
   * The executor in use against the one configured now (`/api/status`'s `executor_config`), for a daemon that chose
   * its executor from its configuration; undefined (null in the status) for a platform given one.
   */
  executorConfig: (() => ExecutorConfigStatus) | undefined = undefined;

  /** Whether the executor can run what it is handed, as last seen (no round trip: `/api/status` carries it). */
  executorHealth(): ExecutorHealth {
    if (this.executor.health) {
      // An executor that says nothing of a launcher (one written before it was asked) starts no runs under ours.
      const health = this.executor.health();
      return { ...health, launcher: health.launcher ?? null };
    }
    const supervised = this.executor instanceof SupervisedExecutor ? this.executor : undefined;
    const kind = supervised ? 'local' : this.executor instanceof InProcessExecutor ? 'in-process' : 'custom';
    return { kind, where: 'this machine', reachable: true, workers: null, problem: null, launcher: supervised?.launcherKind ?? null };
  }

  /** Whether `close` was called: a server still running on it answers 503 from then on (not its log's errors). */
  get closed(): boolean {
    return this.closing !== undefined;
  }

  /**
   * Lets the current orchestrator step finish, records what came in, closes the log. Running job runs go on under
   * their supervisors (the next open re-attaches), unless `cancelRuns` (or the `cancelRunsOnClose` option). Once
   * called, later calls return the same promise; a later `cancelRuns` is still taken if the close has not yet left
   * the runs to their supervisors (said on the error log when it had).
   */
  close(options: { cancelRuns?: boolean } = {}): Promise<void> {
    if (this.closing && options.cancelRuns && !this.orchestrator.askToCancelRuns()) {
      this.logError('asked to cancel the running job runs too late: this shutdown had already left them running under their supervisors (the next start follows them; cancel their wants then)');
    }
    this.closing ??= (async () => {
      for (const t of this.retentionTimers) clearTimeout(t);
      // A compaction under way finishes first: it holds the log and writes the base.
      await this.gcRunning;
      try {
        await this.orchestrator.shutdown(options);
        // The next start replays only what comes after this; a failure here costs that start time, nothing else.
        await this.store.saveSnapshot(snapshotPath(this.workspaceRoot), undefined, { last: true }).catch((err: unknown) => {
          this.logError(`could not write the state snapshot: ${errorMessage(err)}`);
        });
      } finally {
        // Whatever failed above, commands are refused and the log is let go: held, the workspace could not be opened
        // again in this process.
        this.queue.close();
        this.store.close();
        this.graph.close();
        await this.log.close();
      }
    })();
    return this.closing;
  }
}

/** LevelDB's lock is taken: another process has the log open. */
function heldByAnother(err: unknown): boolean {
  for (let e = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if ((e as { code?: unknown }).code === 'LEVEL_LOCKED' || /\bLOCK\b/.test(e.message)) return true;
  }
  return false;
}
