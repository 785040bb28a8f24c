/**
 * `platform start`: make sure the workspace's daemon runs (start it in the background if none answers), then show
 * it. Every command that needs the server does this implicitly; this is the explicit form, e.g. to warm it up.
 */
import type { Command } from 'commander';
import { connectServer } from '../../client/server-connection.js';
import { fetchStatus } from '../../client/server-probe.js';
import { serverUrlStatus } from '../../client/server-url-daemon.js';
import { globalOptions } from '../global-options.js';
import { formatStatus } from './status-command.js';

export function registerStart(program: Command): void {
  program
    .command('start')
    .description("start the workspace's server in the background unless one is running, and show it")
    .action(async (_opts: unknown, cmd: Command) => {
      const g = globalOptions(cmd);
      const conn = await connectServer({ ...g, onStarted: () => {} });
      // With --server-url, as status reads it (the workspace daemon's token, or a 401 that says none was sent).
      const status = conn.status ?? (g.serverUrl ? await serverUrlStatus(g.serverUrl, g.workspace) : await fetchStatus(conn.url, undefined, conn.info?.token));
      if (g.json) {
        process.stdout.write(`${JSON.stringify({ started: conn.started, url: conn.url, ...status }, null, 2)}\n`);
        return;
      }
      const head = conn.started ? `Started server (pid ${status.pid}, port ${status.port}); its log is .platform/server.log` : `Server already running (pid ${status.pid}, port ${status.port})`;
      process.stdout.write(`${head}\n${formatStatus(conn.url, status)}\n`);
    });
}
