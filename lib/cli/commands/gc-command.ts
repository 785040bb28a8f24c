/**
 * `platform gc [--dry-run]`: removes what `retention` in platform.json lets go (the logs of finished runs older than
 * `job_logs_days`, the events before the newest `events_keep`); `--dry-run` says what it would remove. The daemon
 * does it every hour by itself.
 */
import type { Command } from 'commander';
import { connect, detailTable, line, listShort, printJson, when } from '../output.js';

export function registerGc(program: Command): void {
  program
    .command('gc')
    .description('remove what retention in platform.json lets go (logs of old finished runs, old events); --dry-run says what it would remove')
    .option('--dry-run', 'only say what would be removed')
    .action(async (opts: { dryRun?: boolean }, cmd: Command) => {
      const { client, options } = await connect(cmd);
      const report = await client.gc(opts.dryRun === true);
      if (options.json) return printJson(report);
      const { events } = report;
      if (report.cutoff === null && events.keep === null) {
        line('No retention in platform.json: nothing is removed. Add "retention": {"job_logs_days": 30, "events_keep": 1000000} to keep 30 days of job logs and the newest million events.');
        return;
      }
      const verb = report.dry_run ? 'would remove' : 'removed';
      const rows: Array<[string, string]> = [];
      if (report.cutoff === null) rows.push(['job logs', 'all kept (no retention.job_logs_days)']);
      else {
        rows.push(['runs ended before', when(report.cutoff)], [`logs ${verb}`, `${report.removed_runs} runs, ${(report.removed_bytes / 1024 / 1024).toFixed(1)} MiB`]);
        if (report.removed_runs > 0) {
          rows.push(['runs', listShort(report.job_run_ids, report.job_run_ids.length, report.removed_runs)]);
        }
      }
      if (events.keep === null) rows.push(['events', 'all kept (no retention.events_keep)']);
      else {
        rows.push(
          [`events ${verb}`, `${events.removed_events} (keeping the newest ${events.keep})`],
          ['event log', `events ${events.first_event_id}..${events.latest_event_id}`],
          [`history ${report.dry_run ? 'to prune' : 'pruned'}`, `${events.pruned.wants} wants, ${events.pruned.job_runs} job runs, ${events.pruned.builds} builds`],
        );
      }
      line(detailTable(rows));
    });
}
