/**
 * `platform backfill <pattern>`: builds a range of partitions as one backfill and shows its progress as an
 * aggregate bar until it ends (exit 0 when every partition is live or skipped, 1 when some failed or it was
 * canceled, 130 on Ctrl-C: the backfill keeps going). `platform backfills list|get|wait|cancel`.
 */
import { groupDigits } from '../../group-digits.js';
import { progressPercent } from '../../api/backfills.js';
import type { Command } from 'commander';
import { fromEvent } from 'rxjs';
import type { BackfillView } from '../../client/platform-client.js';
import { BACKFILL_POLICIES, type BackfillPolicy } from '../../orchestrator/command.js';
import { followBackfill } from '../follow-backfill.js';
import { TERMINAL_WANT_STATUSES } from '../../state/build-state.js';
import { EXIT_INTERRUPTED } from '../settle-follow.js';
import { pagedListCommand } from '../paged-list-command.js';
import { oneOf, parsedOption, wholeNumber } from '../option-parsers.js';
import { priorityOption, textOption } from '../request-options.js';
import { partitionCount, renderBackfill } from '../backfill-progress.js';
import { connect, detailTable, line, printJson, statusColor, table, usageError, usageExitCode, when, type CommandContext } from '../output.js';
import { checkPattern, PatternError } from '../../graph/partition-pattern.js';
import { backfillTarget, BackfillTargetError, type BackfillTarget } from '../backfill-target.js';
import type { FollowResult } from '../follow-want.js';

interface BackfillOptions {
  policy?: BackfillPolicy;
  priority?: number;
  maxConcurrent?: number;
  comment?: string;
  detach?: boolean;
}

const policy = oneOf(BACKFILL_POLICIES, 'what was never built; also what failed or is tainted; everything');

function backfillDetail(b: BackfillView): string {
  return detailTable([
    ['backfill', b.backfill_id],
    ['want', b.want_id],
    ['status', statusColor(b.status)],
    ['range', b.pattern || partitionCount(b.partitions, 'listed')],
    ['policy', b.policy],
    ['priority', b.priority],
    ['cap', b.max_concurrent_job_runs > 0 ? `${groupDigits(b.max_concurrent_job_runs)} job run${b.max_concurrent_job_runs === 1 ? '' : 's'} at once` : 'none of its own'],
    // One still building has taken until now; its last change may be long past (a slow run holds it still).
    ['progress', renderBackfill(b, (TERMINAL_WANT_STATUSES.has(b.status) ? Date.parse(b.updated_at) : Date.now()) - Date.parse(b.created_at)).join('\n')],
    ['created', when(b.created_at)],
    ['comment', b.comment],
    ['canceled', b.cancel_reason ?? ''],
  ]);
}

/** Waits for a backfill; the exit code as `platform build` gives it. */
async function waitFor(ctx: CommandContext, b: BackfillView, after: number, startedAt: number): Promise<void> {
  const result: FollowResult = await followBackfill(ctx, b, after, startedAt, fromEvent(process, 'SIGINT'));
  if (result.kind === 'successful') return;
  if (result.kind === 'unsuccessful') throw new Error(result.message);
  process.stderr.write(`platform: interrupted; backfill ${b.backfill_id} keeps going; \`platform backfills cancel ${b.backfill_id}\` stops it.\n`);
  process.exit(EXIT_INTERRUPTED);
}

