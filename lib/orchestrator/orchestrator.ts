/**
 * The single writer: `merge(tick$, signal$)` through `concatMap(step)`. A step drains the command queue,
 * takes the job-run news gathered since the last step, plans (pure, plan-step.ts), appends the step's events
 * in one synced batch, only then replies, and last starts and kills processes.
 */
import { join } from 'node:path';
import {
  EMPTY,
  Subject,
  type Subscription,
  catchError,
  concatMap,
  defer,
  interval,
  map,
  merge,
  takeUntil,
} from 'rxjs';
import type { EventLog } from '../events/event-log.js';
import type { JobLaunch, JobOutcome } from '../executor/job-launch.js';
import { findJobRunProcesses, killProcesses } from '../executor/job-process-identity.js';
import type { ProcessExecutor } from '../executor/process-executor.js';
import type { JobRunRecord } from '../state/build-state.js';
import type { StateStore } from '../state/state-store.js';
import type { CommandQueue } from './command-queue.js';
import { addCandidate, addWait, mergeCandidates, touchedCandidates, type Candidates, type Waiters } from './candidates.js';
import { planStep, refsToResolve } from './plan-step.js';
import { ResolutionCache } from './resolution-cache.js';
import type { TaskSource } from './task-source.js';

export interface OrchestratorOptions {
  log: EventLog;
  store: StateStore;
  queue: CommandQueue;
  executor: ProcessExecutor;
  tasks: TaskSource;
  workspaceRoot: string;
  tickMs?: number;
  now?: () => number;
  logError?: (message: string) => void;
}

type Trigger = 'tick' | 'signal';

/** How soon a step that failed is tried again. */
const STEP_RETRY_MS = 250;

export class Orchestrator {
  private readonly started: Array<{ job_run_id: string; pid: number }> = [];
  private readonly outcomes: JobOutcome[] = [];
  private readonly launched = new Set<string>();
  private readonly resolutions: ResolutionCache;
  /** Wants to schedule in the next narrow step, and input ref -> wants waiting on it (see step()). */
  private touched: Candidates = new Map();
  private waiters: Waiters = new Map();
  private needFullScan = true;
  private readonly timers = new Map<number, NodeJS.Timeout>();
  private readonly wake = new Subject<void>();
  private readonly stop$ = new Subject<void>();
  private subscription: Subscription | undefined;
  private outcomeSubscription: Subscription | undefined;
  private stopping = false;
  private dirty = true;
  private inStep: Promise<void> = Promise.resolve();
  private gate: Promise<void> = Promise.resolve();
  private readonly now: () => number;
  private readonly logError: (message: string) => void;

  constructor(private readonly opts: OrchestratorOptions) {
    this.now = opts.now ?? Date.now;
    // Configs that arrive make the wants on those refs worth another look.
    this.resolutions = new ResolutionCache(opts.tasks, (refs) => {
      const state = opts.store.current();
      for (const ref of refs) for (const id of state.active_wants_by_ref.get(ref) ?? []) addCandidate(this.touched, id, ref);
      this.wake.next();
    });
    this.logError = opts.logError ?? ((m) => process.stderr.write(`${m}\n`));
  }

  start(): void {
    if (this.subscription) return;
    const { queue, executor } = this.opts;
    this.recoverLostRuns();
    this.outcomeSubscription = executor.outcomes$.subscribe((o) => {
      this.outcomes.push(o);
      this.wake.next();
    });
    const tick$ = interval(this.opts.tickMs ?? 500).pipe(map((): Trigger => 'tick'));
    const signal$ = merge(queue.signal$, this.wake).pipe(
      map((): Trigger => {
        this.dirty = true;
        return 'signal';
      }),
    );
    this.subscription = merge(tick$, signal$)
      .pipe(
        takeUntil(this.stop$),
        concatMap((trigger) =>
          // A burst of signals queues many triggers; the first step takes all the work, and the rest, checked
          // when their turn comes, find nothing new and are skipped.
          defer(() => (trigger === 'tick' || this.dirty ? this.runStep(trigger === 'tick') : Promise.resolve())).pipe(
            catchError((err: unknown) => {
              this.logError(`orchestrator: step failed, continuing: ${err instanceof Error ? err.stack : String(err)}`);
              return EMPTY;
            }),
          ),
        ),
      )
      .subscribe();
    this.wake.next();
  }

  /**
   * Runs a server that is gone left `running` cannot be supervised (no exit code will reach us): their
   * processes are killed and the runs recorded canceled ("lost"), so active wants rebuild them without spending
   * the job's retries on the server's fault. Runs left `queued` may have been spawned without their start
   * being recorded: their processes are killed too, and the runs are started again as usual.
   */
  private recoverLostRuns(): void {
    const state = this.opts.store.current();
    const running = [...state.job_runs_by_status.running].map(([, id]) => id);
    const queued = [...state.job_runs_by_status.queued].map(([, id]) => id);
    for (const pids of findJobRunProcesses(this.opts.workspaceRoot, new Set([...running, ...queued])).values()) killProcesses(pids);
    for (const id of running) {
      this.outcomes.push({ job_run_id: id, status: 'canceled', reason: 'lost: the server stopped while it ran' });
    }
  }

  /** Runs a step that looks at every active want now, as a tick does. */
  scanAll(): void {
    this.needFullScan = true;
    this.wake.next();
  }

  /** Test and embedding hook: holds the loop before its next step until the returned function is called. */
  hold(): () => void {
    let release!: () => void;
    this.gate = new Promise<void>((resolve) => (release = resolve));
    return () => release();
  }

