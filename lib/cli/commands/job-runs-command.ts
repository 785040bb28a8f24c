/** `platform job-runs list|get`. */
import type { Command } from 'commander';
import { JOB_RUN_STATUSES } from '../../state/build-state.js';
import { pagedListCommand } from '../paged-list-command.js';
import { placementText, waitingForWorker } from '../../api/run-placement.js';
import type { JobRunView } from '../../client/platform-client.js';
import {
  cellLines,
  colors,
  connect,
  detailTable,
  duration,
  endedHow,
  line,
  listShort,
  printJson,
  shellWords,
  statusColor,
  table,
  usageExitCode,
  when,
} from '../output.js';

/** How a run ended, in a few words, and when it is retried. */
export function runOutcome(r: Pick<JobRunView, 'status' | 'exit_code' | 'signal' | 'reason' | 'retry_at'> & { worker?: string | null; retried_by?: string | null; missing?: readonly string[] }): string {
  // Running by the log, but in a queue until a worker takes it: a person must not read that as running.
  if (waitingForWorker(r)) return placementText(r.worker);
  const how = endedHow(r);
  // Once its time has passed the next attempt is queued (or its want ended): not a promise any more.
  const retry =
    r.status !== 'failed' || !r.retry_at
      ? ''
      : r.retried_by
        ? `retried as ${r.retried_by}`
        : `${Date.parse(r.retry_at) > Date.now() ? 'retry at' : 'retry was due'} ${when(r.retry_at)}`;
  return [how, retry].filter((b) => b !== '').join('; ');
}

/**
 * When a run started, for the Started column: nothing before it did, and "waiting" while it waits in a queue for a
 * worker (its recorded start is then only when it was handed to the queue).
 */
export function startedCell(r: Pick<JobRunView, 'status' | 'worker' | 'started_at'>): string {
  return waitingForWorker(r) ? 'waiting' : when(r.started_at);
}

export function jobRunRows(runs: JobRunView[]): string {
  return table(
    ['Job run', 'Job', 'Status', 'Attempt', 'Started', 'Duration', 'Outputs', 'Detail'],
    runs.map((r) => [
      r.job_run_id,
      r.job_label,
      statusColor(r.status),
      r.attempt,
      startedCell(r),
      duration(r.duration_ms),
      listShort(r.outputs, 2, r.outputs_total),
      runOutcome(r),
    ]),
  );
}

export function jobRunDetail(r: JobRunView): string {
  const rows: Array<[string, string | number | null]> = [
    ['job run', r.job_run_id],
    ['job', r.job_label],
    ['status', statusColor(r.status)],
    ['attempt', r.attempt],
    ['wants', listShort(r.want_ids, r.want_ids.length, r.wants_total)],
    ['outputs', cellLines(r.outputs, r.outputs_total)],
    ['inputs', cellLines(r.config.inputs.map((i) => `${i.partition_ref} (${i.dep_type})`), r.inputs_total)],
    ['exec', shellWords(r.exec)],
    ['args', shellWords(r.config.args)],
    // An older daemon says no env_total: its env is whole.
    ['env', cellLines(Object.entries(r.config.env).map(([k, v]) => `${k}=${v}`), r.env_total ?? Object.keys(r.config.env).length)],
    ['pid', r.pid],
    ['worker', placementText(r.worker)],
    ['queued', when(r.queued_at)],
    ['started', waitingForWorker(r) ? `not yet: waiting for a worker since ${when(r.started_at)}` : when(r.started_at)],
    ['ended', when(r.ended_at)],
    ['duration', duration(r.duration_ms)],
    ['exit code', r.exit_code],
  ];
  if (r.timeout_seconds > 0) rows.push(['timeout', `${r.timeout_seconds}s`]);
  if (r.priority !== 0) rows.push(['priority', r.priority]);
  if (r.signal) rows.push(['signal', r.signal]);
  if (r.reason) rows.push(['reason', r.reason]);
  if (r.missing.length > 0) rows.push(['missing', cellLines(r.missing)]);
  if (r.retry_at) rows.push(['retry at', when(r.retry_at)]);
  if (r.retried_by) rows.push(['retried as', r.retried_by]);
  return detailTable(rows);
}

export function registerJobRuns(program: Command): void {
  const jobRuns = program.command('job-runs').description('the job runs the orchestrator queued');
  pagedListCommand(jobRuns, {
    noun: 'job runs',
    description: 'list job runs, oldest first (--want: the runs of one want, in the order it got them)',
    statuses: JOB_RUN_STATUSES,
    extra: [['--want <want_id>', 'only the runs of this want (those it queued and those it joined)', 'want']],
    fetch: (client, { want, ...q }) => {
      // An empty id would be no filter at all: every run, not the want's.
      if (want === '') throw new Error("--want needs a want's id (platform want list shows them)");
      return client.listJobRuns({ ...q, ...(typeof want === 'string' ? { want_id: want } : {}) });
    },
    rows: jobRunRows,
  });
  jobRuns
    .command('get')
    .description('show one job run')
    .argument('<job_run_id>')
    .action(async (id: string, _opts: unknown, cmd: Command) => {
      const { client, options } = await connect(cmd);
      const run = await client.getJobRun(id);
      if (options.json) return printJson(run);
      line(jobRunDetail(run));
      // A run that never started has no log to point at (platform logs says so too).
      if (run.status !== 'queued' && run.started_at !== null) line(colors.dim(`logs: platform logs ${run.job_run_id} (--stderr for stderr)`));
    });
  // Where a run's log is asked for under the run's noun (as `job-runs get` is): the usage error says where it is.
  jobRuns
    .command('logs', { hidden: true })
    .alias('log')
    .argument('[args...]')
    .allowUnknownOption()
    .action((args: string[], _opts: unknown, cmd: Command) => {
      const rest = args.length > 0 ? ` ${args.join(' ')}` : ' <job_run_id>';
      cmd.error(`error: a run's log is not under job-runs: it is 'platform logs${rest}' (-f to follow, --stderr for stderr).`, { exitCode: 2, code: 'platform.logsElsewhere' });
    });
  usageExitCode(jobRuns);
}
