/**
 * The single writer. Everything that can make it act is one typed stream, `input$` (orchestrator-input.ts):
 * commands, job-run news, configs that arrived, deadlines falling due, graph edits, the tick and the loop's own
 * follow-ups. `stepInBatches` turns bursts into one batch per step and runs steps one at a time; a step plans
 * (pure, plan-step.ts), appends its events in one synced batch, only then replies, and last starts and kills
 * processes. A step that fails answers its commands with the fault and is tried again, as an operator, with the
 * rest of its batch: no job-run news is lost.
 */
import type { ScheduleDefinition } from '../graph/schedule-definition.js';
import {
  EMPTY,
  ReplaySubject,
  type SchedulerLike,
  Subject,
  asapScheduler,
  from,
  interval,
  map,
  merge,
  of,
  takeUntil,
  type Observable,
} from 'rxjs';
import type { EventLog } from '../events/event-log.js';
import type { EventPayload } from '../events/build-event.js';
import type { JobOutcome } from '../executor/job-launch.js';
import { launchForRun } from '../executor/launch-for-run.js';
import { LOST_RUN_REASON } from '../executor/lost-runs.js';
import { someNamed } from '../some-named.js';
import { LOCAL_WORKER, type Executor } from '../executor/executor-port.js';
import { belongsToRun, killProcesses } from '../executor/job-process-identity.js';
import { scanOnce } from '../executor/job-run-process-scan.js';
import { errorMessage } from '../errors.js';
import type { StateStore } from '../state/state-store.js';
import { activeWantsOn, type JobRunRecord } from '../state/build-state.js';
import { addCandidate, addWait, takeWaiting, touchedCandidates, type Waiters } from './candidates.js';
import { SWEEP_START, startPass, sweepSlice, type SweepCursor } from './active-sweep.js';
import { WakeList } from './wake-list.js';
import type { CommandQueue, PendingCommand } from './command-queue.js';
import { dueTimes } from './due-times.js';
import { addResolvedRefs, collectBatch, retryBatch, type OrchestratorInput, type StepBatch } from './orchestrator-input.js';
import { planStep, refsToResolve, type StepPlan } from './plan-step.js';
import { ResolutionCache } from './resolution-cache.js';
import { retryingStep } from './retrying-step.js';
import { UNCAPPED_WINDOW } from '../state/want-window.js';
import { stepInBatches } from './step-in-batches.js';
import { newsWaitMs } from './news-wait.js';
import type { TaskSource } from './task-source.js';
import { nextTurnScheduler } from '../system/next-turn-scheduler.js';

export interface OrchestratorOptions {
  log: EventLog;
  store: StateStore;
  queue: CommandQueue;
  executor: Executor;
  /** At shutdown, cancel the running runs (and record them canceled) rather than leave them for the next daemon. */
  cancelRunsOnShutdown?: boolean;
  tasks: TaskSource;
  workspaceRoot: string;
  tickMs?: number;
  /**
   * Where steps, the tick, deadlines and retries are scheduled, and the clock the planner reads (`now()`).
   * Default: asyncScheduler. Tests pass a scheduler they can hold or a virtual one.
   */
  scheduler?: SchedulerLike;
  logError?: (message: string) => void;
}

/** How soon a step that failed is tried again (not at once: a fault that persists must not spin the loop). */
export const STEP_RETRY_MS = 250;

/**
 * Why runs canceled at a shutdown ended: said of a daemon's stop and of an embedding app's close alike (the
 * orchestrator cannot tell them apart; "the server shut down" read wrong to an app that had closed its platform).
 */
const SHUTDOWN_REASON = "the platform shut down (platform stop, or the embedding app's close())";

