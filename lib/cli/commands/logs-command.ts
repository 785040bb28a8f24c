/** `platform logs <job_run_id> [--stderr] [-f] [-n <lines>]`. */
import type { Command } from 'commander';
import { lastValueFrom, tap } from 'rxjs';
import type { JobRunView, LogEnd, PlatformClient } from '../../client/platform-client.js';
import { NoServerError } from '../../client/server-connection.js';
import { MAX_TAIL_LINES } from '../../api/job-run-log.js';
import { parsedOption, wholeNumber } from '../option-parsers.js';
import { connect, endedHow, errColors, statusColor, usageExitCode } from '../output.js';
import { ServerWentAwayError } from '../server-went-away-error.js';

export function registerLogs(program: Command): void {
  const logs = program
    .command('logs')
    .description("print a job run's log (stdout, or --stderr); -f follows it until the run ends")
    .argument('<job_run_id>')
    .option('--stderr', 'the stderr log instead of stdout')
    .option('-f, --follow', 'stream the log while the job runs, until it ends')
    .addOption(parsedOption('-n, --tail <lines>', 'only the last lines (1-10000); with -f, follow from there', wholeNumber({ min: 1, max: MAX_TAIL_LINES })))
    .action(async (id: string, opts: { stderr?: boolean; follow?: boolean; tail?: number }, cmd: Command) => {
      const stream = opts.stderr ? 'stderr' : 'stdout';
      const { tail } = opts;
      const { client, options } = await connect(cmd);
      // --json: the text in an object; following, a line each ({"line"}) and its end ({"end"}), as JSON lines.
      if (!opts.follow) {
        // Printed as the bytes the job wrote (a binary log redirected to a file is the job's); JSON can only hold text.
        const log = options.json ? await client.logText(id, stream, tail) : await client.logBytes(id, stream, tail);
        process.stdout.write(typeof log === 'string' ? `${JSON.stringify({ job_run_id: id, stream, text: log })}\n` : log);
        // Nothing printed and exit 0 read as a run that printed nothing: one that never started has no log at all.
        if (log.length === 0 && !options.json) {
          const run = await client.getJobRun(id);
          if (run.started_at === null) process.stderr.write(`${notStarted(run, opts.stderr === true)}\n`);
        }
        return;
      }
      const line = (text: string) => process.stdout.write(options.json ? `${JSON.stringify({ line: text })}\n` : `${text}\n`);
      const end = await followToEnd(client, id, stream, tail, line);
      if (!end) {
        throw new ServerWentAwayError(
          `the server ended the log stream of ${id} before the run ended (it shut down?). The run goes on without it: 'platform logs ${id}${opts.stderr ? ' --stderr' : ''}' prints its log so far, 'platform logs -f ${id}' follows it again from the start (-n 20: from its last 20 lines).`,
        );
      }
      if (options.json) {
        process.stdout.write(`${JSON.stringify({ end })}\n`);
        return;
      }
      // `signal` is new in LogEnd: an older daemon's end has none, and its -1 is no exit code either.
      const exit = end.signal ? ` (killed by ${end.signal})` : end.exit_code !== null && end.exit_code >= 0 && end.status !== 'succeeded' ? ` (exit ${end.exit_code})` : '';
      process.stderr.write(errColors.dim(`job run ${id} ${statusColor(end.status, errColors)}${exit}${end.status === 'succeeded' ? '' : await whyEnded(client, id)}\n`));
    });
  usageExitCode(logs);
}

/**
 * A run that did not succeed, in a few words more: why (a lost run read as a bare "canceled"), and the run that took
 * its place, which is the log to follow next. Nothing when the run cannot be read.
 */
async function whyEnded(client: Awaited<ReturnType<typeof connect>>['client'], id: string): Promise<string> {
  try {
    const run = await client.getJobRun(id);
    const how = endedHow(run).replace(/^(killed by \S+|exit(ed with)? code \d+)$/, '');
    // Its retry; or, for a run lost or canceled, the run its first output's partition has had since.
    let next = run.retried_by;
    const output = run.config.outputs[0];
    if (!next && output !== undefined && run.status === 'canceled') {
      const latest = (await client.getPartition(output, { builds_limit: 1 })).job_run_id;
      if (latest && latest !== id) next = latest;
    }
    return `${how ? `: ${how}` : ''}${next ? `; ${output ?? 'it'} is built by ${next} now: platform logs -f ${next}` : ''}`;
  } catch {
    return '';
  }
}

/** Why a run has no log: it has not started (queued: it may yet), or it ended without starting (it never will). */
function notStarted(run: JobRunView, stderr: boolean): string {
  const how = endedHow(run);
  if (run.status === 'queued') {
    return `job run ${run.job_run_id} has not started yet (queued): it has no log yet; 'platform logs -f ${run.job_run_id}${stderr ? ' --stderr' : ''}' waits for it and follows it.`;
  }
  return `job run ${run.job_run_id} never started (${run.status}${how ? `: ${how}` : ''}): it has no log. More: platform job-runs get ${run.job_run_id}.`;
}

/**
 * Follows the log to its `end`; undefined when the server went away first. A stream that drops after it brought
 * lines is opened again at once with the last line's id (Last-Event-ID): the server goes on after that line, so
 * nothing is printed twice (a proxy's idle cut, or the server ending a stream its reader fell far behind on). A
 * reopen that brings nothing new, or finds no server, is the end of it.
 */
async function followToEnd(
  client: PlatformClient,
  id: string,
  stream: 'stdout' | 'stderr',
  tail: number | undefined,
  line: (text: string) => void,
): Promise<LogEnd | undefined> {
  let lastId: string | undefined;
  for (;;) {
    let end: LogEnd | undefined;
    let progressed = false;
    const resuming = lastId !== undefined;
    try {
      await lastValueFrom(
        client.followLog(id, stream, lastId === undefined ? { tail } : { lastEventId: lastId }).pipe(
          tap((m) => {
            if (m.event === 'log') {
              line(m.data);
              if (m.id !== undefined) {
                lastId = m.id;
                progressed = true;
              }
            } else if (m.event === 'end') end = JSON.parse(m.data) as LogEnd;
            else if (m.event === 'error') throw new Error(`the server failed to stream the log: ${m.data}`);
          }),
        ),
        { defaultValue: undefined },
      );
    } catch (err) {
      // The connection broke: resumed below when this stream brought lines; a reopen that finds no server ends it.
      if (!(err instanceof NoServerError) || (!progressed && !resuming)) throw err;
      if (!progressed) return undefined;
    }
    if (end || !progressed) return end;
  }
}
