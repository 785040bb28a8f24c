import { randomBytes } from 'node:crypto';
import { someNamed } from '../../some-named.js';
import { chmodSync, mkdirSync, readFileSync, realpathSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Executor } from '../../executor/executor-port.js';
import type { ExecutorConfigStatus } from '../../api/executor-config.js';
import type { BuildState } from '../../state/build-state.js';
import type { Observable } from 'rxjs';
import {
  decideExecutor,
  describeExecutor,
  readExecutorRecord,
  sameExecutor,
  specOf,
  writeExecutorRecord,
  type ExecutorSpec,
} from '../../executor/executor-record.js';
import type { Command } from 'commander';
import { platformDirId, writeServerInfo, removeServerInfo } from '../../client/server-info.js';
import { clearStartingInfo, removeStartingInfo, writeStartingInfo } from '../../client/server-starting.js';
import { errorMessage } from '../../errors.js';
import { StartStopped, type StartProgress } from '../../state/store-start.js';
import { groupDigits } from '../../group-digits.js';
import { NoWorkspaceError, findWorkspaceRoot, platformDir } from '../../client/workspace.js';
import type { RunningServer } from '../../server/http-server.js';
import { parseDuration } from '../../duration.js';
import { VERSION } from '../../version.js';
import { markDaemonServed } from '../daemon-served.js';
import { globalOptions } from '../global-options.js';
import { duration, executorChoice, parsedOption, wholeNumber, type ExecutorChoice } from '../option-parsers.js';

/** How often a start that replays its log says how far it got (and how long one goes before it says anything). */
const START_PROGRESS_MS = 250;

/** The workspace to serve: -C, else the nearest one above, else this directory (serve starts at the root). */
function serveRoot(workspace: string | undefined): string {
  // Its real path, as the CLI's (findWorkspaceRoot): jobs are told it, and a link to it may go.
  if (workspace) {
    const dir = resolve(workspace);
    try {
      return realpathSync(dir);
    } catch {
      return dir;
    }
  }
  try {
    return findWorkspaceRoot(process.cwd());
  } catch (err) {
    if (err instanceof NoWorkspaceError) return process.cwd();
    throw err;
  }
}

/** `"executor"` in platform.json, checked like the option (a bad value stops the daemon with the file's name). */
function executorInGraphFile(root: string): ExecutorChoice | undefined {
  let raw: unknown;
  try {
    raw = (JSON.parse(readFileSync(join(root, 'platform.json'), 'utf8')) as { executor?: unknown }).executor;
  } catch {
    return undefined; // no file, or not JSON: the graph loader says what is wrong with it
  }
  if (raw === undefined) return undefined;
  return executorChoice(`"executor" in ${join(root, 'platform.json')}`)(String(raw));
}

/** Runs on platform workers through the BullMQ queue at `url` (the Redis client is loaded only here). */
async function redisExecutor(url: string, queue: string, workspaceRoot: string): Promise<Executor> {
  const { RedisExecutor } = await import('../../executor/redis/redis-executor.js');
  return new RedisExecutor({ redisUrl: url, workspaceRoot, queue });
}

/** Words for where the configuration comes from, as a sentence begins. */
function configuredWords(by: ExecutorConfigStatus['configured_by'], spec: ExecutorSpec): string {
  const what = describeExecutor(spec);
  if (by === 'option') return `--executor says ${what}`;
  if (by === 'environment') return `$PLATFORM_EXECUTOR says ${what}`;
  if (by === 'platform.json') return `platform.json says executor ${what}`;
  return `the executor configured is ${what} (the default: no "executor" in platform.json)`;
}

/**
 * The daemon's executor, chosen once as it starts (after its state is read: the runs in flight and where they were
 * placed decide), recorded in .platform/executor.json before any run is handed over or followed; and, from then
 * on, what is configured against what is in use, for `/api/status` and the server log.
 */
class ExecutorChoiceAtStart {
  private inUse: ExecutorSpec | undefined;
  /** Runs in flight at the start on the executor kept for them, when it is not the configured one. */
  private held: string[] | undefined;
  /** The configured values already said in the server log. */
  private readonly said = new Set<string>();
  private platform: { state(): BuildState } | undefined;

  constructor(
    private readonly root: string,
    private configured: ExecutorSpec,
    private configuredBy: ExecutorConfigStatus['configured_by'],
  ) {}

