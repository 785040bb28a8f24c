/** `platform want create|list|get|tree|wait|cancel`. */
import { groupDigits } from '../../group-digits.js';
import { BACKFILL_POLICY_OF } from '../../api/backfill-policy.js';
import type { Command } from 'commander';
import { TERMINAL_WANT_STATUSES, WANT_STATUSES } from '../../state/build-state.js';
import { fromEvent } from 'rxjs';
import { followWant, readWantToFollow } from '../follow-want.js';
import { settleFollow } from '../settle-follow.js';
import { oneOf, parsedOption, wholeNumber } from '../option-parsers.js';
import { dataTimestampOption, priorityOption, textOption, wantSecondsOption } from '../request-options.js';
import { REBUILD_POLICIES, type RebuildPolicy } from '../../events/build-event.js';
import { pagedListCommand } from '../paged-list-command.js';
import { refsOf } from '../pattern-args.js';
import type { CreateWantBody, WantTreeNode, WantTreeReply, WantView } from '../../client/platform-client.js';
import { treeLines } from '../tree-lines.js';
import { outputWidth } from '../table-layout.js';
import { WANT_TREE_DEFAULT, WANT_TREE_MAX } from '../../api/want-tree.js';
import {
  cellLines,
  CELL_LINES,
  colors,
  connect,
  detailTable,
  line,
  listShort,
  printJson,
  statusColor,
  table,
  usageError,
  usageExitCode,
  when,
} from '../output.js';

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

export function wantDetail(w: WantView): string {
  const partitions = cellLines(w.partitions.slice(0, CELL_LINES).map((ref) => `${ref}  ${statusColor(w.partition_status[ref] ?? 'absent')}`), w.partitions_total);
  const rows: Array<[string, string | number | null]> = [
    ['want', w.want_id],
    ['status', statusColor(w.status)],
    ['partitions', partitions],
    ['created', when(w.created_at)],
    ['updated', when(w.updated_at)],
    ['source', w.source],
  ];
  if (w.comment) rows.push(['comment', w.comment]);
  if (w.data_timestamp) rows.push(['data timestamp', when(w.data_timestamp)]);
  if (w.ttl_seconds) rows.push(['ttl', `${w.ttl_seconds}s${w.expires_at ? ` (expires ${when(w.expires_at)})` : ''}`]);
  if (w.sla_seconds) rows.push(['sla', `${w.sla_seconds}s (due ${when(w.sla_deadline)})${w.sla_missed ? ` ${colors.red('missed')}` : ''}`]);
  // A backfill's want: its rebuild is its backfill's policy under another name, said beside it (as the dashboard does:
  // `want get` said "rebuild absent" where `backfills get` said "policy missing").
  const policy = w.backfill_id ? BACKFILL_POLICY_OF[w.rebuild] : undefined;
  if (w.rebuild !== 'missing' || policy) rows.push(['rebuild', policy ? `${w.rebuild} (the backfill's policy ${policy})` : w.rebuild]);
  if (w.priority !== 0) rows.push(['priority', w.priority]);
  if (w.max_concurrent_job_runs > 0) rows.push(['max concurrent runs', w.max_concurrent_job_runs]);
  if (w.backfill_id) rows.push(['backfill', `${w.backfill_id} (see: platform backfills get ${w.backfill_id})`]);
  if (w.pattern) rows.push(['pattern', w.pattern]);
  if (w.schedule_tick) rows.push(['schedule tick', when(w.schedule_tick)]);
  // A line each, as its partitions are: refs side by side would widen the whole table.
  // A daemon of before rebuilt_total counted nothing: the list's length then.
  const rebuiltTotal = Math.max(w.rebuilt_total ?? 0, w.rebuilt.length);
  // The list holds each partition once; the total counts rebuilds (a partition rebuilt twice, twice).
  // The reply's list is bounded (1,000): past it, what is left is known only as the total, said once ("… 990 more"
  // beside "(10,000 rebuilds in all)" read as two counts that disagree).
  const tail =
    rebuiltTotal > w.rebuilt.length
      ? `\n… (${groupDigits(rebuiltTotal)} rebuilds in all)`
      : w.rebuilt.length > 10
        ? `\n… ${groupDigits(w.rebuilt.length - 10)} more`
        : '';
  if (w.rebuilt.length > 0) rows.push(['rebuilt', `${w.rebuilt.slice(0, 10).join('\n')}${tail}`]);
  if (w.parent_want_id) rows.push(['parent want', w.parent_want_id]);
  if (w.root_want_id && w.root_want_id !== w.want_id) rows.push(['root want', w.root_want_id]);
  if (w.child_wants_total > 0) rows.push(['derived wants', `${listShort(w.child_want_ids, 10)}${w.child_wants_total > w.child_want_ids.length ? ` (${groupDigits(w.child_wants_total)} in all)` : ''} (see: platform want tree ${w.want_id})`]);
  rows.push(['job runs', w.job_run_ids.length > 0 ? `${listShort(w.job_run_ids, 10)}${w.job_runs_total > w.job_run_ids.length ? ` (${groupDigits(w.job_runs_total)} in all)` : ''}` : '']);
  if (w.cancel_reason) rows.push(['cancel reason', w.cancel_reason]);
  return detailTable(rows);
}

