/**
 * `platform worker`: takes job runs from the BullMQ queue and runs them on this machine with the ProcessExecutor
 * (process group, timeout, missing-input report), in `workdir` (the same data as the daemon's workspace: a shared
 * filesystem or object store, the job's business). While it runs, the job's stdout and stderr are shipped to a
 * bounded Redis stream per run, which the daemon copies into its own log files; the outcome is the BullMQ job's
 * return value. BullMQ's lock, renewed while the run lasts, is the worker's lease: a worker that dies stops
 * renewing it and the run turns stalled, which the daemon records as lost.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { Subject, bufferTime, filter, firstValueFrom, map, merge } from 'rxjs';
import { followFileChunks } from '../follow-file.js';
import { STDERR_LOG, STDOUT_LOG, type JobLaunch, type JobOutcome } from '../job-launch.js';
import { ProcessExecutor } from '../process-executor.js';
import {
  DEFAULT_QUEUE,
  LOG_CHUNK_BYTES,
  LOG_STREAM_MAXLEN,
  LOG_STREAM_TTL_SECONDS,
  cancelChannel,
  cancelMarkKey,
  bullConnection,
  connectRedis,
  logStreamKey,
  runIdOfQueueJob,
  type CancelMessage,
  type PlacementReport,
} from './redis-names.js';
import { redacted } from './redis-url.js';
import { WORKER_TOKEN_VAR, startOrphanWatchdog, writeLeaseDeadline } from './orphan-watchdog.js';

export interface QueueWorkerOptions {
  redisUrl: string;
  queue?: string;
  /** Runs at once on this worker. Default 1. */
  concurrency?: number;
  /** Where jobs run; default the daemon's workspace path, as sent with each run (a shared filesystem). */
  workdir?: string;
  /** The worker's name, recorded on each run it takes. Default `<hostname>-<pid>`. */
  name?: string;
  /** BullMQ lock duration: how long a worker that stopped answering keeps its runs. Default 30 s. */
  leaseMs?: number;
  log?: (line: string) => void;
}

/**
 * The cancel listener's liveness: a PING on its connection at most this often, and one unanswered this long means the
 * connection is dead though no reset came (a cut network, a NAT or proxy that dropped it silently): it is made again,
 * and the cancels published meanwhile are read from their marks. A subscriber hears nothing otherwise, so without it a
 * silent connection looked like a quiet channel until the OS gave up on it (hours, with TCP's defaults).
 */
export const LISTENER_PING_EVERY_MS = 1000;
export const LISTENER_UNANSWERED_MS = 3000;

/**
 * A stopping worker, once its runs ended, waits this long at most for Redis to take what it has to tell (the outcomes
 * of runs that ended; BullMQ's close does it), and this long when it has nothing to tell; a forced stop (a second
 * signal) no longer than FORCED_TELL_MS. BullMQ's close waited for a Redis that did not answer for ever.
 */
export const CLOSE_TELL_MS = 5000;
export const CLOSE_QUIET_MS = 1000;
export const FORCED_TELL_MS = 2000;

/**
 * BullMQ's errors for a lock this worker no longer holds (lock-manager's renewal, the finish scripts' codes), with
 * the job id: said as the run's lease lost (`leaseLost`).
 */
const LOCK_LOST = /^(?:could not renew lock for job (\S+)|Missing lock for job (\S+)\. \w+|Lock mismatch for job (\S+)\. Cmd \w+ from \w+)$/;
/** How many runs' lost leases are remembered (so their lock errors are not said again). */
const LEASE_LOST_KEPT = 1000;

/** Errors of a connection that cannot reach Redis (said with what to do, once until it changes). */
const UNREACHABLE = /ECONNREFUSED|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|ENOTFOUND|EAI_AGAIN|ECONNRESET|EPIPE|Connection is closed/;