export class Orchestrator {
  private readonly scheduler: SchedulerLike;
  /**
   * When the loop started: a schedule's tick before it fell due while no daemon ran (missed, what `catchup` counts);
   * one after it, while this one ran.
   */
  private upSince = Number.NEGATIVE_INFINITY;
  /**
   * Since when each schedule of the graph in use has been served by this orchestrator (its name, cron and zone as
   * they are now): one removed from platform.json and added back counts from its return, as a daemon's start does.
   */
  private servedSince = new Map<string, number>();
  private servedPolicy: unknown;
  /** Where steps start: the next turn of the loop, or the scheduler a test gives. */
  private readonly stepScheduler: SchedulerLike;
  private readonly resolutions: ResolutionCache;
  /** The loop's own inputs: what a step's events touched, processes it started, requests for a full scan. */
  private readonly followUps$ = new Subject<OrchestratorInput>();
  private readonly deadlines$ = new Subject<number>();
  private readonly stepSubject = new Subject<{ seconds: number; events: number }>();
  /** Each step that ran to its end: how long it took (planning, the append, replies and launches) and its events. */
  readonly steps$: Observable<{ seconds: number; events: number }> = this.stepSubject.asObservable();
  /** Replays, so a step that fails after the stop was asked for sees it and does not wait to retry. */
  private readonly stop$ = new ReplaySubject<void>(1);
  /** Input ref -> wants waiting on it; an entry is taken when its input changes (see candidates.ts). */
  private readonly waiters: Waiters = new Map();
  /** Wants to look at again when a retry, a ttl or a held batch falls due. */
  private readonly wakes = new WakeList();
  /** Ready refs of batched jobs held back for a fuller batch: every step looks at them with what is new. */
  private held: Array<[string, string]> = [];
  /** Where the sweep over active wants stands (active-sweep.ts). */
  private sweep: SweepCursor = SWEEP_START;
  /** Runs given to an executor whose start (or end) no step has recorded yet: launched, for the planner. */
  private readonly handedOver = new Set<string>();
  private stopping = false;
  /** Runs in flight on another executor than this one, left as they are at the start (Executor.canFollow). */
  private readonly notFollowed = new Set<string>();
  /** Asked to cancel the running job runs at shutdown, by any call so far. */
  private cancelAsked = false;
  /** What the shutdown did with the running job runs, once it decided. */
  private runsDecided: 'open' | 'cancel' | 'leave' = 'open';
  /** Resolves once the loop has ended, with what no step recorded (for the final step). */
  private ended: Promise<StepBatch> | undefined;
  private readonly logError: (message: string) => void;

  constructor(private readonly opts: OrchestratorOptions) {
    // asap: work asked for now runs without a 1 ms timer hop; timers with a delay run as async ones. Steps start on
    // the loop's next turn (next-turn-scheduler.ts), so requests are let in between them.
    this.scheduler = opts.scheduler ?? asapScheduler;
    this.stepScheduler = opts.scheduler ?? nextTurnScheduler;
    this.resolutions = new ResolutionCache(opts.tasks, this.scheduler);
    this.logError = opts.logError ?? ((m) => process.stderr.write(`${m}\n`));
  }

  /** The loop's clock (epoch ms): the time its steps plan at. */
  now(): number {
    return this.scheduler.now();
  }

  start(): void {
    if (this.ended) return;
    this.upSince = this.scheduler.now();
    const { queue, executor, tasks, store } = this.opts;
    const state = store.current();
    const { adopted, lost } = this.reattach(state);
    const outcome = (o: JobOutcome): OrchestratorInput => ({ kind: 'outcome', outcome: o });
    const input$: Observable<OrchestratorInput> = merge(
      of<OrchestratorInput>({ kind: 'scan' }),
      // Before any outcome of theirs: a step records a run's start before its end.
      from(adopted),
      from(lost).pipe(map(outcome)),
      queue.command$.pipe(map((pending): OrchestratorInput => ({ kind: 'command', pending }))),
      executor.outcomes$.pipe(map(outcome)),
      executor.started$?.pipe(map((s): OrchestratorInput => ({ kind: 'started', ...s }))) ?? EMPTY,
      executor.placements$?.pipe(map((p): OrchestratorInput => ({ kind: 'placed', ...p }))) ?? EMPTY,
      executor.recalled$?.pipe(map((job_run_id): OrchestratorInput => ({ kind: 'recalled', job_run_id }))) ?? EMPTY,
      this.resolutions.arrivals$.pipe(map((refs): OrchestratorInput => ({ kind: 'configs', refs }))),
      this.deadlines$.pipe(
        dueTimes(this.scheduler),
        map((at): OrchestratorInput => ({ kind: 'deadline', at })),
      ),
      tasks.changes$?.pipe(map((): OrchestratorInput => ({ kind: 'graph' }))) ?? EMPTY,
      interval(this.opts.tickMs ?? 500, this.scheduler).pipe(map((): OrchestratorInput => ({ kind: 'tick' }))),
      this.followUps$,
    ).pipe(takeUntil(this.stop$));

    this.ended = new Promise<StepBatch>((resolve) => {
      const unrecorded: OrchestratorInput[] = [];
      const rests: StepBatch[] = [];
      input$
        .pipe(
          stepInBatches((inputs) => this.step(inputs), this.stepScheduler, {
            leftover: (inputs) => unrecorded.push(...inputs),
            delayFor: (inputs) => newsWaitMs(inputs, () => executor.waitingToStart?.() ?? 0),
          }),
        )
        .subscribe({
          next: (rest) => rests.push(rest),
          complete: () => resolve(mergeRests([collectBatch(unrecorded), ...rests])),
        });
    });
  }