  async executorFor(workspaceRoot: string, state: BuildState): Promise<Executor> {
    const running = [...state.job_runs_by_status.running].map(([, id]) => ({ job_run_id: id, worker: state.job_runs.get(id)?.worker ?? '' }));
    // The record is read only when runs are in flight: only then does it decide anything (and a damaged one matter).
    const decision = decideExecutor(this.configured, running.length > 0 ? readExecutorRecord(platformDir(this.root)) : undefined, running);
    if ('refused' in decision) throw new Error(`not started: ${decision.refused}`);
    const use = decision.use;
    if (decision.assumed) process.stderr.write(`platform: ${decision.assumed}\n`);
    if (decision.held) {
      this.held = decision.held.runs;
      const n = this.held.length;
      process.stderr.write(
        `platform: ${configuredWords(this.configuredBy, this.configured)}; ${n} job run${n === 1 ? ' is' : 's are'} still on ${describeExecutor(use)} (${someNamed(this.held)}), placed there by an earlier daemon: ` +
          `this daemon uses ${describeExecutor(use)} until they end, then restart it to switch (platform stop; the next command starts it)\n`,
      );
    }
    // Before any run is handed over or followed: a next daemon reads where the runs in flight are from it.
    writeExecutorRecord(platformDir(this.root), use);
    this.inUse = use;
    this.said.add(describeExecutor(this.configured));
    // Loaded here, as the rest of the daemon (serve-command.ts is loaded by every CLI command).
    if (use.kind === 'local') return new (await import('../../executor/supervised-executor.js')).SupervisedExecutor({ workspaceRoot });
    if (use.kind === 'in-process') return new (await import('../../executor/in-process-executor.js')).InProcessExecutor(workspaceRoot);
    return redisExecutor(use.url, use.queue, workspaceRoot);
  }

  /**
   * platform.json's executor, read again each time an edit of it is taken into use (a daemon configured by the option
   * or the environment goes by those): a change is not applied live, and is said once in the server log.
   */
  watch(platform: { state(): BuildState; graph$: Observable<unknown>; executorConfig: (() => ExecutorConfigStatus) | undefined }): void {
    this.platform = platform;
    platform.executorConfig = () => this.status();
    if (this.configuredBy === 'option' || this.configuredBy === 'environment') return;
    // graph$ gives the graph in use first, then each edit taken into use.
    let first = true;
    platform.graph$.subscribe(() => {
      if (first) return void (first = false);
      let now: ExecutorSpec;
      let inFile: ExecutorChoice | undefined;
      try {
        inFile = executorInGraphFile(this.root);
        now = specOf(inFile ?? 'local');
      } catch (err) {
        process.stderr.write(`platform: ${errorMessage(err)}; the daemon goes on with ${this.inUse ? describeExecutor(this.inUse) : 'its executor'}\n`);
        return;
      }
      this.configured = now;
      // Where it comes from changes with the edit too: an "executor" added to the file read as the default's, with
      // "no executor in platform.json" (and one removed as the file's).
      this.configuredBy = inFile === undefined ? 'default' : 'platform.json';
      const words = describeExecutor(now);
      if (this.said.has(words)) return;
      this.said.add(words);
      const note = this.status().note;
      if (note) process.stderr.write(`platform: platform.json's executor changed: ${note}\n`);
    });
  }

  private status(): ExecutorConfigStatus {
    const inUse = this.inUse ?? this.configured;
    const differs = !sameExecutor(inUse, this.configured);
    const state = this.platform?.state();
    // Every run in flight, not only those found at the start: a held daemon places its new runs on the held executor,
    // and a restart while any of them runs holds it again.
    const still = this.held && state ? state.job_runs_by_status.running.size : null;
    const said = configuredWords(this.configuredBy, this.configured);
    const use = describeExecutor(inUse);
    let note: string | null = null;
    if (differs && still !== null && still > 0) {
      note =
        `${said}; ${still} job run${still === 1 ? ' is' : 's are'} still on ${use}: this daemon uses ${use} (new runs too) until none is in flight, then restart to switch ` +
        `(platform stop; the next command starts it on ${describeExecutor(this.configured)}); or now, with 'platform stop --cancel-runs' (the runs are canceled and built again, there)`;
    } else if (differs && this.held) {
      note = `${said}; this daemon uses ${use}, kept at its start for job runs placed there, which have ended: restart the daemon to use ${describeExecutor(this.configured)} (platform stop; the next command starts it)`;
    } else if (differs) {
      note = `${said}, changed since this daemon started; it uses ${use}: restart the daemon to use it (an executor is not changed live; platform stop, and the next command starts it)`;
    }
    return { in_use: use, configured: describeExecutor(this.configured), configured_by: this.configuredBy, differs, held_runs: this.held ? still : null, note };
  }
}

