/**
 * `platform stop`: graceful shutdown of the workspace's daemon. Checks through `/api/status` that the pid in
 * server.json is really this workspace's server (or, when it does not answer, that its command line is this
 * workspace's `platform serve`), sends it SIGTERM (it finishes in-flight requests, leaves running job runs to their
 * supervisors, removes server.json; with --cancel-runs SIGUSR2: it kills them and records them canceled), and waits
 * until the process is gone and server.json with it. A daemon still starting (no server.json until it listens: a
 * long replay of its log) is found by its server-starting.json and stopped the same way, its command line checked (one
 * just spawned, from the client's news, once it has set its signal handlers).
 * No server: says so and exits 0 (a stale server.json is removed on the way; a live pid we cannot vouch for is never
 * signalled).
 */
import type { Command } from 'commander';
import { describeProbe, removeStaleServerInfo, workspaceRootFor } from '../../client/server-connection.js';
import { removeServerInfo } from '../../client/server-info.js';
import { liveStartingInfo, removeStartingInfo, startAnnounced, startingWords, type StartingInfo } from '../../client/server-starting.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { serverLogPath } from '../../client/start-daemon.js';
import { isWorkspaceServe, probeServer, terminateServer, type ServerStatus } from '../../client/server-probe.js';
import { NoTokenError, NotADaemonError, serverUrlStatus } from '../../client/server-url-daemon.js';
import { errorMessage } from '../../errors.js';
import { closeIdleConnections } from '../../client/http-fetch.js';
import { globalOptions } from '../global-options.js';
import { duration, parsedOption } from '../option-parsers.js';

export function registerStop(program: Command): void {
  program
    .command('stop')
    .description("stop the workspace's server gracefully (supervised job runs go on and the next server follows them; --cancel-runs: kill every run); no server is not an error")
    .addOption(parsedOption('--timeout <duration>', 'how long to wait for it to exit (90, 90s, 5m)', duration).default(40_000, '40s'))
    .option('--cancel-runs', 'kill the running job runs and record them canceled (they are built again when wanted)')
    .action(async (opts: { timeout: number; cancelRuns?: boolean }, cmd: Command) => {
      const g = globalOptions(cmd);
      const timeoutMs = opts.timeout;
      const say = (human: string, json: object): void => {
        process.stdout.write(g.json ? `${JSON.stringify(json)}\n` : `${human}\n`);
      };

      let pid: number;
      let root: string;
      // How many runs it had going, to say what becomes of them (unknown when it did not answer).
      let running: number | undefined;
      let kind: string | undefined;
      if (g.serverUrl) {
        const url = g.serverUrl;
        let status: ServerStatus;
        try {
          status = await serverUrlStatus(url, g.workspace);
        } catch (err) {
          // It runs (without its token, or is something else answering there), and is not stopped: an error, not
          // "nothing to stop".
          if (err instanceof NoTokenError || err instanceof NotADaemonError) throw new Error(`${err.message} It was not stopped.`);
          say(`No server answers at ${url}; nothing to stop.`, { stopped: false, url, reason: errorMessage(err) });
          return;
        }
        pid = status.pid;
        root = status.workspace_root;
        running = status.counts.running_job_runs;
        kind = status.executor?.kind;
        // The pid is the server's word: signalled only if it is a platform serve of that workspace on this machine
        // (a server elsewhere, behind a tunnel, names a pid of its own machine; anything may answer a URL).
        if (!isWorkspaceServe(pid, root)) {
          throw new Error(
            `The server at ${url} says it is pid ${pid}, serving ${root}, but no such platform serve runs on this machine (it runs elsewhere, e.g. behind a tunnel, or is not platform): it was not stopped, and nothing was signalled. Stop it where it runs.`,
          );
        }
      } else {
        root = workspaceRootFor(g.workspace);
        const deadline = Date.now() + timeoutMs;
        let probe = await probeServer(root);
        // A daemon just spawned, named only by its client's news, is waited for until it says so itself (it has set
        // its signal handlers then: a SIGTERM ends its start cleanly, not kills it mid-load, and a SIGUSR2 cancels its
        // runs), or until it listens (a small log: its news may come and go between two looks).
        while (isStarting(probe) && spawnedOnly(root) && Date.now() < deadline) {
          await sleep(25);
          probe = await probeServer(root);
        }
        if (probe.state === 'absent' || (probe.state === 'stale' && !probe.stopFirst) || !probe.info) {
          if (probe.state === 'stale') removeStaleServerInfo(root, probe);
          // No server.json until it listens: a daemon still starting (replaying a long log) is found by its news.
          const starting = liveStartingInfo(root);
          if (starting && isWorkspaceServe(starting.pid, root)) {
            await stopStarting(root, starting, timeoutMs, opts.cancelRuns === true, say);
            return;
          }
          say(`No server running for ${root} (${describeProbe(probe)}); nothing to stop.`, {
            stopped: false,
            workspace_root: root,
            reason: describeProbe(probe),
          });
          return;
        }
        // Running, not answering (this workspace's serve by its command line), or of another version: ours to stop.
        pid = probe.info.pid;
        if (probe.state === 'running') {
          running = probe.status.counts.running_job_runs;
          kind = probe.status.executor?.kind;
        }
      }

      // Our own kept-alive connections (the status we read) would hold the stop for its grace period.
      closeIdleConnections();
      await terminateServer(pid, timeoutMs, opts.cancelRuns ? 'SIGUSR2' : 'SIGTERM');
      // The server removes its server.json on the way out; if it died before it could, tidy up for it.
      removeServerInfo(root, pid);
      const runs = running === undefined || running === 0 ? '' : `${running} job run${running === 1 ? '' : 's'}`;
      // In-process runs end with their server; asked, the others are canceled unless the server had already left
      // them going (a stop before this one): its log says which.
      const asked = opts.cancelRuns === true && !!runs;
      const inProcess = kind === 'in-process' && !!runs;
      const after = !runs
        ? ''
        : asked
          ? `; asked to cancel its ${runs} (see ${serverLogPath(root)} for how it went)`
          : inProcess
            ? `; ${runs} canceled with it (built again when wanted)`
            : `; ${runs} go${running === 1 ? 'es' : ''} on (the next server follows ${running === 1 ? 'it' : 'them'} to the end)`;
      say(`Stopped server (pid ${pid})${after}`, { stopped: true, pid, workspace_root: root, while_starting: false, job_runs_running: running ?? null, job_runs_cancel_asked: asked, job_runs_canceled_with_server: inProcess });
    });
}