export class QueueWorker {
  readonly name: string;
  private readonly queue: string;
  private readonly publisher: Redis;
  private readonly subscriber: Redis;
  private readonly executor: ProcessExecutor;
  private readonly scratch: string;
  private readonly worker: Worker<JobLaunch, JobOutcome>;
  private token: string | undefined;
  /** A connection for lease checks only, so that shipped output never delays their answers. */
  private readonly leaseClient: Redis;
  private readonly leaseMs: number;
  /** The runs held, by BullMQ job id: until when their lock is known to hold, and whether a check is on its way. */
  private readonly held = new Map<string, { until: number; asking: boolean; runId: string }>();
  /** Why each run being canceled here is (a cancel heard, a lease lost), by BullMQ job id. */
  private readonly canceling = new Map<string, string>();
  private leaseTimer: NodeJS.Timeout | undefined;
  /** Where the watchdog reads when to kill this worker's jobs should it stop answering (`writeLeaseDeadline`). */
  private readonly deadlineFile: string;
  private listenerTimer: NodeJS.Timeout | undefined;
  /** When the cancel listener's PING on its way was sent; undefined when none is. */
  private listenerPingSentAt: number | undefined;
  private closing = false;
  private closed: Promise<void> | undefined;
  /** Ends the waits of a stop: a second signal (`close({ force: true })`). */
  private force!: () => void;
  private readonly forced = new Promise<void>((resolve) => (this.force = resolve));
  /** The runs being run (BullMQ job ids), and those waiting for them to end. */
  private readonly running = new Set<string>();
  private onRunEnded: Array<() => void> = [];
  /** Runs ended here whose outcome Redis has not taken yet (BullMQ's 'completed' or 'failed' not yet come): what. */
  private readonly untold = new Map<string, string>();
  /** After close: the runs whose end Redis was not told (the exit status says so). */
  private leftUntold = 0;
  /** The connection error said last (said once, and again only after Redis answered or another one came). */
  private lastError: string | undefined;
  /** Redis was said unreachable, and has not answered since: one outage is said once, whatever errors it gives. */
  private unreachableSaid = false;
  /**
   * The runs (BullMQ job ids) whose lease this worker said it lost, so that BullMQ's errors about the lock it no
   * longer holds (a renewal, then recording the end, each tried again) are not said again. The oldest go past
   * LEASE_LOST_KEPT: a worker that runs for months keeps no list that grows with them.
   */
  private readonly leaseLostSaid = new Set<string>();

  constructor(private readonly opts: QueueWorkerOptions) {
    this.name = opts.name ?? `${hostname()}-${process.pid}`;
    this.queue = opts.queue ?? DEFAULT_QUEUE;
    this.executor = new ProcessExecutor({
      place: {
        worker: this.name,
        cwdSource: opts.workdir
          ? "the worker's --workdir"
          : "the daemon's workspace path, where a worker started without --workdir runs jobs: start it with --workdir, or share that path with it",
      },
    });
    this.publisher = connectRedis(opts.redisUrl);
    this.subscriber = connectRedis(opts.redisUrl);
    this.scratch = join(tmpdir(), `platform-worker-${process.pid}`);
    this.deadlineFile = join(this.scratch, 'lease-deadline');
    const leaseMs = opts.leaseMs ?? 30_000;
    this.leaseMs = leaseMs;
    this.leaseClient = connectRedis(opts.redisUrl);
    this.worker = new Worker<JobLaunch, JobOutcome>(this.queue, (job, _token, signal) => this.run(job, signal), {
      connection: bullConnection(opts.redisUrl),
      concurrency: opts.concurrency ?? 1,
      name: this.name,
      lockDuration: leaseMs,
      stalledInterval: Math.max(500, Math.floor(leaseMs / 2)),
      // A stalled run is not handed to another worker by BullMQ: the daemon records it lost and queues a new run,
      // so one run id never executes twice, at once or after.
      maxStalledCount: 0,
      autorun: false,
    });
    this.worker.on('error', (err) => this.onError(err));
    this.worker.on('completed', (job) => void this.untold.delete(job.id ?? ''));
    this.worker.on('failed', (job) => void (job && this.untold.delete(job.id ?? '')));
    // Each connection of ours says 'ready' as it connects again: Redis answers, said once after an error.
    this.publisher.on('ready', () => {
      if (this.lastError === undefined || this.closing) return;
      this.lastError = undefined;
      this.unreachableSaid = false;
      this.log(`Redis at ${redacted(opts.redisUrl)} answers again`);
    });
    // Cut off from Redis past its lease: the daemon records the run lost and runs it elsewhere, so it stops here.
    this.worker.on('lockRenewalFailed', (jobIds: string[]) => {
      for (const jobId of jobIds) this.cancelRun(jobId, `worker ${this.name} could not renew its lease on the run and stopped it`);
    });
  }

