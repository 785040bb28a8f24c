/**
 * `platform stop`: graceful shutdown of the workspace's daemon. Checks through `/api/status` that the pid in
 * server.json is really this workspace's server, sends it SIGTERM (it finishes in-flight requests, records
 * running job runs as canceled, removes server.json), and waits until the process is gone and server.json with
 * it. No server: says so and exits 0 (a stale server.json with a dead pid is removed on the way).
 */
import { rmSync } from 'node:fs';
import type { Command } from 'commander';
import { describeProbe, workspaceRootFor } from '../../client/server-connection.js';
import { removeServerInfo, serverInfoPath } from '../../client/server-info.js';
import { fetchStatus, probeServer, terminateServer, type ServerStatus } from '../../client/server-probe.js';
import { isPidAlive } from '../../executor/process-executor.js';
import { globalOptions } from '../global-options.js';

export function registerStop(program: Command): void {
  program
    .command('stop')
    .description("stop the workspace's server gracefully (running job runs are recorded canceled); no server is not an error")
    .option('--timeout <seconds>', 'how long to wait for it to exit', '40')
    .action(async (opts: { timeout: string }, cmd: Command) => {
      const g = globalOptions(cmd);
      const timeoutMs = Math.max(1, Number(opts.timeout) || 40) * 1000;
      const say = (human: string, json: object): void => {
        process.stdout.write(g.json ? `${JSON.stringify(json)}\n` : `${human}\n`);
      };

      let status: ServerStatus;
      let root: string | undefined;
      if (g.serverUrl) {
        const url = g.serverUrl.replace(/\/+$/, '');
        try {
          status = await fetchStatus(url);
        } catch (err) {
          say(`No server answers at ${url}; nothing to stop.`, { stopped: false, url, reason: (err as Error).message });
          return;
        }
        root = status.workspace_root;
      } else {
        root = workspaceRootFor(g.workspace);
        const probe = await probeServer(root);
        if (probe.state === 'absent' || (probe.state === 'stale' && !probe.stopFirst)) {
          const info = probe.state === 'stale' ? probe.info : undefined;
          // A file describing a dead pid (or nothing readable) is debris: tidy it. A live pid we cannot vouch for
          // (another workspace's server, or an unrelated process) is never signalled.
          if (probe.state === 'stale' && (!info || !isPidAlive(info.pid))) {
            if (info) removeServerInfo(root, info.pid);
            else rmSync(serverInfoPath(root), { force: true });
          }
          say(`No server running for ${root} (${describeProbe(probe)}); nothing to stop.`, {
            stopped: false,
            workspace_root: root,
            reason: describeProbe(probe),
          });
          return;
        }
        if (probe.state === 'running') status = probe.status;
        else {
          // This workspace's server of another version: still ours to stop.
          const info = probe.info!;
          status = {
            pid: info.pid,
            port: info.port,
            started_at: info.started_at,
            uptime_seconds: 0,
            workspace_root: info.workspace_root,
            version: info.version,
            counts: { wants: 0, job_runs: 0, partitions: 0, running_job_runs: 0, queued_commands: 0 },
          };
        }
      }

      const pid = status.pid;
      await terminateServer(pid, timeoutMs);
      // The server removes its server.json on the way out; if it died before it could, tidy up for it.
      removeServerInfo(root, pid);
      say(`Stopped server (pid ${pid})`, { stopped: true, pid, workspace_root: root });
    });
}
