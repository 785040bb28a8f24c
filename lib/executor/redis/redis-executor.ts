/**
 * The executor port on BullMQ: the daemon adds each run to a queue (its job id derived from the run's, so a second
 * start is a no-op), `platform worker`s on any machine take them, and the daemon stays the only writer of the event
 * log. What comes back: QueueEvents `progress` (which worker took the run, its pid: `placements$`), `completed`
 * (the outcome, the job's return value) and `failed` (a run whose worker stopped renewing its lease, found by
 * BullMQ's stalled-job check: lost). The run's output arrives in a Redis stream that is copied into the run's log
 * files here, so logs read and follow as for local runs. A cancel is published to the workers; the one running it
 * aborts it through BullMQ's own job cancellation.
 */
import { appendFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Queue, QueueEvents, Worker, type Job, type QueueEventsOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import { Observable, Subject } from 'rxjs';
import { STDERR_LOG, STDOUT_LOG, type JobLaunch, type JobOutcome } from '../job-launch.js';
import { ranHere, type Executor, type ExecutorHealth, type Placement, type Reattached } from '../executor-port.js';
import { LOST_RUN_REASON } from '../lost-runs.js';
import { cancelAllAndWait } from '../cancel-all.js';
import { redacted } from './redis-url.js';
import { groupDigits } from '../../group-digits.js';
import { QUEUE_WORKER_PREFIX } from '../../api/run-placement.js';
import {
  CANCEL_MARK_TTL_SECONDS,
  DEFAULT_QUEUE,
  LOG_CHUNK_BYTES,
  LOG_STREAM_MAXLEN,
  LOG_STREAM_TTL_SECONDS,
  cancelChannel,
  cancelMarkKey,
  bullConnection,
  connectRedis,
  logStreamKey,
  queueJobId,
  type CancelMessage,
  type PlacementReport,
} from './redis-names.js';
import { someNamed } from '../../some-named.js';

export interface RedisExecutorOptions {
  redisUrl: string;
  workspaceRoot: string;
  queue?: string;
  /** How often the daemon runs BullMQ's stalled-job check itself (so runs of dead workers are found with no worker left). Default 5 s. */
  stalledCheckMs?: number;
  logError?: (message: string) => void;
}

interface RemoteRun {
  readonly launch: JobLaunch;
  readonly jobId: string;
  readonly key: string;
  /** The last stream entry copied into the log files (kept in the run's directory for a next daemon). */
  cursor: string;
  /**
   * The number its worker gave the last chunk copied (entries carry `n`, 1 up), kept with the cursor: a next chunk
   * numbered higher than the one after it means the stream's cap dropped those between before they were copied.
   * Undefined when not known (a cursor file of an earlier version, a worker that numbers none).
   */
  chunks: number | undefined;
  /** The worker marked the end of the output. */
  logEnded: boolean;
  onLogEnd: Array<() => void>;
  settling: boolean;
  /**
   * Being added to the queue: its output stream is not read until the job in the queue is known to be this run's (a
   * stale job's stream, an earlier workspace's, is removed first).
   */
  adding: boolean;
  /** Settles once the add is done (a cancel waits for it: a stale job's replacement clears cancel marks). */
  handedOver: Promise<unknown>;
}

/**
 * A job in the queue added this long before its run was queued is another run's of the same id: an earlier workspace's
 * at the same path (its `.platform` removed and made again; BullMQ keeps ended jobs 7 days). The slack covers a wall
 * clock stepped back between the queueing and the add.
 */
const STALE_JOB_SLACK_MS = 1000;

const CURSOR_FILE = 'redis-log-cursor';
/** How often Redis and its workers are looked at for `health()`; a look waits at most HEALTH_TIMEOUT_MS. */
const HEALTH_EVERY_MS = 5000;
const HEALTH_TIMEOUT_MS = 2000;
/**
 * Besides, a PING is kept on its way (a new one as each is answered, checked this often), and one unanswered this
 * long says Redis hangs (a SIGSTOPped server, a cut network: the connection stays up, so only a silence tells): at
 * most ~2 s after it stops answering, where the looks alone took up to ~7 s (a look every 5 s, waiting 2 s).
 */
const PROBE_EVERY_MS = 250;
const UNANSWERED_MS = 1500;
/** The BullMQ worker name of the daemon's stalled-job checker, which takes no runs. */
const STALLED_CHECKER_NAME = 'platform-daemon-stalled-check';
/** The same error is said at most once in this long. */
const ERROR_REPEAT_MS = 60_000;
/** How long an outcome waits for the rest of its output before it is recorded anyway. */
const LOG_DRAIN_MS = 5000;
/** In .platform/: the cancels a daemon could not tell Redis before it stopped, told by the next one. */
const UNTOLD_CANCELS_FILE = 'redis-cancels.json';
/** How long a shutdown waits for BullMQ's classes to close before it cuts their connections. */
const CLOSE_MS = 2000;

export class RedisExecutor implements Executor {
  /** Each run's log directory is made as it starts (Executor.keepsRunLogs). */
  readonly keepsRunLogs = true;
  private readonly outcomes = new Subject<JobOutcome>();
  private readonly placements = new Subject<Placement>();
  readonly outcomes$: Observable<JobOutcome> = this.outcomes.asObservable();
  readonly placements$: Observable<Placement> = this.placements.asObservable();
  private readonly queueName: string;
  private readonly connection: Redis;
  private readonly reader: Redis;
  private readonly queue: Queue<JobLaunch, JobOutcome>;
  private readonly events: QueueEvents;
  private readonly stalledChecker: Worker;
  private readonly runs = new Map<string, RemoteRun>();
  private readonly byJobId = new Map<string, RemoteRun>();
  private readonly ready: Promise<void>;
  private wake: (() => void) | undefined;
  private closed = false;
  private lastHealth: Omit<ExecutorHealth, 'launcher'>;
  /** Errors said lately, and how many times each came again since. */
  private readonly said = new Map<string, { at: number; count: number }>();
  private healthSeenAt = 0;
  private healthLooking = false;
  private readonly healthTimer: NodeJS.Timeout;
  private readonly probeTimer: NodeJS.Timeout;
  /** When the PING on its way was sent; undefined when none is. */
  private probeSentAt: number | undefined;
  /** The probe found Redis silent; `lastHealth` says so until a PING is answered. */
  private silent = false;
  /**
   * Runs whose cancel has not reached Redis yet (asked while it does not answer, or failed), by run id, with their
   * queue job and why: a stop that cancels its runs leaves these running in the log (`cancelUndelivered`), since their
   * workers were not told and run them on; recorded canceled, they were built again beside themselves. Those left at
   * a stop are kept in UNTOLD_CANCELS_FILE and told by the next daemon (a want canceled while Redis was away, the
   * daemon stopped before it came back: the log said canceled while the job ran on, unstopped).
   */
  private readonly cancelsUntold = new Map<string, { jobId: string; reason: string }>();

  constructor(private readonly opts: RedisExecutorOptions) {
    this.queueName = opts.queue ?? DEFAULT_QUEUE;
    this.connection = connectRedis(opts.redisUrl);
    this.reader = connectRedis(opts.redisUrl);
    this.queue = new Queue<JobLaunch, JobOutcome>(this.queueName, { connection: bullConnection(opts.redisUrl) });
    // Not run yet: it is to read from an event id taken before any run is looked up (`ready`).
    this.events = new QueueEvents(this.queueName, { connection: bullConnection(opts.redisUrl), autorun: false });
    this.stalledChecker = new Worker(this.queueName, undefined, {
      connection: bullConnection(opts.redisUrl),
      autorun: false,
      // Named, so that counting the queue's workers (`health`) leaves the daemons' own checkers out.
      name: STALLED_CHECKER_NAME,
      maxStalledCount: 0,
      stalledInterval: opts.stalledCheckMs ?? 5000,
    });
    const onError = (err: Error) => this.error(`Redis: ${err.message}`);
    this.queue.on('error', onError);
    this.events.on('error', onError);
    this.stalledChecker.on('error', onError);
    this.events.on('progress', ({ jobId, data }) => this.placed(jobId, data));
    this.events.on('completed', ({ jobId, returnvalue }) => void this.completed(jobId, returnvalue));
    this.events.on('failed', ({ jobId, failedReason }) => void this.failed(jobId, failedReason));
    // With maxStalledCount 0 a stalled job is failed only when a worker next takes it from the wait list (BullMQ
    // marks it and moves it back there): with no worker left that is never, so a stall is the run lost, here.
    this.events.on('stalled', ({ jobId }) => void this.stalled(jobId));
    this.ready = Promise.all([this.queue.waitUntilReady(), this.events.waitUntilReady()]).then(async () => {
      await this.followEventsFromNow();
      await this.stalledChecker.startStalledCheckTimer();
      await this.tellEarlierCancels().catch((err: unknown) => this.error(`could not tell Redis the cancels the last daemon could not: ${errorText(err)}`));
    });
    this.ready.catch((err: unknown) => this.error(`could not reach Redis at ${redacted(opts.redisUrl)}: ${String(err)}`));
    void this.copyLogs();
    this.lastHealth = { kind: 'redis', where: this.where(), reachable: false, workers: null, problem: `not yet connected to Redis at ${redacted(opts.redisUrl)}` };
    this.healthTimer = setInterval(() => void this.lookAtHealth(), HEALTH_EVERY_MS).unref();
    this.probeTimer = setInterval(() => this.probe(), PROBE_EVERY_MS).unref();
    void this.ready.then(() => this.lookAtHealth(), () => undefined);
  }

  /**
   * QueueEvents read from '$' by default, i.e. from whenever their first XREAD reaches Redis, which is after `ready`:
   * a re-attached run found running by `lookUp` that ended before that read, or a run handed over that a worker
   * finished as fast, would be heard of never. So the events are read from the stream's last id as it is now, before
   * any run is looked up or added: every end after that lookup is in what is read (one told twice is settled once).
   */
  private async followEventsFromNow(): Promise<void> {
    const last = (await this.connection.xrevrange(this.queue.keys.events, '+', '-', 'COUNT', 1))[0]?.[0];
    (this.events.opts as QueueEventsOptions).lastEventId = last ?? '0-0';
    this.events.run().catch((err: unknown) => this.error(`Redis: reading the queue's events: ${errorText(err)}`));
  }

  health(): ExecutorHealth {
    // As last seen; a look more than a second old is followed by a new one, for the next reader.
    if (Date.now() - this.healthSeenAt > 1000 && !this.healthLooking) void this.lookAtHealth();
    // Runs start on the workers, not under a launcher of this daemon.
    return { ...this.lastHealth, launcher: null };
  }

  /**
   * Keeps a PING on its way and says Redis does not answer once one waited UNANSWERED_MS. Decided after the event
   * loop has read what came in (setImmediate runs after the poll for I/O): a daemon whose own loop was held up (a
   * long step, a GC) finds the answer that waited in its socket first, and does not blame Redis for its own delay.
   */
  private probe(): void {
    if (this.closed) return;
    const sentAt = this.probeSentAt;
    if (sentAt === undefined) {
      // While disconnected the looks say so (the connection's state); a PING would wait in ioredis's offline queue.
      if (this.connection.status !== 'ready') return;
      const now = Date.now();
      this.probeSentAt = now;
      const answered = (ok: boolean) => {
        if (this.probeSentAt === now) this.probeSentAt = undefined;
        if (ok && this.silent) {
          this.silent = false;
          // Back: a full look (workers too) says what holds now.
          void this.lookAtHealth();
        }
      };
      this.connection.ping().then(
        () => answered(true),
        () => answered(false),
      );
      return;
    }
    if (this.silent || Date.now() - sentAt < UNANSWERED_MS) return;
    setImmediate(() => {
      if (this.closed || this.probeSentAt !== sentAt) return;
      this.silent = true;
      const url = redacted(this.opts.redisUrl);
      const waited = ((Date.now() - sentAt) / 1000).toFixed(1);
      this.lastHealth = { kind: 'redis', where: this.where(), reachable: false, workers: null, problem: `Redis at ${url} does not answer: no answer to a PING for ${waited} s (the server hangs, or the network to it is cut); runs handed to it wait` };
    });
  }

  private where(): string {
    return `${redacted(this.opts.redisUrl)} queue ${this.queueName}`;
  }

  /** Redis answers a PING, and how many workers take from the queue (their named connections to this database). */
  private async lookAtHealth(): Promise<void> {
    if (this.healthLooking || this.closed) return;
    this.healthLooking = true;
    try {
      await this.lookAtHealthNow();
    } finally {
      this.healthSeenAt = Date.now();
      this.healthLooking = false;
    }
  }

  private async lookAtHealthNow(): Promise<void> {
    const url = redacted(this.opts.redisUrl);
    const where = this.where();
    // While disconnected a command would wait in ioredis's offline queue: say so without sending one.
    if (this.connection.status !== 'ready') {
      this.lastHealth = { kind: 'redis', where, reachable: false, workers: null, problem: `Redis at ${url} does not answer (connection ${this.connection.status}): runs handed to it wait; is redis-server running there?` };
      return;
    }
    try {
      await withTimeout(this.connection.ping(), HEALTH_TIMEOUT_MS, 'PING');
    } catch (err) {
      this.lastHealth = { kind: 'redis', where, reachable: false, workers: null, problem: `Redis at ${url} does not answer: ${errorText(err)}` };
      return;
    }
    // Apart: a Redis that refuses CLIENT LIST (an ACL, as managed ones have) still runs what it is handed.
    let clients: Array<Record<string, string>>;
    try {
      clients = await withTimeout(this.queue.getWorkers(), HEALTH_TIMEOUT_MS, 'the worker list');
    } catch (err) {
      // Silent since the PING this look had answered: the probe's word stands.
      if (this.silent) return;
      this.lastHealth = { kind: 'redis', where, reachable: true, workers: null, problem: null };
      this.error(`could not count the workers of queue ${this.queueName} at ${url} (runs are not held up by it): ${errorText(err)}`);
      return;
    }
    // BullMQ matches the connection name only, over every client of the server: a worker of the same queue name on
    // another database of it (another workspace's, redis://host/2) was counted, and the run waited for ever beside
    // '1 worker'. CLIENT LIST says each client's database: only this one's count.
    // A server that refuses CLIENT LIST's use this way (GCP's) has BullMQ answer one entry of its own, with no client
    // fields: the workers are not known, which is not none.
    if (clients.some((c) => c['rawname'] === undefined)) {
      if (!this.silent) this.lastHealth = { kind: 'redis', where, reachable: true, workers: null, problem: null };
      return;
    }
    const db = String(bullConnection(this.opts.redisUrl).db ?? 0);
    const workers = clients.filter((c) => c['db'] === db && !String(c['rawname'] ?? '').endsWith(`:w:${STALLED_CHECKER_NAME}`)).length;
    const problem =
      workers === 0
        ? `no platform worker takes runs from queue ${this.queueName} at ${url}: runs wait until one does ('platform worker --redis ${url}' on a machine that can run the jobs)`
        : null;
    if (this.silent) return;
    this.lastHealth = { kind: 'redis', where, reachable: true, workers, problem };
  }

  start(launch: JobLaunch): { pid: number; worker: string } {
    const run = this.track(launch);
    run.adding = true;
    const couldNot = (err: unknown) =>
      this.settle(run, { job_run_id: launch.job_run_id, status: 'failed', exit_code: -1, signal: '', reason: `could not hand the run to Redis at ${redacted(this.opts.redisUrl)}: ${errorText(err)}` });
    run.handedOver = this.ready
      .then(() => this.add(launch, run.jobId))
      .then(
        (added) =>
          this.handedOverBefore(run, added.timestamp).catch((err: unknown) => {
            if (err instanceof StaleJobError) return couldNot(err);
            this.error(`could not look up ${launch.job_run_id} on Redis: ${errorText(err)}`);
          }),
        couldNot,
      )
      .finally(() => {
        run.adding = false;
        this.wake?.();
      });
    return { pid: 0, worker: `${QUEUE_WORKER_PREFIX}${this.queueName}` };
  }

  private add(launch: JobLaunch, jobId: string): Promise<Job<JobLaunch, JobOutcome>> {
    return this.queue.add('run', launch, { jobId, attempts: 1, removeOnComplete: { age: 7 * 86400 }, removeOnFail: { age: 7 * 86400 } });
  }

  /**
   * A daemon killed after it handed a run to the queue but before it recorded the start leaves the run queued in the
   * log, and the next daemon starts it again: BullMQ dedups that add on the job id, so the job in the queue is the
   * earlier daemon's (its timestamp is not this add's). Waiting, running or ended since, it is followed as a
   * re-attached run is; else an end told while no daemon listened would never be heard of, the run running for ever.
   */
  private async handedOverBefore(run: RemoteRun, addedAt: number): Promise<void> {
    const job = await this.queue.getJob(run.jobId);
    if (!job || job.timestamp === addedAt) return;
    const queuedAt = run.launch.queued_at;
    if (queuedAt !== undefined && job.timestamp + STALE_JOB_SLACK_MS < queuedAt) return this.replaceStale(run, job);
    await this.lookUp(run, job);
  }

  /**
   * The job under this run's id is an earlier workspace's (added before the run was queued): taken out with its output
   * stream and any cancel mark, which would otherwise read as this run's, and this run added in its place. Its
   * outcome had been recorded as this run's, which never ran (a workspace whose .platform was made again at the path).
   */
  private async replaceStale(run: RemoteRun, job: Job<JobLaunch, JobOutcome>): Promise<void> {
    const stale = `queue ${this.queueName} holds a job ${run.jobId} added ${new Date(job.timestamp).toISOString()}, before this run was queued: an earlier workspace's at ${this.opts.workspaceRoot}`;
    if ((await job.getState()) === 'active') {
      throw new StaleJobError(`${stale}, still running on a worker; cancel it there (or wait for it to end) and build again`);
    }
    try {
      await job.remove();
    } catch (err) {
      throw new StaleJobError(`${stale}, which could not be removed (${errorText(err)}); build again once it has ended`);
    }
    await this.connection.del(run.key, cancelMarkKey(this.queueName, run.jobId));
    run.cursor = '0';
    run.chunks = 0;
    await this.add(run.launch, run.jobId);
  }

  cancel(job_run_id: string, reason: string): void {
    const run = this.runs.get(job_run_id);
    if (!run || run.settling) return;
    this.cancelsUntold.set(job_run_id, { jobId: run.jobId, reason });
    void (async () => {
      await run.handedOver;
      // The hand-over may have failed meanwhile (an earlier workspace's job still running under its id): nothing of
      // this run is in the queue to cancel, and that job is not this run's.
      if (run.settling) return;
      // Still waiting in the queue: taken out, and it never runs. Taken by a worker: that worker aborts it.
      const job = await this.queue.getJob(run.jobId);
      const state = await job?.getState();
      if (job && (state === 'waiting' || state === 'delayed' || state === 'prioritized')) {
        try {
          await job.remove();
          run.logEnded = true;
          return this.settle(run, { job_run_id, status: 'canceled', reason });
        } catch {
          // A worker took it meanwhile: cancel it there.
        }
      }
      await this.tellCancel(run.jobId, reason);
      this.cancelsUntold.delete(job_run_id);
    })().catch((err: unknown) => {
      // Still untold: a later cancel may tell it, and a stop leaves the run running for the next daemon.
      if (this.closed) return;
      this.error(`could not cancel ${job_run_id} on Redis: ${errorText(err)}`);
    });
  }

  /** Whether the cancel asked of this run has not reached Redis (its worker runs it on). */
  cancelUndelivered(job_run_id: string): boolean {
    return this.cancelsUntold.has(job_run_id);
  }

  /** Tells Redis the cancels an earlier daemon could not (kept in UNTOLD_CANCELS_FILE): marked and published. */
  private async tellEarlierCancels(): Promise<void> {
    const file = join(this.opts.workspaceRoot, '.platform', UNTOLD_CANCELS_FILE);
    let kept: Array<{ jobId: string; reason: string }>;
    try {
      kept = JSON.parse(readFileSync(file, 'utf8')) as typeof kept;
    } catch {
      return;
    }
    for (const { jobId, reason } of Array.isArray(kept) ? kept : []) {
      if (typeof jobId !== 'string' || typeof reason !== 'string') continue;
      await this.tellCancel(jobId, reason);
    }
    rmSync(file, { force: true });
  }

  /** Kept first, then told: a worker that was not listening when it was told reads the mark once it is back. */
  private async tellCancel(jobId: string, reason: string): Promise<void> {
    const message: CancelMessage = { jobId, reason };
    await this.connection
      .multi()
      .set(cancelMarkKey(this.queueName, jobId), reason, 'EX', CANCEL_MARK_TTL_SECONDS)
      .publish(cancelChannel(this.queueName), JSON.stringify(message))
      .exec();
  }

  /** Runs handed to a queue (and taken by a worker), not runs of a local supervisor: those are not in Redis. */
  canFollow(worker: string): boolean {
    return !ranHere(worker);
  }

  reattach(launch: JobLaunch, _pid: number): Reattached {
    const run = this.track(launch);
    const kept = readCursor(launch.log_dir);
    run.cursor = kept?.cursor ?? '0';
    run.chunks = kept ? kept.chunks : 0;
    void (async () => {
      await this.ready;
      await this.lookUp(run, await this.queue.getJob(run.jobId));
    })().catch((err: unknown) => this.error(`could not look up ${launch.job_run_id} on Redis: ${errorText(err)}`));
    return 'following';
  }

  /** What the queue holds of a run an earlier daemon handed to it, told while no daemon listened. */
  private async lookUp(run: RemoteRun, job: Job<JobLaunch, JobOutcome> | undefined): Promise<void> {
    const state = job ? await job.getState() : 'unknown';
    // Taken by a worker while no daemon listened: its name and pid are in the job's progress, and when it took it is
    // the job's processedOn (the worker's clock, as finishedOn is its end): the run started then, not now.
    if (job?.progress && typeof job.progress === 'object') this.placed(run.jobId, job.progress, job.processedOn);
    // Ended while no daemon listened: it ended when its worker finished it, not now.
    if (state === 'completed' && job?.returnvalue) return this.completed(run.jobId, job.returnvalue, job.finishedOn);
    if (state === 'failed') return this.failed(run.jobId, job?.failedReason ?? 'failed');
    // Stalled while no daemon listened, and no worker has taken it since to fail it.
    if (job?.deferredFailure) return this.stalled(run.jobId, job.deferredFailure);
    if (state === 'unknown') {
      run.logEnded = true;
      return this.settle(run, { job_run_id: run.launch.job_run_id, status: 'canceled', reason: `${LOST_RUN_REASON} (Redis has no such job)` });
    }
    // Waiting or running: QueueEvents bring its end.
  }

  runningCount(): number {
    return this.runs.size;
  }

  async shutdown(reason: string, options: { cancelRuns?: boolean } = {}): Promise<void> {
    if (options.cancelRuns) {
      await cancelAllAndWait(this, [...this.runs.keys()], reason, 5000);
      // A Redis that does not answer was told none of them: their workers run them on, so the log keeps them running.
      for (const id of this.cancelsUntold.keys()) {
        if (!this.runs.has(id)) continue;
        this.error(
          `could not tell Redis at ${redacted(this.opts.redisUrl)} to cancel ${id} (it did not answer within 5 s): left running in the log, as its worker runs it on; the next daemon tells Redis the cancel once it answers, and follows the run to its end`,
        );
      }
    }
    // Runs left going are the next daemon's: it finds them in the queue, and tells the cancels this one could not.
    this.keepUntoldCancels();
    this.closed = true;
    clearInterval(this.healthTimer);
    clearInterval(this.probeTimer);
    this.wake?.();
    // BullMQ (5.81) crashes the process when a connection is closed while it is still connecting: its constructor's
    // catch emits the failed connect as an 'error' after close() removed every listener. A platform closed right
    // after it opened (a no-op build) met it; so wait, a bounded time, until every connection is up.
    const blocking = (this.stalledChecker as unknown as { blockingConnection?: { client: Promise<unknown>; disconnect(wait: boolean): Promise<void> } }).blockingConnection;
    await Promise.race([
      Promise.allSettled([this.ready, this.stalledChecker.waitUntilReady(), blocking?.client]),
      new Promise((resolve) => setTimeout(resolve, 2000).unref()),
    ]);
    // Bounded: a command still waiting for a Redis that does not answer (a cancel's look-up) held BullMQ's close, and
    // the daemon's stop, for as long as Redis was away.
    let timer: NodeJS.Timeout | undefined;
    const closing = Promise.allSettled([this.stalledChecker.close(), this.events.close(), this.queue.close()]);
    const closed = await Promise.race([closing.then(() => true), new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), CLOSE_MS)))]);
    clearTimeout(timer);
    if (!closed) {
      // Cut instead. Not awaited: ioredis emits no 'end' for a client cut while it waits to reconnect, and BullMQ's
      // disconnect() waits for one.
      for (const bull of [this.stalledChecker, this.events, this.queue]) bull.disconnect().catch(() => undefined);
      blocking?.disconnect(false).catch(() => undefined);
    }
    this.reader.disconnect();
    this.connection.disconnect();
  }

  /** The cancels Redis was not told, for the next daemon (bounded by the runs in flight). */
  private keepUntoldCancels(): void {
    if (this.cancelsUntold.size === 0) return;
    const file = join(this.opts.workspaceRoot, '.platform', UNTOLD_CANCELS_FILE);
    try {
      writeFileSync(file, JSON.stringify([...this.cancelsUntold.values()]));
      this.error(`Redis was not told the cancel of ${someNamed([...this.cancelsUntold.keys()])}: kept in ${file} for the next daemon, which tells it once Redis answers`);
    } catch (err) {
      this.error(`could not keep the cancels Redis was not told (${someNamed([...this.cancelsUntold.keys()])}) in ${file}: ${errorText(err)}; their runs go on on their workers`);
    }
  }

  private track(launch: JobLaunch): RemoteRun {
    const jobId = queueJobId(this.opts.workspaceRoot, launch.job_run_id);
    const run: RemoteRun = { launch, jobId, key: logStreamKey(this.queueName, jobId), cursor: '0', chunks: 0, logEnded: false, onLogEnd: [], settling: false, adding: false, handedOver: Promise.resolve() };
    mkdirSync(launch.log_dir, { recursive: true });
    this.runs.set(launch.job_run_id, run);
    this.byJobId.set(jobId, run);
    this.wake?.();
    return run;
  }

  /** A worker took the run: told live (a QueueEvents progress, now) or read back from the queue (`processedOn`, then). */
  private placed(jobId: string, data: unknown, processedOn?: number): void {
    const run = this.byJobId.get(jobId);
    const report = data as Partial<PlacementReport> | undefined;
    if (!run || typeof report?.worker !== 'string' || typeof report.pid !== 'number') return;
    const started = processedOn !== undefined && processedOn > 0 ? { started_at: processedOn } : {};
    this.placements.next({ job_run_id: run.launch.job_run_id, worker: report.worker, pid: report.pid, ...started });
  }

  private async completed(jobId: string, returnvalue: unknown, finishedOn?: number): Promise<void> {
    const run = this.byJobId.get(jobId);
    if (!run) return;
    const value = typeof returnvalue === 'string' ? (JSON.parse(returnvalue) as JobOutcome) : (returnvalue as JobOutcome);
    // The worker's own end of the job when it gives one (a job that exited before a background process let its
    // output go), else when the worker finished the queue's job; both the worker's clock.
    const endedAt = value.status !== 'canceled' && value.ended_at ? value.ended_at : finishedOn;
    const ended = endedAt !== undefined && value.status !== 'canceled' ? { ended_at: endedAt } : {};
    await this.settle(run, { ...value, job_run_id: run.launch.job_run_id, ...ended });
  }

  private async failed(jobId: string, failedReason: string): Promise<void> {
    const run = this.byJobId.get(jobId);
    if (!run) return;
    // Our processor never throws: a failed job is one BullMQ gave up on, its worker gone (stalled past its lease).
    run.logEnded = true;
    // That worker never set its output stream's expiry (it does so when it marks the end): set here, or the stream
    // of every run lost with its worker stays in Redis for good.
    this.connection.expire(run.key, LOG_STREAM_TTL_SECONDS).catch((err: unknown) => this.error(`could not set the expiry of ${run.key}: ${errorText(err)}`));
    await this.settle(run, { job_run_id: run.launch.job_run_id, status: 'canceled', reason: `${LOST_RUN_REASON} (${lostWhy(failedReason)})` });
  }

  /** A run whose worker stopped renewing its lease: taken out of the queue (so no worker meets it again) and lost. */
  private async stalled(jobId: string, reason = BULLMQ_STALLED): Promise<void> {
    if (!this.byJobId.has(jobId)) return;
    try {
      await (await this.queue.getJob(jobId))?.remove();
    } catch {
      // A worker took it meanwhile: BullMQ fails it there without running it (its deferred failure).
    }
    await this.failed(jobId, reason);
  }

  /** Records the outcome once the run's output is all in its log files (or after a bounded wait for it). */
  private async settle(run: RemoteRun, outcome: JobOutcome): Promise<void> {
    if (run.settling) return;
    run.settling = true;
    if (!run.logEnded) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([new Promise<void>((r) => run.onLogEnd.push(r)), new Promise<void>((r) => (timer = setTimeout(r, LOG_DRAIN_MS)))]);
      clearTimeout(timer);
    }
    if (this.closed || this.runs.get(run.launch.job_run_id) !== run) return;
    this.runs.delete(run.launch.job_run_id);
    this.byJobId.delete(run.jobId);
    this.cancelsUntold.delete(run.launch.job_run_id);
    this.outcomes.next(outcome);
  }

  /** One blocking XREAD over the output streams of every run followed, appending what comes to its log files. */
  private async copyLogs(): Promise<void> {
    while (!this.closed) {
      const runs = [...this.runs.values()].filter((r) => !r.logEnded && !r.adding);
      if (runs.length === 0) {
        await new Promise<void>((resolve) => (this.wake = resolve));
        this.wake = undefined;
        continue;
      }
      // As bytes: a run's output is copied byte for byte, whatever its encoding. Entries are of at most 64 KiB: a read
      // takes at most 1,600 of them over all runs followed (~100 MiB), and 100 of one run's.
      const count = Math.max(1, Math.min(100, Math.floor(1600 / runs.length)));
      let reply: Array<[Buffer, Array<[Buffer, Buffer[]]>]> | null;
      try {
        reply = (await this.reader.xreadBuffer('COUNT', count, 'BLOCK', 250, 'STREAMS', ...runs.map((r) => r.key), ...runs.map((r) => r.cursor))) as typeof reply;
      } catch (err) {
        if (this.closed) return;
        this.error(`reading run output from Redis: ${errorText(err)}`);
        await new Promise((r) => setTimeout(r, 1000));
        continue;
      }
      for (const [keyBytes, entries] of reply ?? []) {
        const key = keyBytes.toString();
        const run = runs.find((r) => r.key === key);
        if (run) this.append(run, entries);
      }
    }
  }

  private append(run: RemoteRun, entries: Array<[Buffer, Buffer[]]>): void {
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    for (const [id, fields] of entries) {
      run.cursor = id.toString();
      const f = new Map<string, Buffer>();
      for (let i = 0; i + 1 < fields.length; i += 2) f.set(fields[i]!.toString(), fields[i + 1]!);
      if (f.get('end')?.toString() === '1') {
        run.logEnded = true;
        continue;
      }
      const n = Number(f.get('n')?.toString());
      if (!Number.isInteger(n) || n < 1) run.chunks = undefined;
      else {
        if (run.chunks !== undefined && n > run.chunks + 1) {
          // Dropped by the stream's cap (XADD MAXLEN ~) before this daemon copied them (none ran, or it fell behind):
          // said where they were, in both files (a chunk is either's), and in server.log.
          const dropped = n - run.chunks - 1;
          const marker = `[platform: ${groupDigits(dropped)} earlier chunk${dropped === 1 ? '' : 's'} of this run's output (up to ${LOG_CHUNK_BYTES / 1024} KiB each) ${dropped === 1 ? 'was' : 'were'} dropped from Redis before the daemon could copy ${dropped === 1 ? 'it' : 'them'} (the stream keeps the last ${groupDigits(LOG_STREAM_MAXLEN)}); the log ${run.chunks === 0 ? 'starts' : 'goes on'} here]\n`;
          out.push(Buffer.from(marker));
          err.push(Buffer.from(marker));
          this.error(
            `${run.launch.job_run_id}: ${groupDigits(dropped)} chunk${dropped === 1 ? ' of its output was' : 's of its output were'} dropped from Redis (its stream keeps the last ${groupDigits(LOG_STREAM_MAXLEN)}) before this daemon could copy them; its stdout.log and stderr.log say so where they were`,
          );
        }
        run.chunks = n;
      }
      const d = f.get('d');
      if (d) (f.get('s')?.toString() === 'err' ? err : out).push(d);
    }
    try {
      if (out.length > 0) appendFileSync(join(run.launch.log_dir, STDOUT_LOG), Buffer.concat(out));
      if (err.length > 0) appendFileSync(join(run.launch.log_dir, STDERR_LOG), Buffer.concat(err));
      writeFileSync(join(run.launch.log_dir, CURSOR_FILE), run.chunks === undefined ? run.cursor : `${run.cursor} ${run.chunks}`);
    } catch (e) {
      this.error(`could not write the log of ${run.launch.job_run_id}: ${errorText(e)}`);
    }
    if (run.logEnded) for (const resolve of run.onLogEnd.splice(0)) resolve();
  }

  private error(message: string): void {
    // A Redis that is down fails every reconnect of three connections: said once a minute, with how often.
    const now = Date.now();
    const seen = this.said.get(message);
    if (seen && now - seen.at < ERROR_REPEAT_MS) {
      seen.count++;
      return;
    }
    const again = seen && seen.count > 0 ? ` (and ${seen.count} times more in the last ${Math.round((now - seen.at) / 1000)} s)` : '';
    // Deleted first, so the map's order is the order of last saying and the oldest goes first.
    this.said.delete(message);
    this.said.set(message, { at: now, count: 0 });
    if (this.said.size > 100) this.said.delete(this.said.keys().next().value!);
    (this.opts.logError ?? ((m: string) => process.stderr.write(`${m}\n`)))(`${message}${again}`);
  }
}

