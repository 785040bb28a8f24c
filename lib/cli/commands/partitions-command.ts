/** `platform partitions list`. */
import type { Command } from 'commander';
import { PARTITION_STATUSES } from '../../state/build-state.js';
import { pagedListCommand } from '../paged-list-command.js';
import { statusColor, table, usageExitCode, when } from '../output.js';

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
        ['Partition', 'Status', 'Job run', 'Updated'],
        items.map((p) => [p.partition_ref, statusColor(p.status), p.job_run_id, when(p.updated_at)]),
      ),
  });
  usageExitCode(partitions);
}
