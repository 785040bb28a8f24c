/** `platform partitions list`. */
import type { Command } from 'commander';
import { connect, line, pageFooter, parseCount, printJson, statusColor, table, usageExitCode, when } from '../output.js';

export function registerPartitions(program: Command): void {
  const partitions = program.command('partitions').description('the partitions the platform knows of');
  partitions
    .command('list')
    .description('list partitions, sorted by ref')
    .option('--status <status>', 'only partitions in this status (building, live, failed, canceled, tainted)')
    .option('--prefix <prefix>', "only refs starting with this (e.g. 'daily/revenue/')")
    .option('--limit <n>', 'at most this many (1-1000, default 100)')
    .option('--offset <n>', 'skip this many')
    .action(async (opts: { status?: string; prefix?: string; limit?: string; offset?: string }, cmd: Command) => {
      const limit = parseCount(cmd, '--limit', opts.limit, 1);
      const offset = parseCount(cmd, '--offset', opts.offset);
      const { client, options } = await connect(cmd);
      const page = await client.listPartitions({ status: opts.status, prefix: opts.prefix, limit, offset });
      if (options.json) return printJson(page);
      if (page.data.length > 0) {
        line(
          table(
            ['Partition', 'Status', 'Job run', 'Updated'],
            page.data.map((p) => [p.partition_ref, statusColor(p.status), p.job_run_id, when(p.updated_at)]),
          ),
        );
      }
      const footer = pageFooter(page, 'partitions');
      if (footer) line(footer);
    });
  usageExitCode(partitions);
}