/** The tree as lines, from the reply's breadth-first nodes: each want with its status, partitions, source and runs. */
export function wantTreeLines(reply: WantTreeReply, width?: number): string[] {
  const children = new Map<string, WantTreeNode[]>();
  for (const n of reply.nodes) {
    if (n.parent_want_id === null) continue;
    const siblings = children.get(n.parent_want_id);
    if (siblings) siblings.push(n);
    else children.set(n.parent_want_id, [n]);
  }
  const label = (n: WantTreeNode) => {
    const more = n.partitions_total - n.partitions.length;
    const refs = `${n.partitions.join(', ')}${more > 0 ? ` +${groupDigits(more)} more` : ''}`;
    const runs = `${groupDigits(n.job_runs_total)} job run${n.job_runs_total === 1 ? '' : 's'}`;
    return `${colors.bold(n.want_id)} ${statusColor(n.status)} ${refs} ${colors.dim(`(${n.source}, ${runs})`)}`;
  };
  const listed = (n: WantTreeNode) => children.get(n.want_id) ?? [];
  const left = (n: WantTreeNode) => {
    const out = n.children_total - listed(n).length;
    return out > 0 ? colors.dim(`… ${groupDigits(out)} more derived want${out === 1 ? '' : 's'}${reply.truncated ? ' (raise --limit)' : ''}`) : undefined;
  };
  return treeLines(reply.nodes[0]!, label, listed, left, width);
}

export function wantRows(wants: WantView[]): string {
  // Priority and due time only where a want on the page has one: most lists have neither.
  const priority = wants.some((w) => w.priority !== 0);
  const due = wants.some((w) => w.sla_deadline !== null);
  return table(
    ['Want', 'Status', 'Partitions', 'Created', ...(priority ? ['Priority'] : []), ...(due ? ['Due'] : []), 'Job runs', 'Comment'],
    wants.map((w) => [
      w.want_id,
      w.sla_missed ? `${statusColor(w.status)} ${colors.red('sla missed')}` : statusColor(w.status),
      listShort(w.partitions, 2, w.partitions_total),
      when(w.created_at),
      ...(priority ? [w.priority] : []),
      ...(due ? [when(w.sla_deadline)] : []),
      w.job_runs_total,
      w.comment.length > 40 ? `${w.comment.slice(0, 39)}…` : w.comment,
    ]),
  );
}

export function registerWant(program: Command): void {
  const want = program.command('want').description('create, list, inspect, wait for and cancel wants');

  want
    .command('create')
    .description('create a want for one or more partitions')
    .option('-p, --partition <ref>', "a partition to build (repeatable), or a brace pattern as build takes it: 'daily/date={2026-01-01..2026-01-07}'", collect)
    .addOption(textOption('--comment <text>', 'why the partitions are wanted'))
    .addOption(wantSecondsOption('--ttl <duration>', 'how long the want stays valid: seconds, or 90s, 5m, 3h, 1d (at most 100 years)'))
    .addOption(wantSecondsOption('--sla <duration>', 'how soon the partitions are needed: seconds, or 90s, 5m, 3h, 1d (at most 100 years)'))
    .addOption(dataTimestampOption())
    .addOption(priorityOption())
    .addOption(parsedOption('--rebuild <policy>', `what it rebuilds: ${REBUILD_POLICIES.join(', ')} (default missing)`, oneOf(REBUILD_POLICIES, 'what is not live; also what is stale; everything; only what was never built nor attempted')))
    .action(
      async (
        opts: { partition?: string[]; comment?: string; ttl?: number; sla?: number; dataTimestamp?: string; priority?: number; rebuild?: RebuildPolicy },
        cmd: Command,
      ) => {
        if (!opts.partition || opts.partition.length === 0) {
          usageError(cmd, "a want needs at least one --partition <ref> (e.g. --partition 'daily/revenue/date=2026-01-05').");
        }
        const body: CreateWantBody = { partitions: refsOf(opts.partition, cmd, 'a want') };
        if (opts.comment !== undefined) body.comment = opts.comment;
        if (opts.ttl !== undefined) body.ttl_seconds = opts.ttl;
        if (opts.sla !== undefined) body.sla_seconds = opts.sla;
        if (opts.dataTimestamp !== undefined) body.data_timestamp = opts.dataTimestamp;
        if (opts.priority !== undefined) body.priority = opts.priority;
        if (opts.rebuild !== undefined) body.rebuild = opts.rebuild;
        const { client, options } = await connect(cmd);
        const reply = await client.createWant(body);
        if (options.json) return printJson(reply);
        line(`Created want ${colors.bold(reply.want_id)} (${statusColor(reply.want.status)}).`);
        line(wantDetail(reply.want));
        // 'idle' is how every want is answered (the orchestrator takes it up at its next step): not a want stuck.
        if (!TERMINAL_WANT_STATUSES.has(reply.want.status)) line(`Follow it: platform want wait ${reply.want_id}`);
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
    .command('tree')
    .description('show a want and the wants derived from it (its inputs), breadth first')
    .argument('<want_id>')
    .addOption(parsedOption('--limit <n>', `wants to list (1-${WANT_TREE_MAX}, default ${WANT_TREE_DEFAULT})`, wholeNumber({ min: 1, max: WANT_TREE_MAX })))
    .action(async (id: string, opts: { limit?: number }, cmd: Command) => {
      const { client, options } = await connect(cmd);
      const reply = await client.wantTree(id, opts.limit !== undefined ? { limit: opts.limit } : {});
      if (options.json) return printJson(reply);
      line(wantTreeLines(reply, outputWidth()).join('\n'));
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
      const result = await followWant(ctx, follow, Number.isNaN(created) ? Date.now() : created, fromEvent(process, 'SIGINT'));
      const code = await settleFollow(ctx.client, follow.want.want_id, result, opts.cancelOnInterrupt === true);
      if (code !== 0) process.exit(code);
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