  /**
   * What an earlier daemon left: each run the log shows running is looked for (still going: followed to its end;
   * ended meanwhile: its real outcome; neither: lost). A run still queued may have been started by a daemon killed
   * before it recorded the start: one the executor finds started is its start (and followed, not run twice); what is
   * left of the others is killed and they start again as usual.
   */
  private reattach(state: ReturnType<StateStore['current']>): { adopted: OrchestratorInput[]; lost: JobOutcome[] } {
    const { executor, workspaceRoot } = this.opts;
    const leftovers = new Set([...state.job_runs_by_status.queued].map(([, id]) => id));
    // One pass over /proc for the restart, made when first needed: its cost is every process on the machine.
    const processes = scanOnce(workspaceRoot, new Set([...leftovers, ...[...state.job_runs_by_status.running].map(([, id]) => id)]));
    const adopted: OrchestratorInput[] = [];
    const found = executor.adoptStarted?.(leftovers, (id) => launchForRun(state.job_runs.get(id)!, workspaceRoot), processes);
    for (const [job_run_id, { pid, started_at }] of found ?? []) {
      leftovers.delete(job_run_id);
      // Launched: no step starts it again before its start is recorded.
      this.handedOver.add(job_run_id);
      adopted.push({ kind: 'started', job_run_id, pid, worker: LOCAL_WORKER, started_at });
    }
    const lost: JobOutcome[] = [];
    const elsewhere: string[] = [];
    for (const [, id] of state.job_runs_by_status.running) {
      const run = state.job_runs.get(id)!;
      // Placed on another executor (a Redis worker's run, and this daemon's runs are local, or the other way): not
      // this one's to follow, to declare lost or to kill. It stays running in the log, and is not run again.
      if (executor.canFollow && !executor.canFollow(run.worker)) {
        elsewhere.push(`${id} (on ${run.worker})`);
        this.notFollowed.add(id);
        continue;
      }
      const found = executor.reattach(launchForRun(run, workspaceRoot), run.pid, run.started_at ?? 0);
      if (found !== 'lost') continue;
      lost.push({ job_run_id: id, status: 'canceled', reason: LOST_RUN_REASON });
      leftovers.add(id);
    }
    if (elsewhere.length > 0) {
      const n = elsewhere.length;
      this.logError(
        `${n} job run${n === 1 ? '' : 's'} in flight ${n === 1 ? 'was' : 'were'} placed on another executor than this daemon's, which cannot follow ${n === 1 ? 'it' : 'them'}: ` +
          `${someNamed(elsewhere)}. Left as ${n === 1 ? 'it is' : 'they are'}, running in the log, neither followed nor run again; ` +
          `start the daemon with the executor ${n === 1 ? 'it was' : 'they were'} placed on to follow ${n === 1 ? 'it' : 'them'} to the end`,
      );
    }
    // Whatever is left of runs that will start again (queued) or were lost must not run beside their next attempt.
    if (leftovers.size > 0) {
      // Looked at again: the pass may be seconds old by now (the re-attaches read each run's files), and a pid that
      // ended since may be another process's.
      for (const [id, pids] of processes()) if (leftovers.has(id)) killProcesses(pids.filter((pid) => belongsToRun(pid, workspaceRoot, id)));
    }
    return { adopted, lost };
  }

  /**
   * A shutdown under way cancels the running job runs after all (a second `platform stop --cancel-runs`, a second
   * Ctrl-C), if it has not yet left them to their supervisors; false when it already had.
   */
  askToCancelRuns(): boolean {
    this.cancelAsked = true;
    return this.runsDecided !== 'leave';
  }

  /** Starts a pass over every active want (a slice a step). */
  scanAll(): void {
    this.followUps$.next({ kind: 'scan' });
  }

