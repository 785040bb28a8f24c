/** `platform partitions list|get|lookup`. */
import type { Command } from 'commander';
import type { PartitionDetailView } from '../../api/partitions-change.js';
import type { JobRunView } from '../../api/views.js';
import type { PlatformClient } from '../../client/platform-client.js';
import { PARTITION_LOOKUP_MAX } from '../../api/partition-lookup.js';
import { refsOf } from '../pattern-args.js';
import { groupDigits } from '../../group-digits.js';
import { PARTITION_STATUSES } from '../../state/build-state.js';
import { parsedOption, wholeNumber } from '../option-parsers.js';
import { pagedListCommand } from '../paged-list-command.js';
import { cellLines, colors, connect, detailTable, endedHow, line, listShort, printJson, runWithJob, statusColor, table, usageError, usageExitCode, when } from '../output.js';

/** How many of the refs a lookup never saw are named; the rest are counted. */
const UNKNOWN_NAMED = 20;

export function partitionDetail(p: PartitionDetailView): string {
  const rows: Array<[string, string | number | null]> = [
    ['partition', p.partition_ref],
    ['status', statusColor(p.status)],
    ['stale', p.stale ? colors.yellow(cellLines(p.stale_reasons, p.stale_reasons_total)) : 'no'],
  ];
  if (p.build_tainted && p.status !== 'tainted') rows.push(['tainted', colors.magenta(`its build ${p.current_build?.build_id ?? ''} is tainted and not yet replaced (what consumed it is stale)`)]);
  const b = p.current_build;
  if (b) {
    rows.push(['current build', `${b.build_id} by ${b.job_run_id} (${b.job_label}), ${when(b.built_at)}`]);
    const consumed = b.inputs.map((i) => `${i.partition_ref} @ ${i.build_id}`);
    rows.push(['consumed', b.inputs.length > 0 ? cellLines(consumed, b.inputs_total, ` (see: platform lineage ${p.partition_ref})`) : '(no inputs)']);
  } else {
    rows.push(['current build', 'none (never live)']);
  }
  // Rebuilt, what consumed its earlier builds is stale now, and not in this list (its current build's): said where.
  const earlier = p.builds_total > 1 ? ` (what consumed its earlier builds: platform lineage ${p.partition_ref} --downstream)` : '';
  rows.push(['downstream', p.downstream.length > 0 ? cellLines(p.downstream, p.downstream_total) : b ? `(nothing consumed this build)${earlier}` : '(no build to consume)']);
  rows.push(['updated', when(p.updated_at)]);
  const history =
    p.builds.length > 0
      ? `\n${table(
          ['Build', 'Job run', 'Job', 'Built', 'Consumed'],
          // A row a build: its inputs summed up (the current one's are listed whole above, a past one's by its run).
          p.builds.map((h) => [h.build_id, h.job_run_id, h.job_label, when(h.built_at), listShort(h.inputs.map((i) => `${i.partition_ref}@${i.build_id}`), 2, h.inputs_total)]),
        )}${p.builds_total > p.builds.length ? `\n${colors.dim(`${p.builds.length} of ${p.builds_total} builds; --builds N shows more`)}` : ''}`
      : '';
  return detailTable(rows) + history;
}

/** How many of a canceled partition's wants, and of its run's missing inputs, are named. */
const NAMED = 3;

/**
 * Why a partition is `canceled` when its run did not say (found by QA, session 32: a run that reported an input missing
 * which then failed read `dep_missed` and nothing more): no active want needs it, and the wants that did ended so;
 * for a run that reported inputs missing, where those stand.
 */
async function whyCanceled(client: PlatformClient, run: JobRunView): Promise<string> {
  const wants = await Promise.all(run.want_ids.slice(0, NAMED).map((id) => client.getWant(id).then((w) => `${w.want_id} ${w.status}`, () => id)));
  const more = run.wants_total > NAMED ? ` and ${groupDigits(run.wants_total - NAMED)} more` : '';
  let inputs = '';
  if (run.status === 'dep_missed' && run.missing.length > 0) {
    const found = await client.lookupPartitions(run.missing.slice(0, NAMED)).catch(() => undefined);
    const stand = run.missing.slice(0, NAMED).map((ref) => {
      const q = found?.data.find((x) => x.partition_ref === ref);
      return q ? `${ref} ${q.status}${q.job_run_id ? ` (${q.job_run_id})` : ''}` : `${ref} never built`;
    });
    inputs = ` It reported ${run.missing.length === 1 ? 'its input' : 'inputs'} missing: ${stand.join(', ')}${run.missing.length > NAMED ? ', ...' : ''}.`;
  }
  return `It is canceled because no active want needs it any more: the wants it was built for ended (${wants.join(', ')}${more}).${inputs}`;
}