export function registerBackfill(program: Command): void {
  const backfill = program
    .command('backfill')
    .description('build a range of partitions as one backfill, with its own priority and cap, and show its progress')
    .argument('<pattern>', "a brace pattern: 'daily/revenue/date={2026-01-01..2026-03-31}', 'h={00..23}', '{a,b}'")
    .addOption(parsedOption('--policy <policy>', 'missing (default): what was never built; failed: also what failed or is tainted; all: everything', policy))
    .addOption(priorityOption())
    .addOption(parsedOption('--max-concurrent <n>', 'most job runs of this backfill at once (default, or 0: no cap of its own)', wholeNumber({ min: 0, max: 10_000, note: '0 = no cap of its own' })))
    .addOption(textOption('--comment <text>', 'why the backfill is run'))
    .option('--detach', 'print the backfill id and return once it is accepted')
    .action(async (pattern: string, opts: BackfillOptions, cmd: Command) => {
      // Malformed or too large, it is a mistake in the command line (exit 2, as `build` says it), not the server's 400.
      let target: BackfillTarget;
      try {
        checkPattern(pattern);
        target = backfillTarget(pattern);
      } catch (err) {
        if (err instanceof PatternError || err instanceof BackfillTargetError) usageError(cmd, err.message);
        throw err;
      }
      const ctx = await connect(cmd);
      const { client, options } = ctx;
      const startedAt = Date.now();
      const { latest_id: after } = await client.listEvents({ limit: 1 });
      const reply = await client.createBackfill({
        ...target,
        ...(opts.policy !== undefined ? { policy: opts.policy } : {}),
        ...(opts.priority !== undefined ? { priority: opts.priority } : {}),
        ...(opts.maxConcurrent !== undefined ? { max_concurrent_job_runs: opts.maxConcurrent } : {}),
        ...(opts.comment !== undefined ? { comment: opts.comment } : {}),
      });
      if (opts.detach) {
        if (options.json) return printJson(reply);
        line(reply.backfill_id);
        if (process.stderr.isTTY) {
          process.stderr.write(`backfill ${reply.backfill_id} (want ${reply.want_id}) of ${partitionCount(reply.partitions)}; follow it with 'platform backfills wait ${reply.backfill_id}'\n`);
        }
        return;
      }
      if (!options.json) line(`backfill ${reply.backfill_id} (want ${reply.want_id}) of ${partitionCount(reply.partitions)}: ${pattern}`);
      await waitFor(ctx, await client.getBackfill(reply.backfill_id), after, startedAt);
    });
  usageExitCode(backfill);

  const backfills = program.command('backfills').description('the backfills made so far');
  pagedListCommand(backfills, {
    noun: 'backfills',
    description: 'list backfills, oldest first',
    statuses: [],
    fetch: (client, q) => client.listBackfills(q),
    rows: (items) =>
      table(
        ['Backfill', 'Status', 'Range', 'Policy', 'Progress', 'Failed', 'Priority', 'Cap', 'Created'],
        items.map((b) => [
          b.backfill_id,
          statusColor(b.status),
          b.pattern || partitionCount(b.partitions),
          b.policy,
          `${progressPercent(b.progress)}% of ${groupDigits(b.partitions)}`,
          groupDigits(b.counts.failed),
          b.priority,
          b.max_concurrent_job_runs || '',
          when(b.created_at),
        ]),
      ),
  });
  backfills
    .command('get')
    .description('one backfill: its range, policy, cap and progress')
    .argument('<backfill_id>', 'e.g. bf-1')
    .action(async (id: string, _opts: unknown, cmd: Command) => {
      const { client, options } = await connect(cmd);
      const b = await client.getBackfill(id);
      if (options.json) return printJson(b);
      line(backfillDetail(b));
    });
  backfills
    .command('wait')
    .description('show a backfill\'s progress until it ends (exit 0 when it is successful)')
    .argument('<backfill_id>', 'e.g. bf-1')
    .action(async (id: string, _opts: unknown, cmd: Command) => {
      const ctx = await connect(cmd);
      const { latest_id: after } = await ctx.client.listEvents({ limit: 1 });
      const b = await ctx.client.getBackfill(id);
      await waitFor(ctx, b, after, Date.parse(b.created_at));
    });
  backfills
    .command('cancel')
    .description('cancel a backfill: its queued runs are dropped, running ones no one else needs are stopped')
    .argument('<backfill_id>', 'e.g. bf-1')
    .action(async (id: string, _opts: unknown, cmd: Command) => {
      const { client, options } = await connect(cmd);
      const b = await client.cancelBackfill(id);
      if (options.json) return printJson(b);
      line(`backfill ${b.backfill_id} is ${b.status} (${groupDigits(b.counts.live)} of ${partitionCount(b.partitions)} live).`);
    });
  usageExitCode(backfills);
}
