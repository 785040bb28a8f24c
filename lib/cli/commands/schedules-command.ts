/** `platform schedules`: the schedules of platform.json with their last and next tick (a table, or --json). */
import type { Command } from 'commander';
import type { ScheduleView } from '../../client/platform-client.js';
import { parsedOption, wholeNumber } from '../option-parsers.js';
import { connect, line, listShort, pageFooter, printJson, table, usageExitCode, when } from '../output.js';

function rows(items: ScheduleView[]): string {
  return table(
    ['Schedule', 'Cron', 'Partitions', 'Last tick', 'Its want', 'Next tick', 'Next wants'],
    items.map((s) => [
      s.name,
      `${s.cron}${s.timezone !== 'UTC' ? ` (${s.timezone})` : ''}`,
      listShort(s.partitions, 2),
      s.last_tick ? when(s.last_tick) : 'none yet',
      s.last_want_id ?? '',
      s.next_tick ? when(s.next_tick) : '',
      listShort(s.next_partitions, 2),
    ]),
  );
}

export function registerSchedules(program: Command): void {
  const schedules = program
    .command('schedules')
    .description('the schedules of platform.json: their last and next tick, and the wants they made')
    .addOption(parsedOption('--limit <n>', 'at most this many (1-1000, default 100)', wholeNumber({ min: 1 })))
    .addOption(parsedOption('--offset <n>', 'skip this many', wholeNumber()))
    .action(async (opts: { limit?: number; offset?: number }, cmd: Command) => {
      const { client, options } = await connect(cmd);
      const page = await client.listSchedules(opts);
      if (options.json) return printJson(page);
      if (page.data.length === 0) {
        line('no schedules: add "schedules" to platform.json, e.g. [{"name": "daily", "cron": "0 3 * * *", "partitions": ["daily/revenue/date=${date}"], "offset": "-1d"}]');
        return;
      }
      line(rows(page.data));
      const footer = pageFooter(page, 'schedules');
      if (footer) line(footer);
    });
  usageExitCode(schedules);
}