  /** Connects, listens for cancels, and takes runs until close(). */
  async start(): Promise<void> {
    await this.subscriber.subscribe(cancelChannel(this.queue));
    if (this.closing) return;
    // Cancels published while this connection was down were heard by nobody: once it listens again, the marks the
    // daemon keeps besides are read for the runs held. (ioredis's own resubscribe goes after 'ready'; this one is
    // awaited, so a cancel is either in a mark read after it or heard.)
    this.subscriber.on('ready', () => {
      this.subscriber
        .subscribe(cancelChannel(this.queue))
        .then(() => this.readCancelMarks([...this.held.keys()]))
        .catch((err: unknown) => this.log(`could not read the cancels of the runs held: ${err instanceof Error ? err.message : String(err)}`));
    });
    this.subscriber.on('message', (_channel: string, text: string) => {
      try {
        const { jobId, reason } = JSON.parse(text) as CancelMessage;
        this.cancelRun(jobId, reason);
      } catch {
        // Not a cancel of ours.
      }
    });
    await this.worker.waitUntilReady();
    if (this.closing) return;
    mkdirSync(this.scratch, { recursive: true });
    this.tellWatchdog();
    this.token = startOrphanWatchdog(this.deadlineFile);
    this.leaseTimer = setInterval(() => this.checkLeases(), Math.max(100, Math.floor(this.leaseMs / 10)));
    this.listenerTimer = setInterval(() => this.checkListener(), Math.min(LISTENER_PING_EVERY_MS, LISTENER_UNANSWERED_MS / 3));
    void this.worker.run();
    this.log(`worker ${this.name} takes runs from queue '${this.queue}' at ${redacted(this.opts.redisUrl)} (concurrency ${this.opts.concurrency ?? 1})`);
  }

  /** Runs being run now. */
  runningCount(): number {
    return this.running.size;
  }

  /**
   * Stops taking runs; with `cancelRuns` the running ones are canceled, otherwise awaited (for as long as they take).
   * Then Redis is given a bounded time to take their outcomes, and the worker stops whether or not it did, saying what
   * it could not tell it. `force` (a second signal) cancels the runs and ends every wait: the worker stops within
   * seconds, Redis answering or not. Called again while stopping, it does what its options add.
   */
  close(options: { cancelRuns?: boolean; force?: boolean } = {}): Promise<void> {
    if (options.cancelRuns || options.force) {
      for (const jobId of this.held.keys()) this.cancelRun(jobId, 'the worker stopped');
      this.worker.cancelAllJobs('the worker stopped');
    }
    if (options.force) this.force();
    return (this.closed ??= this.closeNow());
  }