/** Whether `err`, or an error it wraps (its `cause`, a few deep: Platform.open wraps what the state store threw), is StartStopped. */
function startStopped(err: unknown): boolean {
  for (let e = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) if (e instanceof StartStopped) return true;
  return false;
}

export function registerServe(program: Command): void {
  program
    .command('serve')
    .description('run the workspace daemon in the foreground (the CLI starts one on demand)')
    .addOption(
      parsedOption('--port <port>', 'TCP port on 127.0.0.1 (0 = any free port)', wholeNumber({ max: 65535, note: '0 = any free port' })).default(8080),
    )
    .addOption(
      parsedOption(
        '--idle-timeout <duration>',
        'shut down after this long without requests or running jobs (90, 90s, 5m, 3h, 1d; default: $PLATFORM_IDLE_TIMEOUT, else 3h)',
        duration,
      ),
    )
    .addOption(
      parsedOption(
        '--executor <where>',
        'where job runs run: local (each under a supervisor of its own, so they outlive the daemon), in-process (they end with it) or redis://host:port (on platform workers; see docs/scale-out.md); default: $PLATFORM_EXECUTOR, else "executor" in platform.json, else local',
        executorChoice,
      ),
    )
    .option('--require-token', 'require the token of .platform/server.json of every request but /health (what `platform start` and the CLI do; docs/SECURITY.md)')
    // The idle timer is exact now; the option stays accepted (and checked) so scripts that pass it keep working.
    .addOption(parsedOption('--idle-check-interval <duration>', 'no longer needed: the idle timeout is timed exactly', duration))
    .action(async (opts: { port: number; idleTimeout?: number; idleCheckInterval?: number; executor?: ExecutorChoice; requireToken?: boolean }, cmd: Command) => {
      const { port } = opts;
      const root = serveRoot(globalOptions(cmd).workspace);
      mkdirSync(platformDir(root), { recursive: true, mode: 0o700 });
      // Only the owner may look inside: it holds the token, the log and the job logs.
      chmodSync(platformDir(root), 0o700);
      // Handlers first, before the ~0.3 s of loading below: a signal while loading, opening or binding still ends the
      // daemon through a clean shutdown (`platform stop` waits for the news below, written once they are set).
      let stopRequested: NodeJS.Signals | undefined;
      let server: RunningServer | undefined;
      let cancelRuns = false;
      const stop = (signal: NodeJS.Signals) => {
        stopRequested ??= signal;
        void server?.close({ cancelRuns });
      };
      process.on('SIGINT', stop);
      process.on('SIGTERM', stop);
      // `platform stop --cancel-runs`: the running job runs are killed and recorded canceled instead of left running.
      process.on('SIGUSR2', (signal) => {
        cancelRuns = true;
        stop(signal);
      });
      // A start says so as it begins, and how far its replay of the log got every 250 ms (server-starting.ts): a
      // client that waits for it, or finds it starting, waits as long as it goes on. Only news: a file that cannot be
      // written is said once in the log, and the start goes on.
      const startedAt = new Date().toISOString();
      let reported = 0;
      let unwritten = false;
      const tell = (p: StartProgress): void => {
        try {
          writeStartingInfo(root, { pid: process.pid, started_at: startedAt, ...p });
        } catch (err) {
          if (!unwritten) process.stderr.write(`platform: could not write .platform/server-starting.json (${errorMessage(err)}); clients see no progress of this start\n`);
          unwritten = true;
        }
      };
      tell({ events_replayed: 0, events_to_replay: 0, snapshot_unused: null });
      // Loaded here, not at the top: every other command is a thin HTTP client and starts without express,
      // LevelDB and protobufjs (about 450 modules, 300 ms of each CLI call).
      const [{ Platform }, { DEFAULT_IDLE_TIMEOUT_MS, startHttpServer }] = await Promise.all([
        import('../../platform.js'),
        import('../../server/http-server.js'),
      ]);
      // The environment sets the default, so daemons the CLI starts on demand (tests, CI) can be short-lived.
      const envIdle = process.env.PLATFORM_IDLE_TIMEOUT;
      const idleTimeoutMs =
        opts.idleTimeout ?? (envIdle ? parseDuration(envIdle, 'PLATFORM_IDLE_TIMEOUT') : DEFAULT_IDLE_TIMEOUT_MS);
      const token = randomBytes(32).toString('base64url');
      // The orchestrator starts only once the port is bound: a daemon that cannot listen touches no job run.
      // Local runs under supervisors of their own: a daemon that stops, crashes or is upgraded leaves them running.
      const envExecutor = process.env.PLATFORM_EXECUTOR;
      const fromFile = opts.executor === undefined && !envExecutor ? executorInGraphFile(root) : undefined;
      const where = opts.executor ?? (envExecutor ? executorChoice('PLATFORM_EXECUTOR')(envExecutor) : fromFile ?? 'local');
      const configuredBy: ExecutorConfigStatus['configured_by'] = opts.executor ? 'option' : envExecutor ? 'environment' : fromFile ? 'platform.json' : 'default';
      // The executor is the configured one unless runs in flight were placed on another: this daemon then keeps that
      // one until they have ended (executor-record.ts), so that they are followed to their end, not lost or run twice.
      const choice = new ExecutorChoiceAtStart(root, specOf(where), configuredBy);
      const executor = (workspaceRoot: string, state: BuildState) => choice.executorFor(workspaceRoot, state);
      let replayedWhenStopped: StartProgress | undefined;
      const onStartProgress = (p: StartProgress): void => {
        // Stopped while it replays: so far it has only read the log, so it goes now rather than after the replay (a
        // million events take ~30 s). Not when asked to cancel the runs: it must read its state to know them.
        if (stopRequested && !cancelRuns) {
          replayedWhenStopped = p;
          throw new StartStopped(`stopped by ${stopRequested} while it ${(p.snapshot_bytes ?? 0) > 0 ? 'read its snapshot' : 'replayed its event log'}`);
        }
        const now = Date.now();
        if (now - reported < START_PROGRESS_MS) return;
        reported = now;
        tell(p);
      };
      let platform: Awaited<ReturnType<typeof Platform.open>>;
      try {
        platform = await Platform.open(root, { start: false, executor, onStartProgress });
      } catch (err) {
        removeStartingInfo(root, process.pid);
        if (replayedWhenStopped && startStopped(err)) {
          // Platform.open closed the log on its way out: nothing was written, and no job run was touched.
          const { events_replayed: done, events_to_replay: of, snapshot_bytes: bytes = 0 } = replayedWhenStopped;
          const where =
            bytes > 0
              ? `while it read its snapshot (the next start reads it again)`
              : `after ${groupDigits(done)} of ${groupDigits(of)} events of its replay (the next start replays the log again)`;
          process.stderr.write(`platform: stopped by ${stopRequested} while starting, ${where}; job runs go on under their supervisors\n`);
          process.exit(0);
        }
        throw err;
      }
      // It holds the log now: whatever news is there is its own or a dead start's.
      clearStartingInfo(root);
      choice.watch(platform);
      // Stopped before it listened (while it loaded or read its state): it goes without listening, as from a replay.
      if (stopRequested && !cancelRuns) {
        await platform.close();
        process.stderr.write(`platform: stopped by ${stopRequested} while starting, before it listened; job runs go on under their supervisors\n`);
        process.exit(0);
      }
      try {
        server = await startHttpServer(platform, { port, idleTimeoutMs, ...(opts.requireToken ? { token } : {}) });
      } catch (err) {
        await platform.close();
        throw err;
      }
      // Its compile cache is worth writing now (compile-cache.ts).
      markDaemonServed();
      writeServerInfo(root, {
        pid: process.pid,
        port: server.port,
        started_at: new Date().toISOString(),
        workspace_root: root,
        version: VERSION,
        token,
        platform_dir_id: platformDirId(root),
      });
      if (stopRequested !== undefined) void server.close({ cancelRuns });
      else platform.start();
      await server.closed;
      removeServerInfo(root, process.pid);
      process.exit(0);
    });
}
