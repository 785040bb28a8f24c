/** `platform want create|list|get|wait|cancel`. */
import type { Command } from 'commander';
import { fromEvent } from 'rxjs';
import { WANT_STATUSES } from '../../state/build-state.js';
import { followWant, readWantToFollow } from '../follow-want.js';
import { pagedListCommand } from '../paged-list-command.js';
import { exitAfterFollow } from './follow-exit.js';
import type { CreateWantBody, WantView } from '../../client/platform-client.js';
import {
  colors,
  connect,
  detailTable,
  line,
  listShort,
  parseCount,
  printJson,
  statusColor,
  table,
  usageError,
  usageExitCode,
  when,
} from '../output.js';

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

export function wantDetail(w: WantView): string {
  const partitions = w.partitions.map((ref) => `${ref}  ${statusColor(w.partition_status[ref] ?? 'absent')}`).join('\n');
  const rows: Array<[string, string | number | null]> = [
    ['want', w.want_id],
    ['status', statusColor(w.status)],
    ['partitions', partitions],
    ['created', when(w.created_at)],
    ['updated', when(w.updated_at)],
    ['source', w.source],
  ];
  if (w.comment) rows.push(['comment', w.comment]);
  if (w.data_timestamp) rows.push(['data timestamp', w.data_timestamp]);
  if (w.ttl_seconds) rows.push(['ttl', `${w.ttl_seconds}s`]);
  if (w.sla_seconds) rows.push(['sla', `${w.sla_seconds}s`]);
  if (w.parent_want_id) rows.push(['parent want', w.parent_want_id]);
  if (w.root_want_id && w.root_want_id !== w.want_id) rows.push(['root want', w.root_want_id]);
  if (w.child_want_ids.length > 0) rows.push(['derived wants', w.child_want_ids.join(', ')]);
  rows.push(['job runs', w.job_run_ids.length > 0 ? listShort(w.job_run_ids, 10) : '']);
  if (w.cancel_reason) rows.push(['cancel reason', w.cancel_reason]);
  return detailTable(rows);
}

export function wantRows(wants: WantView[]): string {
  return table(
    ['Want', 'Status', 'Partitions', 'Created', 'Job runs', 'Comment'],
    wants.map((w) => [
      w.want_id,
      statusColor(w.status),
      listShort(w.partitions, 2),
      when(w.created_at),
      w.job_run_ids.length,
      w.comment.length > 40 ? `${w.comment.slice(0, 39)}…` : w.comment,
    ]),
  );
}

function seconds(cmd: Command, name: string, value: string | undefined): number | undefined {
  return parseCount(cmd, name, value);
}

export function registerWant(program: Command): void {
  const want = program.command('want').description('create, list, inspect, wait for and cancel wants');

  want
    .command('create')
    .description('create a want for one or more partitions')
    .option('-p, --partition <ref>', 'a partition to build (repeatable)', collect)
    .option('--comment <text>', 'why the partitions are wanted')
    .option('--ttl <seconds>', 'how long the want stays valid')
    .option('--sla <seconds>', 'how soon the partitions are needed')
    .option('--data-timestamp <iso>', 'the data time the want is about (ISO 8601)')
    .action(
      async (
        opts: { partition?: string[]; comment?: string; ttl?: string; sla?: string; dataTimestamp?: string },
        cmd: Command,
      ) => {
        if (!opts.partition || opts.partition.length === 0) {
          usageError(cmd, "a want needs at least one --partition <ref> (e.g. --partition 'daily/revenue/date=2026-01-05').");
        }
        const body: CreateWantBody = { partitions: opts.partition };
        if (opts.comment !== undefined) body.comment = opts.comment;
        const ttl = seconds(cmd, '--ttl', opts.ttl);
        if (ttl !== undefined) body.ttl_seconds = ttl;
        const sla = seconds(cmd, '--sla', opts.sla);
        if (sla !== undefined) body.sla_seconds = sla;
        if (opts.dataTimestamp !== undefined) {
          if (Number.isNaN(Date.parse(opts.dataTimestamp))) {
            usageError(cmd, `--data-timestamp must be an ISO 8601 time such as 2026-01-05T00:00:00Z, got '${opts.dataTimestamp}'.`);
          }
          body.data_timestamp = opts.dataTimestamp;
        }
        const { client, options } = await connect(cmd);
        const reply = await client.createWant(body);
        if (options.json) return printJson(reply);
        line(`Created want ${colors.bold(reply.want_id)} (${statusColor(reply.want.status)}).`);
        line(wantDetail(reply.want));
      },
    );

  pagedListCommand(want, {
    noun: 'wants',
    description: 'list wants, oldest first',
    statuses: WANT_STATUSES,
    fetch: (client, q) => client.listWants(q),
    rows: wantRows,
  });

  want
    .command('get')
    .description('show one want')
    .argument('<want_id>')
    .action(async (id: string, _opts: unknown, cmd: Command) => {
      const { client, options } = await connect(cmd);
      const w = await client.getWant(id);
      if (options.json) return printJson(w);
      line(wantDetail(w));
    });

  want
    .command('wait')
    .description('wait for a want to end, showing progress like build (exit 0 when it is successful, 1 when not)')
    .argument('<want_id>')
    .option('--cancel-on-interrupt', 'on Ctrl-C cancel the want (default: it keeps building)')
    .action(async (id: string, opts: { cancelOnInterrupt?: boolean }, cmd: Command) => {
      const ctx = await connect(cmd);
      const follow = await readWantToFollow(ctx.client, id);
      // Elapsed times count from the want's creation, as for the build that created it.
      const created = Date.parse(follow.want.created_at);
      const startedAt = Number.isNaN(created) ? Date.now() : created;
      exitAfterFollow(await followWant(ctx, { ...follow, cancelOnInterrupt: opts.cancelOnInterrupt === true }, startedAt, fromEvent(process, 'SIGINT')));
    });

  want
    .command('cancel')
    .description('cancel a want and the job runs no other want needs')
    .argument('<want_id>')
    .action(async (id: string, _opts: unknown, cmd: Command) => {
      const { client, options } = await connect(cmd);
      const w = await client.cancelWant(id);
      if (options.json) return printJson(w);
      line(`Want ${colors.bold(w.want_id)} is ${statusColor(w.status)}.`);
      line(wantDetail(w));
    });

  usageExitCode(want);
}