  private async closeNow(): Promise<void> {
    this.closing = true;
    clearInterval(this.listenerTimer);
    let forced = false;
    void this.forced.then(() => (forced = true));
    // BullMQ's close waits for the runs, then tells Redis their ends and stops its connections: without Redis, for ever.
    const bullClosed = this.worker.close().then(
      () => true,
      (err: unknown) => {
        this.log(`closing the BullMQ worker: ${err instanceof Error ? err.message : String(err)}`);
        return true;
      },
    );
    await Promise.race([this.runsEnded(), this.forced]);
    // A Redis that answers is given the time its writes take (a run's last output, its end): cut at a fixed bound, a
    // run that succeeded would be recorded lost and run again. Only an unanswering one is bounded, or a forced stop.
    if (!forced && this.publisher.status === 'ready') await Promise.race([bullClosed, this.forced]);
    const bound = forced ? FORCED_TELL_MS : this.untold.size > 0 || this.running.size > 0 ? CLOSE_TELL_MS : CLOSE_QUIET_MS;
    let timer: NodeJS.Timeout | undefined;
    const told = await Promise.race([bullClosed, new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), bound)))]);
    clearTimeout(timer);
    this.leftUntold = told && this.publisher.status === 'ready' ? 0 : this.untoldRuns().length;
    if (!told || this.publisher.status !== 'ready') this.log(this.notTold(told ? undefined : bound));
    clearInterval(this.leaseTimer);
    await this.executor.shutdown('the worker stopped');
    // quit() is a command: with Redis away it would wait in the offline queue.
    for (const client of [this.subscriber, this.publisher, this.leaseClient]) {
      if (client.status === 'ready') await Promise.race([client.quit().catch(() => {}), new Promise((r) => setTimeout(r, 500).unref())]);
      client.disconnect();
    }
    rmSync(this.scratch, { recursive: true, force: true });
  }

  /** Once closed: how many runs' ends Redis was not told (0 when it took them all). */
  untoldAtClose(): number {
    return this.leftUntold;
  }

  /** Settles once no run is being run here. */
  private runsEnded(): Promise<void> {
    if (this.running.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.onRunEnded.push(resolve));
  }

  /** The runs whose end Redis has not taken: ended here, or still running (killed as the worker stops). */
  private untoldRuns(): string[] {
    return [...this.untold.values(), ...[...this.running].filter((j) => !this.untold.has(j)).map((j) => `${j} (still running, killed now)`)];
  }

  /** What a worker that stops without Redis having answered could not tell it. */
  private notTold(waitedMs: number | undefined): string {
    const url = redacted(this.opts.redisUrl);
    const why = this.lastError ?? (this.publisher.status === 'ready' ? 'no answer' : `connection ${this.publisher.status}`);
    const head = `stopping while Redis at ${url} does not answer (${why}${waitedMs === undefined ? '' : `; waited ${waitedMs / 1000} s`})`;
    const runs = this.untoldRuns();
    if (runs.length === 0) return `${head}: no run of this worker was left to tell it of`;
    return `${head}: it was not told the end of ${runs.join(', ')}; the daemon records such a run lost once its lease (${this.leaseMs / 1000} s) runs out, and runs it again if it is still wanted`;
  }

  /**
   * BullMQ says each failed reconnect (once a second while Redis is away): said once, with what to do, and again when
   * another error comes or after Redis answered again.
   */
  private onError(err: Error): void {
    const text = err.message;
    // Not a connection's error: the lock of one run, gone (it ran out while Redis was away, or was taken).
    const lock = LOCK_LOST.exec(text);
    if (lock) {
      this.leaseLost(lock[1] ?? lock[2] ?? lock[3] ?? '');
      return;
    }
    if (text === this.lastError) return;
    this.lastError = text;
    if (UNREACHABLE.test(`${(err as NodeJS.ErrnoException).code ?? ''} ${text}`)) {
      // A Redis stopped resets the connection, then refuses each reconnect: one outage, said once.
      if (this.unreachableSaid) return;
      this.unreachableSaid = true;
      this.log(
        `cannot reach Redis at ${redacted(this.opts.redisUrl)}: ${text}; is redis-server running there, and reachable from this machine? (no runs are taken meanwhile; it is tried again every second, and said when it answers)`,
      );
      return;
    }
    this.log(`worker error: ${text}`);
  }

  /**
   * A run whose lease Redis no longer holds for this worker, said once in our words with the run's id (BullMQ says it
   * as "could not renew lock for job <hash>-r-1", then "Missing lock for job <hash>-r-1. moveToFinished" as the end
   * is recorded, each tried again). One the lease check stopped already was said then.
   */
  private leaseLost(jobId: string): void {
    if (this.leaseLostSaid.has(jobId)) return;
    this.noteLeaseLost(jobId);
    const runId = this.held.get(jobId)?.runId ?? runIdOfQueueJob(jobId);
    this.log(
      `${runId}: Redis no longer holds this worker's lease on the run (it ran out while Redis did not answer, or another took it); it is stopped if it still runs, and its end here is not recorded (the daemon records it lost, and runs it again if it is still wanted)`,
    );
  }

  private noteLeaseLost(jobId: string): void {
    this.leaseLostSaid.add(jobId);
    if (this.leaseLostSaid.size > LEASE_LOST_KEPT) this.leaseLostSaid.delete(this.leaseLostSaid.values().next().value!);
  }

  private async run(job: Job<JobLaunch, JobOutcome>, signal: AbortSignal | undefined): Promise<JobOutcome> {
    const sent = job.data;
    const id = sent.job_run_id;
    const logDir = join(this.scratch, job.id ?? id);
    rmSync(logDir, { recursive: true, force: true });
    mkdirSync(logDir, { recursive: true });
    const env = this.token ? { ...sent.env, [WORKER_TOKEN_VAR]: this.token } : sent.env;
    const launch: JobLaunch = { ...sent, env, cwd: this.opts.workdir ?? sent.cwd, log_dir: logDir };
    const outcome = firstValueFrom(this.executor.outcomes$.pipe(filter((o) => o.job_run_id === id)));
    // The lock was set when the run was taken, at processedOn (this worker's clock) or after.
    const jobId = job.id ?? id;
    this.held.set(jobId, { until: (job.processedOn ?? Date.now()) + this.leaseMs, asking: false, runId: id });
    this.tellWatchdog();
    const done = () => {
      this.held.delete(jobId);
      this.canceling.delete(jobId);
    };
    outcome.then(done, done);
    const { pid } = this.executor.start(launch);
    const cancel = () => this.executor.cancel(id, typeof signal?.reason === 'string' ? signal.reason : 'canceled');
    if (signal?.aborted) cancel();
    signal?.addEventListener('abort', cancel, { once: true });
    this.running.add(jobId);
    const ended = () => {
      this.running.delete(jobId);
      if (this.running.size === 0) for (const resolve of this.onRunEnded.splice(0)) resolve();
    };
    this.log(`${id}: started (pid ${pid})`);
    // Canceled as this worker took it (after the daemon found it no longer waiting, before this run listened).
    void this.readCancelMarks([jobId]).catch(() => {});
    const report: PlacementReport = { worker: this.name, pid };
    void job.updateProgress(report as unknown as object).catch(() => {});
    const shipped = this.ship(logStreamKey(this.queue, job.id ?? id), logDir, outcome);
    const got = await outcome;
    // When it ended here, on this worker's clock: the daemon records that, not when Redis took the end (finishedOn),
    // which a Redis away at the time made as late as its return (a 4 s job recorded 8.7 s long).
    const result: JobOutcome = got.status === 'canceled' || got.ended_at ? got : { ...got, ended_at: Date.now() };
    this.log(`${id}: ${result.status}`);
    // Ended here; its output and outcome are Redis's to take (a stop waits a bounded time for that, not for ever).
    this.untold.set(jobId, `${id} (${result.status})`);
    ended();
    await Promise.race([shipped, this.forced]);
    rmSync(logDir, { recursive: true, force: true });
    return result;
  }

  /**
   * Keeps a PING on the cancel listener's connection; one unanswered LISTENER_UNANSWERED_MS gets the connection's socket
   * destroyed, so ioredis connects again at once, and the listener's 'ready' subscribes again and reads the cancel marks
   * of the runs held. Decided after the event loop has read what came in (setImmediate runs after the poll for I/O),
   * so a worker whose own loop was held up finds the answer that waited in its socket before it blames the connection.
   */
  private checkListener(): void {
    if (this.closing) return;
    const sentAt = this.listenerPingSentAt;
    if (sentAt === undefined) {
      // Connecting again already: a PING would wait in ioredis's offline queue.
      if (this.subscriber.status !== 'ready') return;
      const now = Date.now();
      this.listenerPingSentAt = now;
      const answered = (): void => {
        if (this.listenerPingSentAt === now) this.listenerPingSentAt = undefined;
      };
      this.subscriber.ping().then(answered, answered);
      return;
    }
    if (Date.now() - sentAt < LISTENER_UNANSWERED_MS) return;
    setImmediate(() => {
      if (this.closing || this.listenerPingSentAt !== sentAt) return;
      this.listenerPingSentAt = undefined;
      const waited = ((Date.now() - sentAt) / 1000).toFixed(1);
      this.log(`the cancel listener's connection to Redis answered no PING for ${waited} s; connecting it again (the cancels sent meanwhile are read from their marks)`);
      this.subscriber.stream.destroy();
    });
  }

  /** Cancels a run held here (BullMQ aborts its signal, which kills its process group), keeping why. */
  private cancelRun(jobId: string, reason: string): void {
    if (this.held.has(jobId) && !this.canceling.has(jobId)) this.canceling.set(jobId, reason);
    this.worker.cancelJob(jobId, reason);
  }

  /** Cancels the runs among `jobIds` that the daemon marked canceled. */
  private async readCancelMarks(jobIds: string[]): Promise<void> {
    if (jobIds.length === 0) return;
    const reasons = await this.publisher.mget(...jobIds.map((jobId) => cancelMarkKey(this.queue, jobId)));
    jobIds.forEach((jobId, i) => {
      const reason = reasons[i];
      if (typeof reason === 'string') this.cancelRun(jobId, reason);
    });
  }

  /**
   * BullMQ renews a lock only when Redis answers, and learns it lost one only when Redis answers again: cut off (a
   * network partition, a Redis that hangs) a worker would run on for ever while the daemon, past the lease, records
   * the run lost and runs it again elsewhere. So the lock's time left is asked for (PTTL) on a connection of its own,
   * and a run is stopped before the lock is known to hold no longer: one partition is not built by two runs at once.
   */
  private checkLeases(): void {
    const now = Date.now();
    const margin = this.leaseMargin();
    for (const [jobId, lease] of this.held) {
      if (now >= lease.until - margin) {
        this.held.delete(jobId);
        this.noteLeaseLost(jobId);
        // Its lease about to run out unconfirmed: the daemon records it lost then. Whether it runs it again is its
        // want's business (a canceled want does not), and a run being canceled already is only being stopped sooner.
        const asked = this.canceling.get(jobId);
        this.log(
          asked
            ? `${lease.runId}: no word from Redis for its lease while it was being canceled (${asked}); stopping it now`
            : `${lease.runId}: no word from Redis for its lease (${this.leaseMs / 1000} s); stopping the run before the lease ends (the daemon records it lost, and runs it again if it is still wanted)`,
        );
        this.cancelRun(jobId, `worker ${this.name} heard nothing from Redis for the run's lease (${this.leaseMs / 1000} s) and stopped it before the lease ended`);
        continue;
      }
      if (lease.asking) continue;
      lease.asking = true;
      const sent = Date.now();
      this.leaseClient
        .pttl(`${this.worker.toKey(jobId)}:lock`)
        .then((ms) => {
          lease.asking = false;
          if (ms > 0) lease.until = Math.max(lease.until, sent + ms);
        })
        .catch(() => {
          lease.asking = false;
        });
    }
    this.tellWatchdog();
  }

  /** How long before its lock is known to run out a run is stopped. */
  private leaseMargin(): number {
    return Math.min(2000, Math.floor(this.leaseMs / 4));
  }

  /**
   * Tells the watchdog when this worker's runs would have to stop if it did not come back to it: halfway through
   * the margin `checkLeases` keeps, so that a worker that is alive always stops a run itself first (and a watchdog
   * that acts kills only what a stopped or hung worker could not). Runs `checkLeases` is about to stop do not count.
   */
  private tellWatchdog(): void {
    const now = Date.now();
    const margin = this.leaseMargin();
    let deadline: number | undefined;
    for (const lease of this.held.values()) {
      if (lease.until - margin <= now) continue;
      const at = lease.until - margin / 2;
      deadline = deadline === undefined ? at : Math.min(deadline, at);
    }
    try {
      writeLeaseDeadline(this.deadlineFile, deadline);
    } catch (err) {
      this.log(`could not tell the watchdog the lease deadline: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  /**
   * Copies the run's two log files into its Redis stream as they grow, byte for byte, then marks the stream's end.
   * What 100 ms brought goes as one entry a file, cut at LOG_CHUNK_BYTES: the stream's cap (in entries) bounds its bytes.
   */
  private async ship(key: string, logDir: string, done: Promise<JobOutcome>): Promise<void> {
    const done$ = new Subject<void>();
    void done.then(() => done$.next());
    const follow = (file: string, s: 'out' | 'err') => followFileChunks(join(logDir, file), done$).pipe(map(({ bytes }) => ({ s, bytes: Buffer.from(bytes) })));
    const chunks$ = merge(follow(STDOUT_LOG, 'out'), follow(STDERR_LOG, 'err'));
    const writes: Promise<unknown>[] = [];
    // Each chunk numbered (1 up): the daemon tells from a gap that the stream's cap dropped chunks it had not copied.
    let chunks = 0;
    await new Promise<void>((resolve) =>
      chunks$.pipe(bufferTime(100, null, 64)).subscribe({
        next: (batch) => {
          if (batch.length === 0) return;
          const pipeline = this.publisher.pipeline();
          for (const s of ['out', 'err']) {
            const bytes = Buffer.concat(batch.filter((b) => b.s === s).map((b) => b.bytes));
            for (let at = 0; at < bytes.length; at += LOG_CHUNK_BYTES) {
              pipeline.xadd(key, 'MAXLEN', '~', LOG_STREAM_MAXLEN, '*', 's', s, 'n', String(++chunks), 'd', bytes.subarray(at, at + LOG_CHUNK_BYTES));
            }
          }
          writes.push(pipeline.exec());
        },
        complete: () => resolve(),
        // A log file that cannot be read (its directory removed, EIO): said, and the run's end still marked.
        error: (err: unknown) => {
          this.log(`could not read the output of the run at ${logDir} to ship it: ${err instanceof Error ? err.message : String(err)}`);
          resolve();
        },
      }),
    );
    await Promise.allSettled(writes);
    await this.publisher.multi().xadd(key, '*', 'end', '1').expire(key, LOG_STREAM_TTL_SECONDS).exec().catch(() => {});
  }

  private log(line: string): void {
    (this.opts.log ?? ((l: string) => process.stdout.write(`${l}\n`)))(line);
  }
}
