/**
 * `platform status`: is the workspace's daemon running, and what is it (pid, port, uptime, workspace, version,
 * counts, executor, where its state came from at start)? It never starts one. Exit codes: 0 when a server runs; 3
 * when none does (as LSB `status` scripts do) or the one there does not answer, so `platform status >/dev/null && ...`
 * tests for a usable server; 1 for errors (e.g. no workspace).
 */
import { groupDigits } from '../../group-digits.js';
import type { Command } from 'commander';
import { describeProbe, workspaceRootFor } from '../../client/server-connection.js';
import { probeServer, type ServerStatus } from '../../client/server-probe.js';
import { NoTokenError, NotADaemonError, serverUrlStatus } from '../../client/server-url-daemon.js';
import { serverLogPath } from '../../client/start-daemon.js';
import { liveStartingInfo, startingWords } from '../../client/server-starting.js';
import { stateStartWords } from '../../api/state-start.js';
import { workerCountWords } from '../../api/executor-health.js';
import { errorMessage } from '../../errors.js';
import { globalOptions } from '../global-options.js';
import { colors } from '../output.js';
import { graphRefused } from '../graph-refused.js';

export const EXIT_NOT_RUNNING = 3;

export function formatUptime(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  const d = Math.floor(s / 86_400);
  const h = Math.floor((s % 86_400) / 3_600);
  const m = Math.floor((s % 3_600) / 60);
  const parts = [d ? `${d}d` : '', h ? `${h}h` : '', m ? `${m}m` : '', `${s % 60}s`].filter(Boolean);
  return parts.join(' ');
}

export function formatStatus(url: string, st: ServerStatus): string {
  const c = st.counts;
  return [
    `Server running for ${st.workspace_root}`,
    `  pid        ${st.pid}`,
    `  port       ${st.port}  (${url})`,
    `  uptime     ${formatUptime(st.uptime_seconds)}  (since ${st.started_at})`,
    `  workspace  ${st.workspace_root}`,
    `  version    ${st.version}`,
    `  counts     ${groupDigits(c.wants)} wants, ${groupDigits(c.job_runs)} job runs (${groupDigits(c.running_job_runs)} running), ${groupDigits(c.partitions)} partitions, ` +
      `${c.queued_commands} queued commands`,
    `  executor   ${executorLine(st.executor)}`,
    // Only when what is configured is not what is in use: why, and what to do.
    ...(st.executor_config?.note ? [`             ${colors.yellow(st.executor_config.note)}`] : []),
    `  state      ${startLine(st.start)}`,
    // Only when refused: a valid file (null) or an older daemon (undefined) says nothing here.
    ...(st.graph_problem ? [`  graph      ${colors.red(graphRefused(st.graph_problem))}`] : []),
  ].join('\n');
}

/** Where the state came from at start: a start that could not use its snapshot replayed the log, and took longer. */
function startLine(s: ServerStatus['start'] | undefined): string {
  if (!s) return 'not said (an older daemon)';
  return `${stateStartWords(s)}, in ${formatMs(s.duration_ms)}`;
}

function formatMs(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}

const LAUNCHER_COST = 'each run ~1.5 ms slower to start: no C compiler built the native one, or PLATFORM_LAUNCHER chose it';

/** Where runs go and whether they can run there; a problem in red (it is why runs wait). */
function executorLine(e: ServerStatus['executor'] | undefined): string {
  if (!e) return 'not said (an older daemon)';
  const counted = workerCountWords(e);
  const workers = counted !== null ? `, ${counted}` : '';
  // An older daemon says nothing of its launcher (undefined); the shell one costs each run more: said.
  const launcher = e.launcher ? `, ${e.launcher} launcher${e.launcher === 'native' ? '' : ` (${LAUNCHER_COST})`}` : '';
  const head = `${e.kind} (${e.where}${workers}${launcher})`;
  return e.problem ? `${head}\n             ${colors.red(e.problem)}` : head;
}

export function registerStatus(program: Command): void {
  program
    .command('status')
    .description("show the workspace's server: pid, port, uptime, workspace, version, counts, where runs go, where its state came from at start, whether platform.json is refused (never starts one; exit 3 when none runs)")
    .action(async (_opts: unknown, cmd: Command) => {
      const g = globalOptions(cmd);
      const print = (human: string, json: object): void => {
        process.stdout.write(g.json ? `${JSON.stringify(json, null, 2)}\n` : `${human}\n`);
      };
      if (g.serverUrl) {
        const url = g.serverUrl;
        try {
          const st = await serverUrlStatus(url, g.workspace);
          print(formatStatus(url, st), { running: true, url, ...st });
        } catch (err) {
          // It answers: not "no server" (exit 3), but one this command may not read, an error.
          if (err instanceof NoTokenError || err instanceof NotADaemonError) throw err;
          print(`No server answers at ${url}: ${errorMessage(err)}`, { running: false, url, reason: errorMessage(err) });
          process.exitCode = EXIT_NOT_RUNNING;
        }
        return;
      }
      const root = workspaceRootFor(g.workspace);
      const probe = await probeServer(root);
      if (probe.state === 'running') {
        print(formatStatus(probe.url, probe.status), { running: true, url: probe.url, ...probe.status });
        return;
      }
      const reason = describeProbe(probe);
      if (probe.state === 'unresponsive') {
        // Alive, but not answering: say so rather than "no server" (it holds the workspace; another cannot start).
        const pid = probe.info.pid;
        print(`The server of ${root} (pid ${pid}) does not answer (${probe.reason}); it may be shutting down, or stalled. See ${serverLogPath(root)}; 'platform stop' or 'kill ${pid}'.`, {
          running: false,
          workspace_root: root,
          pid,
          reason,
        });
        process.exitCode = EXIT_NOT_RUNNING;
        return;
      }
      // Starting, and replaying a long log (no server.json until it listens): how far it got, not "no server".
      const starting = liveStartingInfo(root);
      if (starting) {
        print(`The server of ${root} (pid ${starting.pid}) is starting, ${startingWords(starting)}. Commands wait for it.`, {
          running: false,
          workspace_root: root,
          starting,
          reason: `starting, ${startingWords(starting)}`,
        });
        process.exitCode = EXIT_NOT_RUNNING;
        return;
      }
      print(`No server running for ${root} (${reason}). Commands that need one start it; 'platform start' does only that.`, {
        running: false,
        workspace_root: root,
        reason,
      });
      process.exitCode = EXIT_NOT_RUNNING;
    });
}
