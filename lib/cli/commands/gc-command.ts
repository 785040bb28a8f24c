/**
 * `platform gc [--dry-run]`: removes what `retention` in platform.json lets go (the logs of finished runs older than
 * `job_logs_days`); `--dry-run` says what it would remove. The daemon does it every hour by itself.
 */
import type { Command } from 'commander';
import { connect, detailTable, line, printJson } from '../output.js';

export function registerGc(program: Command): void {
  program
    .command('gc')
    .description('remove what retention in platform.json lets go (the logs of old finished runs); --dry-run says what it would remove')
    .option('--dry-run', 'only say what would be removed')
    .action(async (opts: { dryRun?: boolean }, cmd: Command) => {
      const { client, options } = await connect(cmd);
      const report = await client.gc(opts.dryRun === true);
      if (options.json) return printJson(report);
      if (report.cutoff === null) {
        line('No retention in platform.json: nothing is removed. Add "retention": {"job_logs_days": 30} to keep 30 days of job logs.');
        return;
      }
      const verb = report.dry_run ? 'would remove' : 'removed';
      line(
        detailTable([
          ['runs ended before', report.cutoff],
          [`logs ${verb}`, `${report.removed_runs} runs, ${(report.removed_bytes / 1024 / 1024).toFixed(1)} MiB`],
          ['runs', report.job_run_ids.join(', ') + (report.removed_runs > report.job_run_ids.length ? ` … ${report.removed_runs - report.job_run_ids.length} more` : '')],
        ]),
      );
    });
}