  /**
   * Stops the loop and records what came in. Running job runs are left to their supervisors for the next daemon to
   * re-attach, unless `cancelRuns`: then they are killed and recorded canceled (a restarted server rebuilds them).
   */
  async shutdown(options: { cancelRuns?: boolean } = {}): Promise<void> {
    if (options.cancelRuns) this.cancelAsked = true;
    // Never started: it recovered nothing and ran nothing, so it has nothing to record (and must not mark the
    // previous server's lost runs canceled without having killed them).
    if (!this.ended) return;
    const { executor, store, log, tasks } = this.opts;
    this.stopping = true;
    this.stop$.next();
    // From here on no step takes news: the runs that end while the executor shuts down are recorded below.
    const late: JobOutcome[] = [];
    const lateStarts: StepBatch['started'] = [];
    const lateNews = executor.outcomes$.subscribe((o) => late.push(o));
    const lateStartNews = executor.started$?.subscribe((s) => lateStarts.push(s));
    const rest = await this.ended;
    // Read only now: a shutdown asked again meanwhile (`askToCancelRuns`) may have asked for the runs' end.
    const cancelRuns = this.cancelAsked || (options.cancelRuns ?? this.opts.cancelRunsOnShutdown === true);
    this.runsDecided = cancelRuns ? 'cancel' : 'leave';
    await executor.shutdown(SHUTDOWN_REASON, { cancelRuns });
    lateNews.unsubscribe();
    lateStartNews?.unsubscribe();
    rest.started.push(...lateStarts);
    const outcomes = [...rest.outcomes, ...late];
    const state = store.current();
    const ended = new Set(outcomes.map((o) => o.job_run_id));
    // Runs left running stay `running` in the log for the next daemon to re-attach; canceled ones must not.
    if (cancelRuns) {
      for (const [, id] of state.job_runs_by_status.running) {
        // One on another executor was never this daemon's to cancel: recorded canceled, it would be built again
        // while it still runs there.
        // Nor one whose cancel did not reach its worker (a Redis that does not answer): it runs on there.
        if (!ended.has(id) && !this.notFollowed.has(id) && executor.cancelUndelivered?.(id) !== true) outcomes.push({ job_run_id: id, status: 'canceled', reason: SHUTDOWN_REASON });
      }
    }
    const now = this.scheduler.now();
    const plan = planStep({
      state,
      now,
      commands: [],
      started: rest.started,
      placed: rest.placed,
      outcomes,
      launched: new Set([...this.handedOver, ...rest.started.map((s) => s.job_run_id)]),
      tasks: new Map(),
      policy: tasks.policy,
      final: true,
    });
    if (plan.events.length === 0) return;
    // As in a step: the store takes the planned state rather than fold the events again (the end of a run that 100,000
    // wants wait on is ~1 s of reduce at 100,000 waiting wants, paid twice before).
    store.expectFold(state, plan.state, plan.events);
    try {
      await log.append(plan.events, now);
    } finally {
      store.expectFold();
    }
  }

  /** One step over a batch of inputs; emits what it could not record if the loop stopped while it retried. */
  private step(inputs: OrchestratorInput[]): Observable<StepBatch> {
    return retryingStep((batch: StepBatch) => this.runStep(batch), {
      delayMs: STEP_RETRY_MS,
      scheduler: this.scheduler,
      stop$: this.stop$,
      onFailure: (batch, err) => {
        this.logError(`orchestrator: step failed, continuing: ${err instanceof Error ? err.stack : errorMessage(err)}`);
        // Nothing of this step was recorded: callers hear of the fault; the job-run news is tried again.
        const error = err instanceof Error ? err : new Error(String(err));
        for (const p of batch.commands) p.reject(error);
        return retryBatch(batch);
      },
    })(collectBatch(inputs));
  }

