/** `platform logs <job_run_id> [--stderr] [-f | -n <lines>]`. */
import type { Command } from 'commander';
import { lastValueFrom, tap } from 'rxjs';
import type { LogEnd } from '../../client/platform-client.js';
import { parsedOption, wholeNumber } from '../option-parsers.js';
import { connect, errColors, statusColor, usageError, usageExitCode } from '../output.js';
import { ServerWentAwayError } from '../server-went-away-error.js';

export function registerLogs(program: Command): void {
  const logs = program
    .command('logs')
    .description("print a job run's log (stdout, or --stderr); -f follows it until the run ends")
    .argument('<job_run_id>')
    .option('--stderr', 'the stderr log instead of stdout')
    .option('-f, --follow', 'stream the log while the job runs, until it ends')
    .addOption(parsedOption('-n, --tail <lines>', 'only the last lines (1-10000; not with -f)', wholeNumber({ min: 1 })))
    .action(async (id: string, opts: { stderr?: boolean; follow?: boolean; tail?: number }, cmd: Command) => {
      const stream = opts.stderr ? 'stderr' : 'stdout';
      const { tail } = opts;
      if (tail !== undefined && opts.follow) usageError(cmd, '--tail and --follow do not go together: -f prints the log from its start.');
      const { client, options } = await connect(cmd);
      // --json: the text in an object; following, a line each ({"line"}) and its end ({"end"}), as JSON lines.
      if (!opts.follow) {
        const text = await client.logText(id, stream, tail);
        process.stdout.write(options.json ? `${JSON.stringify({ job_run_id: id, stream, text })}\n` : text);
        return;
      }
      let end: LogEnd | undefined;
      await lastValueFrom(
        client.followLog(id, stream).pipe(
          tap((m) => {
            if (m.event === 'log') process.stdout.write(options.json ? `${JSON.stringify({ line: m.data })}\n` : `${m.data}\n`);
            else if (m.event === 'end') end = JSON.parse(m.data) as LogEnd;
            else if (m.event === 'error') throw new Error(`the server failed to stream the log: ${m.data}`);
          }),
        ),
        { defaultValue: undefined },
      );
      if (!end) {
        throw new ServerWentAwayError(
          `the server ended the log stream of ${id} before the run ended (it shut down?). The run goes on without it: 'platform logs ${id}${opts.stderr ? ' --stderr' : ''}' prints its log so far, 'platform logs -f ${id}' follows it again from the start.`,
        );
      }
      if (options.json) {
        process.stdout.write(`${JSON.stringify({ end })}\n`);
        return;
      }
      const exit = end.exit_code !== null && end.status !== 'succeeded' ? ` (exit ${end.exit_code})` : '';
      process.stderr.write(errColors.dim(`job run ${id} ${statusColor(end.status, errColors)}${exit}\n`));
    });
  usageExitCode(logs);
}