/** No server to stop by its server.json: absent, or stale and not ours to stop. */
function isStarting(probe: Awaited<ReturnType<typeof probeServer>>): boolean {
  return probe.state === 'absent' || (probe.state === 'stale' && !probe.stopFirst);
}

/** A live start known only from the news its spawning client wrote. */
function spawnedOnly(root: string): boolean {
  const starting = liveStartingInfo(root);
  return starting !== undefined && !startAnnounced(root, starting.pid);
}

/**
 * A daemon of this workspace that is starting: SIGTERM ends its start where it is (serve-command.ts: its replay has
 * only read the log), and it touches no job run. With --cancel-runs (SIGUSR2) it finishes its start first, since it
 * must read its state to know its runs, then cancels them as it stops.
 */
async function stopStarting(
  root: string,
  starting: StartingInfo,
  timeoutMs: number,
  cancelRuns: boolean,
  say: (human: string, json: object) => void,
): Promise<void> {
  const { pid } = starting;
  await terminateServer(pid, timeoutMs, cancelRuns ? 'SIGUSR2' : 'SIGTERM');
  // It removes its news (and, had it come to listen meanwhile, its server.json) on the way out; if it died first, tidy up.
  removeStartingInfo(root, pid);
  removeServerInfo(root, pid);
  const after = cancelRuns ? `; it finished its start to cancel its job runs (see ${serverLogPath(root)} for how it went)` : '';
  say(`Stopped server (pid ${pid}) while it was starting, ${startingWords(starting)}${after}`, {
    stopped: true,
    pid,
    workspace_root: root,
    while_starting: true,
    starting,
    job_runs_running: null,
    job_runs_cancel_asked: cancelRuns,
    job_runs_canceled_with_server: false,
  });
}
