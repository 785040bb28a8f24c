import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, realpathSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Executor } from '../../executor/executor-port.js';
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
async function redisExecutor(url: string): Promise<(workspaceRoot: string) => Executor> {
  const { RedisExecutor } = await import('../../executor/redis/redis-executor.js');
  return (workspaceRoot) => new RedisExecutor({ redisUrl: url, workspaceRoot });
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
      const root = serveRoot(globalOptions(cmd).workspace);
      mkdirSync(platformDir(root), { recursive: true, mode: 0o700 });
      // Only the owner may look inside: it holds the token, the log and the job logs.
      chmodSync(platformDir(root), 0o700);
      const token = randomBytes(32).toString('base64url');
      // Handlers first: a signal while opening or binding still ends the daemon through a clean shutdown.
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
      // The orchestrator starts only once the port is bound: a daemon that cannot listen touches no job run.
      // Local runs under supervisors of their own: a daemon that stops, crashes or is upgraded leaves them running.
      const envExecutor = process.env.PLATFORM_EXECUTOR;
      const where = opts.executor ?? (envExecutor ? executorChoice('PLATFORM_EXECUTOR')(envExecutor) : executorInGraphFile(root) ?? 'local');
      const executor = where === 'local' ? 'supervised' : where === 'in-process' ? 'in-process' : await redisExecutor(where);
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
      let replayedWhenStopped: StartProgress | undefined;
      const onStartProgress = (p: StartProgress): void => {
        // Stopped while it replays: so far it has only read the log, so it goes now rather than after the replay (a
        // million events take ~30 s). Not when asked to cancel the runs: it must read its state to know them.
        if (stopRequested && !cancelRuns) {
          replayedWhenStopped = p;
          throw new StartStopped(`stopped by ${stopRequested} while it replayed its event log`);
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
          const { events_replayed: done, events_to_replay: of } = replayedWhenStopped;
          process.stderr.write(
            `platform: stopped by ${stopRequested} while starting, after ${groupDigits(done)} of ${groupDigits(of)} events of its replay (the next start replays the log again); job runs go on under their supervisors\n`,
          );
          process.exit(0);
        }
        throw err;
      }
      // It holds the log now: whatever news is there is its own or a dead start's.
      clearStartingInfo(root);
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