  /**
   * A step schedules only what can have something to do: the wants that recent events touched (and those waiting on
   * what changed), the wants whose retry or ttl fell due, and a slice of the sweep (a tick's, or a pass's). So no
   * step costs the number of active wants; what a narrow step missed is looked at by the sweep.
   */
  private async runStep(batch: StepBatch): Promise<void> {
    const { queue, store, log, tasks } = this.opts;
    const started = performance.now();
    for (const id of batch.recalled) this.handedOver.delete(id);
    const pending = batch.commands.filter((p) => queue.take(p));
    const graphChanged = (await tasks.refresh?.()) || batch.graphChanged;
    if (graphChanged) this.resolutions.invalidate();
    const state = store.current();
    const candidates = batch.candidates;
    addResolvedRefs(candidates, batch.resolvedRefs, (ref) => activeWantsOn(state, ref));
    // What waits on the outputs of runs that just ended is scheduled in this step: its configs must be at hand now,
    // or it would be queued a step late, after a run of lower priority took the free slot.
    for (const o of batch.outcomes) takeWaiting(candidates, this.waiters, state.job_runs.get(o.job_run_id)?.config.outputs ?? []);
    this.wakes.takeDue(this.scheduler.now(), candidates);
    for (const [wantId, ref] of this.held) addCandidate(candidates, wantId, ref);
    if (graphChanged || batch.sweep === 'pass') this.sweep = startPass();
    if (this.sweep.passing || batch.sweep === 'slice') {
      const slice = sweepSlice(state, this.sweep);
      for (const id of slice.wantIds) addCandidate(candidates, id, null);
      this.sweep = slice.cursor;
      if (this.sweep.passing) this.followUps$.next({ kind: 'sweep' });
    }
    // A new want's first partitions are resolved in the step that creates it (only the first window of a large one:
    // the rest are resolved as they are released).
    const newRefs = pending.flatMap((p) =>
      p.command.kind === 'create_want' || p.command.kind === 'create_backfill' ? p.command.request.partitions.slice(0, UNCAPPED_WINDOW) : [],
    );
    const asked = refsToResolve(state, newRefs, candidates);
    const resolved = await this.resolutions.lookup(asked);
    const now = this.scheduler.now();
    const base = store.current();
    if (tasks.policy !== this.servedPolicy) {
      this.servedPolicy = tasks.policy;
      this.servedSince = servedSinceNow(this.servedSince, tasks.policy.schedules ?? [], now);
    }
    const plan = planStep({
      candidates,
      housekeeping: batch.housekeeping || graphChanged,
      upSince: this.upSince,
      schedulesUpSince: this.servedSince,
      waiters: this.waiters,
      state: base,
      now,
      commands: pending.map((p) => p.command),
      started: batch.started,
      placed: batch.placed,
      outcomes: batch.outcomes,
      launched: new Set([...this.handedOver, ...batch.started.map((s) => s.job_run_id)]),
      holdBeyond: this.opts.executor.holdBeyond?.(tasks.policy.max_concurrent_job_runs) ?? 0,
      tasks: resolved,
      knownTasks: (ref) => this.resolutions.known(ref),
      policy: tasks.policy,
    });
    // A run an earlier step queued is in the log already (a queued run is always synced), so it may start while
    // this step's events are written: the slot a run's end freed is not left idle for the append's round trip.
    // A run this step queues starts only once its queueing is durable, below. Nor does any start early in a step
    // that kills: the slot it takes may be one the kill frees, and a failed append leaves the killed run going.
    const early = plan.events.length > 0 && plan.kill.length === 0 && !this.stopping ? plan.launch.filter((run) => base.job_runs.get(run.job_run_id)?.status === 'queued') : [];
    // Before any start: what the executor holds and should not start next goes back before what passes it comes.
    for (const id of plan.recall) this.opts.executor.recall?.(id);
    this.startEarly(early);
    if (plan.events.length > 0) {
      store.expectFold(base, plan.state, plan.events);
      try {
        await log.append(plan.events, now, { sync: !plan.events.every(mayWaitForDisk) });
      } finally {
        store.expectFold();
      }
    }
    for (const s of batch.started) this.handedOver.delete(s.job_run_id);
    for (const o of batch.outcomes) this.handedOver.delete(o.job_run_id);
    // Durable from here on: a fault below must not retry the step (its events are written, its runs may be
    // started); it is logged, and a pass over the active wants picks up whatever it left undone.
    try {
      this.afterAppend(plan, pending, asked, new Set(early));
    } catch (err) {
      this.logError(`orchestrator: after a step was recorded: ${err instanceof Error ? err.stack : errorMessage(err)}`);
      this.followUps$.next({ kind: 'scan' });
    }
    this.stepSubject.next({ seconds: (performance.now() - started) / 1000, events: plan.events.length });
  }