  /** No new step starts; resolves once the step in progress has finished. */
  async stop(): Promise<void> {
    this.stopping = true;
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    this.stop$.next();
    await this.inStep;
    this.subscription?.unsubscribe();
  }

  /**
   * Stops the loop, kills the running job runs and records how every run ended in one last batch, so a
   * restarted server knows to rebuild them.
   */
  async shutdown(): Promise<void> {
    // Never started: it recovered nothing and ran nothing, so it has nothing to record (and must not mark the
    // previous server's lost runs canceled without having killed them).
    if (!this.subscription) return;
    await this.stop();
    await this.opts.executor.shutdown('the server shut down');
    const { store, log, tasks } = this.opts;
    const state = store.current();
    const outcomes = this.outcomes.splice(0);
    const ended = new Set(outcomes.map((o) => o.job_run_id));
    // A run that was handed to the executor but never reported back still must not stay `running`.
    for (const [, id] of state.job_runs_by_status.running) {
      if (!ended.has(id)) outcomes.push({ job_run_id: id, status: 'canceled', reason: 'the server shut down' });
    }
    const now = this.now();
    const plan = planStep({
      state,
      now,
      commands: [],
      started: this.started.splice(0),
      outcomes,
      launched: this.launched,
      tasks: new Map(),
      policy: tasks.policy,
      final: true,
    });
    if (plan.events.length > 0) await log.append(plan.events, now);
    this.outcomeSubscription?.unsubscribe();
  }

  private runStep(fullScan: boolean): Promise<void> {
    const step = this.step(fullScan);
    this.inStep = step.catch(() => undefined);
    return step;
  }

  /**
   * One step. Between ticks a step schedules only the wants that recent events touched (and those waiting on
   * what changed); a tick schedules every active want, so anything a narrow step missed waits a tick at most.
   */
  private async step(tick: boolean): Promise<void> {
    await this.gate;
    if (this.stopping) return;
    this.dirty = false;
    const { queue, store, log, tasks } = this.opts;
    const pending = queue.drain();
    const started = this.started.splice(0);
    const outcomes = this.outcomes.splice(0);
    try {
      if (await tasks.refresh?.()) {
        this.resolutions.invalidate();
        this.needFullScan = true;
      }
      const state = store.current();
      const newRefs = pending.flatMap((p) => (p.command.kind === 'create_want' ? p.command.request.partitions : []));
      const fullScan = tick || this.needFullScan;
      this.needFullScan = false;
      const candidates = fullScan ? undefined : this.touched;
      this.touched = new Map();
      const resolved = await this.resolutions.lookup(refsToResolve(state, newRefs, candidates));
      const now = this.now();
      const plan = planStep({
        ...(candidates ? { candidates } : {}),
        waiters: this.waiters,
        state: store.current(),
        now,
        commands: pending.map((p) => p.command),
        started,
        outcomes,
        launched: this.launched,
        tasks: resolved,
        policy: tasks.policy,
      });
      if (plan.events.length > 0) await log.append(plan.events, now);
      if (fullScan) this.waiters = new Map();
      for (const [input, wantId, ref] of plan.waits) addWait(this.waiters, input, wantId, ref);
      mergeCandidates(this.touched, touchedCandidates(plan.state, plan.events, this.waiters));
      for (const at of plan.deadlines) this.wakeAt(at);
      pending.forEach((p, i) => {
        const reply = plan.replies[i]!;
        p.resolve(reply.ok ? { ...reply, state: plan.state } : reply);
      });
      for (const id of plan.kill) this.opts.executor.cancel(id, 'want canceled');
      for (const run of plan.launch) this.launch(run);
      for (const s of started) this.launched.delete(s.job_run_id);
      if (plan.events.length > 0 || plan.launch.length > 0) this.wake.next();
    } catch (err) {
      // Nothing of this step was recorded: callers hear of the fault, job-run news waits for the next step.
      const error = err instanceof Error ? err : new Error(String(err));
      for (const p of pending) p.reject(error);
      this.started.unshift(...started);
      this.outcomes.unshift(...outcomes);
      this.needFullScan = true;
      // Try again soon (not at once: a fault that persists must not spin the loop).
      this.wakeAt(this.now() + STEP_RETRY_MS);
      throw err;
    }
  }

  /** A step at `at` (a retry falling due, a ttl running out) that looks at every want. */
  private wakeAt(at: number): void {
    // One timer per deadline: a full scan sees every pending retry and ttl again.
    if (this.timers.has(at)) return;
    const timer = setTimeout(() => {
      this.timers.delete(at);
      // Timers may fire a little early; a step before the deadline would find nothing due and set no new one.
      if (this.now() < at) return this.wakeAt(at);
      this.needFullScan = true;
      this.wake.next();
    }, Math.max(0, at - this.now()) + 1);
    this.timers.set(at, timer);
  }

  private launch(run: JobRunRecord): void {
    const launch: JobLaunch = {
      job_run_id: run.job_run_id,
      argv: [...run.exec, ...run.config.args],
      env: { ...run.config.env, PLATFORM_WORKSPACE: this.opts.workspaceRoot },
      outputs: run.config.outputs,
      cwd: this.opts.workspaceRoot,
      stdin: JSON.stringify(run.config),
      log_dir: join(this.opts.workspaceRoot, '.platform', 'logs', run.job_run_id),
      timeout_seconds: run.timeout_seconds,
    };
    this.launched.add(run.job_run_id);
    const { pid } = this.opts.executor.start(launch);
    // Recorded by the next step, which the step that launched it wakes.
    this.started.push({ job_run_id: run.job_run_id, pid });
  }
}
