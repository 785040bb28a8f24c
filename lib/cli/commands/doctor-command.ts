/**
 * `platform doctor [--json]`: checks a workspace (permissions, platform.json, the daemon and its token, disk space,
 * the event log end to end and the snapshot against it, runs stuck as running) and says what is wrong and how to
 * fix it. Exit 0 when nothing is an error (warnings included), 1 otherwise. It never starts a daemon.
 */
import type { Command } from 'commander';
import { workspaceRootFor } from '../../client/server-connection.js';
import type { Finding } from '../doctor-checks.js';
import { globalOptions } from '../global-options.js';
import { colors, line, printJson, table } from '../output.js';

const MARK: Record<Finding['status'], string> = { ok: 'ok', warn: 'warning', error: 'ERROR' };

export function registerDoctor(program: Command): void {
  program
    .command('doctor')
    .description('check the workspace (event log, snapshot, daemon, token, disk, stuck runs) and say how to fix what is wrong')
    .action(async (_opts: unknown, cmd: Command) => {
      const options = globalOptions(cmd);
      const root = workspaceRootFor(options.workspace);
      // Loaded here: the checks read the event log and the snapshot, with the daemon's own code for both.
      const { runChecks } = await import('../doctor-checks.js');
      const findings = await runChecks(root);
      const failed = findings.some((f) => f.status === 'error');
      if (options.json) printJson({ workspace: root, ok: !failed, checks: findings });
      else {
        const paint = (f: Finding) => (f.status === 'ok' ? colors.green(MARK.ok) : f.status === 'warn' ? colors.yellow(MARK.warn) : colors.red(MARK.error));
        line(table(['check', 'status', 'what', 'fix'], findings.map((f) => [f.check, paint(f), f.detail, f.fix ?? ''])));
        line(failed ? 'Something is wrong: see the fix column.' : 'Nothing is wrong.');
      }
      process.exitCode = failed ? 1 : 0;
    });
}