  /** Replies, follow-ups and processes of a step whose events are durable. */
  private afterAppend(plan: StepPlan, pending: PendingCommand[], asked: readonly string[], started: ReadonlySet<JobRunRecord>): void {
    const { executor } = this.opts;
    for (const [input, wantId, ref] of plan.waits) addWait(this.waiters, input, wantId, ref);
    pending.forEach((p, i) => {
      const reply = plan.replies[i]!;
      p.resolve(reply.ok ? { ...reply, state: plan.state } : reply);
    });
    const touchedRefs = new Set<string>();
    // What this step's scheduling already looked at is not looked at again: only what its own events touched, and
    // what it could not schedule for want of a config nobody asked for yet (one asked for comes with its arrival).
    const touched = touchedCandidates(plan.state, plan.events.slice(plan.touchedFrom), this.waiters, touchedRefs);
    if (plan.unresolved.length > 0) {
      const askedFor = new Set(asked);
      for (const [wantId, ref] of plan.unresolved) if (!askedFor.has(ref)) addCandidate(touched, wantId, ref);
    }
    for (const ref of touchedRefs) this.waiters.delete(ref);
    if (touched.size > 0) this.followUps$.next({ kind: 'touched', candidates: touched });
    for (const at of plan.deadlines) this.deadlines$.next(at);
    this.wakes.add(plan.wakes);
    // Every held ref was a candidate of this step: what it held back is all that is held now.
    this.held = plan.held;
    for (const [at] of plan.wakes) this.deadlines$.next(at);
    // In any order: an executor whose kill can free a slot for a held run orders its own (supervised-executor.ts).
    for (const id of plan.kill) executor.cancel(id, 'want canceled');
    // A stop asked for while this step ran: the runs stay queued for the next server rather than start only to be
    // killed by this one's shutdown.
    if (this.stopping) return;
    this.startRuns(plan.launch.filter((run) => !started.has(run)));
  }

  /**
   * Starts runs before the step's append. A fault here must not fail the step: runs before it may have started, and
   * the retry would not know. It is logged as one after the append is, and whatever did not start is still queued:
   * a later step starts it.
   */
  private startEarly(runs: readonly JobRunRecord[]): void {
    try {
      this.startRuns(runs);
    } catch (err) {
      this.logError(`orchestrator: starting runs queued earlier: ${err instanceof Error ? err.stack : errorMessage(err)}`);
      this.followUps$.next({ kind: 'scan' });
    }
  }

  private startRuns(runs: readonly JobRunRecord[]): void {
    const { executor, workspaceRoot } = this.opts;
    for (const run of runs) {
      const handle = executor.start(launchForRun(run, workspaceRoot));
      // Launched until a step records its start (or end), with or without a pid now: a step retried after it started
      // a run early must not start it again.
      this.handedOver.add(run.job_run_id);
      if (handle) this.followUps$.next({ kind: 'started', job_run_id: run.job_run_id, ...handle });
    }
  }
}

/** The unrecorded parts of several batches as one (for the final step). */
function mergeRests(rests: StepBatch[]): StepBatch {
  const [first, ...others] = rests;
  const out = first!;
  for (const r of others) {
    out.started.push(...r.started);
    out.placed.push(...r.placed);
    out.outcomes.push(...r.outcomes);
    out.recalled.push(...r.recalled);
  }
  return out;
}

/**
 * Events a power cut may take back without harm, so a step of only these is not fsynced (it reaches the disk with
 * the next synced step): the start of a run on this machine. A run whose start is lost is still queued in the log,
 * and a restarted daemon takes its job as the run's if it runs or left its status (Executor.adoptStarted), else
 * starts it again (a machine that lost power lost the process too). A crash of the daemon alone loses nothing: the write is in the kernel already. A run on another machine
 * (a queue's worker) is not: it goes on through the daemon's power cut, so its start and placement are synced.
 */
function mayWaitForDisk(e: EventPayload): boolean {
  return e.type === 'job_run_started' && e.job_run_started.worker === LOCAL_WORKER;
}

/** The schedules of a graph newly in use, each since when it is served: kept for those it had, `now` for the others. */
function servedSinceNow(before: ReadonlyMap<string, number>, schedules: readonly ScheduleDefinition[], now: number): Map<string, number> {
  const next = new Map<string, number>();
  for (const s of schedules) {
    const key = `${s.name}\0${s.cron}\0${s.timezone}`;
    next.set(key, before.get(key) ?? now);
  }
  return next;
}