export function registerPartitions(program: Command): void {
  const partitions = program.command('partitions').description('the partitions the platform knows of');
  pagedListCommand(partitions, {
    noun: 'partitions',
    description: 'list partitions, sorted by ref',
    statuses: PARTITION_STATUSES,
    extra: [['--prefix <prefix>', "only refs starting with this (e.g. 'daily/revenue/')", 'prefix']],
    fetch: (client, q) => client.listPartitions(q),
    rows: (items) =>
      table(
        ['Partition', 'Status', 'Job run', 'Build', 'Stale', 'Updated'],
        items.map((p) => [p.partition_ref, statusColor(p.status), p.job_run_id, p.build_id ?? '', p.stale ? colors.yellow('stale') : '', when(p.updated_at)]),
      ),
  });
  partitions
    .command('get')
    .description('one partition: status, why it is stale, its current build and what it consumed, its history, what consumed it; a failed one: its last run and why')
    .argument('<ref>', 'the partition ref')
    .addOption(parsedOption('--builds <n>', 'how many past builds to show (default 20)', wholeNumber({ min: 1, max: 1000 })))
    .action(async (ref: string, opts: { builds?: number }, cmd: Command) => {
      const { client, options } = await connect(cmd);
      const p = await client.getPartition(ref, opts.builds !== undefined ? { builds_limit: opts.builds } : {});
      if (options.json) return printJson(p);
      line(partitionDetail(p));
      // Why it is not live is its last run's: the place a failed build's message sends the user to. A rebuild that
      // failed or was canceled left it on its build (live, or tainted): said too, with what is kept.
      const kept = p.current_build && p.job_run_id !== p.current_build.job_run_id && (p.status === 'live' || p.status === 'tainted');
      if (((p.status === 'failed' || p.status === 'canceled') && p.job_run_id) || kept) {
        const run = await client.getJobRun(p.job_run_id).catch(() => undefined);
        const why = run ? endedHow(run) : '';
        const still = kept ? ` Its build ${p.current_build!.build_id} is kept (${p.status}).` : '';
        if (run && !(kept && run.status === 'succeeded')) line(`Its last run ${runWithJob(run)} ${run.status}${why ? `: ${why}` : ''}.${still} More: platform job-runs get ${run.job_run_id}.`);
        if (run && p.status === 'canceled') line(await whyCanceled(client, run));
      }
    });
  partitions
    .command('lookup')
    .description(`many partitions at once, by ref (at most ${groupDigits(PARTITION_LOOKUP_MAX)}): status, run, build, staleness; the refs never seen are named`)
    .argument('<ref...>', "partition refs, or brace patterns: 'daily/revenue/date={2026-01-01..2026-01-31}'")
    .action(async (patterns: string[], _opts: unknown, cmd: Command) => {
      const refs = lookupRefs(patterns, cmd);
      const { client, options } = await connect(cmd);
      const reply = await client.lookupPartitions(refs);
      if (options.json) return printJson(reply);
      if (reply.data.length > 0) {
        line(
          table(
            ['Partition', 'Status', 'Job run', 'Build', 'Stale', 'Updated'],
            reply.data.map((p) => [p.partition_ref, statusColor(p.status), p.job_run_id, p.build_id ?? '', p.stale ? colors.yellow('stale') : '', when(p.updated_at)]),
          ),
        );
      }
      const n = reply.unknown.length;
      // The first of them: a thousand refs never seen were one line of 8 KB.
      const named = `${listShort(reply.unknown, UNKNOWN_NAMED)}${n > UNKNOWN_NAMED ? ' (--json lists them all)' : ''}`;
      if (n > 0) line(colors.dim(`never seen (nothing has built them, nor begun to): ${n === 1 ? '1 ref' : `${groupDigits(n)} refs`}: ${named}`));
    });
  usageExitCode(partitions);
}

function lookupRefs(patterns: string[], cmd: Command): string[] {
  const refs = refsOf(patterns, cmd);
  if (refs.length > PARTITION_LOOKUP_MAX) {
    usageError(cmd, `${groupDigits(refs.length)} refs given; a lookup takes at most ${groupDigits(PARTITION_LOOKUP_MAX)}: split them, or list them with 'platform partitions list --prefix'.`);
  }
  return refs;
}