/** The cursor kept in a run's directory: `<stream id> <chunk number>` (an earlier version's: the id alone). */
function readCursor(dir: string): { cursor: string; chunks: number | undefined } | undefined {
  let text: string;
  try {
    text = readFileSync(join(dir, CURSOR_FILE), 'utf8').trim();
  } catch {
    return undefined;
  }
  const [cursor, n] = text.split(/\s+/);
  if (!cursor) return undefined;
  const chunks = n === undefined ? (cursor === '0' ? 0 : undefined) : Number(n);
  return { cursor, chunks: Number.isInteger(chunks) ? chunks : undefined };
}

/** A job of an earlier workspace holds this run's id in the queue, and cannot be replaced now: the run fails, saying so. */
class StaleJobError extends Error {}

/** BullMQ's reason for a job whose lock no worker renewed (moveStalledJobsToWait). */
const BULLMQ_STALLED = 'job stalled more than allowable limit';

/** Why a run failed in the queue was lost, in our words rather than BullMQ's. */
function lostWhy(failedReason: string): string {
  if (failedReason === BULLMQ_STALLED) {
    return 'its worker stopped renewing its lease: the worker died, hung, or lost touch with Redis (a worker that hears nothing from Redis for its lease stops the run itself)';
  }
  return `its worker stopped renewing its lease: ${failedReason}`;
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** As the probe, decided after the loop read what came in: an answer held up by this process's own delay counts. */
function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => setImmediate(() => reject(new Error(`no answer to ${what} within ${ms} ms`))), ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}
