/** `platform taint <ref...> [--downstream] [--reason]` and `platform taints list|get`. */
import { groupDigits } from '../../group-digits.js';
import type { Command } from 'commander';
import type { TaintView } from '../../api/partitions-change.js';
import { pagedListCommand } from '../paged-list-command.js';
import { refsOf } from '../pattern-args.js';
import { parsedOption, wholeNumber } from '../option-parsers.js';
import { textOption } from '../request-options.js';
import { TAINT_PARTITIONS_DEFAULT, TAINT_PARTITIONS_MAX } from '../../api/partitions-change.js';
import { CELL_LINES, cellLines, connect, detailTable, line, listShort, printJson, table, usageExitCode, when } from '../output.js';

function taintDetail(t: TaintView, offset: number): string {
  const shown = Math.min(t.partitions.length, CELL_LINES);
  const partitions =
    offset >= t.partitions_total && offset > 0
      ? `(--partitions-offset ${offset} is past its ${groupDigits(t.partitions_total)} partitions)`
      : `${offset > 0 ? `… ${groupDigits(offset)} before (--partitions-offset)\n` : ''}${cellLines(t.partitions, t.partitions_total - offset, ` (--partitions-offset ${offset + shown})`)}`;
  return detailTable([
    ['taint', t.taint_id],
    ['reason', t.reason || '(none given)'],
    ['downstream', t.downstream ? 'yes' : 'no'],
    ['created', when(t.created_at)],
    ['partitions', partitions],
    ['still tainted', `${groupDigits(t.still_tainted)} of ${groupDigits(t.partitions_total)}`],
  ]);
}

export function registerTaint(program: Command): void {
  const taint = program
    .command('taint')
    .description('mark built partitions for rebuild: wants for them rebuild them (--downstream: what consumed them too)')
    .argument('<ref...>', "partition refs that were built, or brace patterns as build takes them: 'raw/date={2026-01-01..2026-01-07}'")
    .option('--downstream', 'also taint every partition whose current build consumed a tainted one, transitively')
    .addOption(textOption('--reason <text>', 'why (shown with the taint)'))
    .action(async (refs: string[], opts: { downstream?: boolean; reason?: string }, cmd: Command) => {
      const partitions = refsOf(refs, cmd, 'a taint');
      const { client, options } = await connect(cmd);
      const reply = await client.createTaint({ partitions, downstream: opts.downstream === true, ...(opts.reason !== undefined ? { reason: opts.reason } : {}) });
      if (options.json) return printJson(reply);
      line(`${reply.taint_id}: tainted ${groupDigits(reply.partitions_total)} partition${reply.partitions_total === 1 ? '' : 's'}: ${listShort(reply.partitions, 10, reply.partitions_total)}${reply.partitions_total > 10 ? ` (all of them: platform taints get ${reply.taint_id})` : ''}`);
      line("Wants for them rebuild them: 'platform build <ref>' (or 'platform build --stale <ref>' for what consumed them).");
    });
  usageExitCode(taint);

  const taints = program.command('taints').description('the taints made so far');
  pagedListCommand(taints, {
    noun: 'taints',
    description: 'list taints, oldest first',
    statuses: [],
    fetch: (client, q) => client.listTaints(q),
    rows: (items) =>
      table(
        ['Taint', 'Partitions', 'Still tainted', 'Downstream', 'Reason', 'Created'],
        items.map((t) => [t.taint_id, listShort(t.partitions, 2, t.partitions_total), `${groupDigits(t.still_tainted)} of ${groupDigits(t.partitions_total)}`, t.downstream ? 'yes' : '', t.reason, when(t.created_at)]),
      ),
  });
  taints
    .command('get')
    .description('one taint: its partitions and how many are still tainted')
    .argument('<taint_id>', 'e.g. t-1')
    .addOption(parsedOption('--partitions-offset <n>', 'skip this many of its partitions', wholeNumber()))
    .addOption(parsedOption('--partitions-limit <n>', `with --json, at most this many of its partitions (1-${TAINT_PARTITIONS_MAX}, default ${TAINT_PARTITIONS_DEFAULT}); the table shows ${CELL_LINES}`, wholeNumber({ min: 1, max: TAINT_PARTITIONS_MAX })))
    .action(async (id: string, opts: { partitionsOffset?: number; partitionsLimit?: number }, cmd: Command) => {
      const { client, options } = await connect(cmd);
      // The table shows CELL_LINES of them: no more are read for it.
      const t = await client.getTaint(id, { partitions_offset: opts.partitionsOffset, partitions_limit: opts.partitionsLimit ?? (options.json ? undefined : CELL_LINES) });
      if (options.json) return printJson(t);
      line(taintDetail(t, opts.partitionsOffset ?? 0));
    });
  usageExitCode(taints);
}
