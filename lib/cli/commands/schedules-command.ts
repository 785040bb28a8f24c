/** `platform schedules [name]`: the schedules of platform.json with their last and next tick (a table, or --json). */
import type { Command } from 'commander';
import type { ScheduleView } from '../../client/platform-client.js';
import { parsedOption, wholeNumber } from '../option-parsers.js';
import { connect, detailTable, line, listShort, pageFooter, printJson, table, usageExitCode, when } from '../output.js';

const cronOf = (s: ScheduleView) => `${s.cron}${s.timezone !== 'UTC' ? ` (${s.timezone})` : ''}`;

function rows(items: ScheduleView[]): string {
  return table(
    ['Schedule', 'Cron', 'Partitions', 'Last tick', 'Its want', 'Next tick', 'Next wants'],
    items.map((s) => [
      s.name,
      cronOf(s),
      listShort(s.partitions, 2),
      s.last_tick ? when(s.last_tick) : 'none yet',
      s.last_want_id ?? '',
      s.next_tick ? when(s.next_tick) : '',
      listShort(s.next_partitions, 2),
    ]),
  );
}

function detail(s: ScheduleView): string {
  return detailTable([
    ['schedule', s.name],
    ['cron', cronOf(s)],
    ['partitions', s.partitions.join('\n')],
    ['offset', s.offset || 'none'],
    ['priority', s.priority],
    ['ttl seconds', s.ttl_seconds || 'none'],
    ['sla seconds', s.sla_seconds || 'none'],
    ['catchup', `${s.catchup} (most missed ticks made at start)`],
    ['ticks since', s.since ? when(s.since) : 'the daemon has not run with it yet'],
    ['last tick', s.last_tick ? `${when(s.last_tick)} (want ${s.last_want_id ?? ''})` : 'none yet'],
    ['next tick', s.next_tick ? when(s.next_tick) : 'none (the cron has no later tick)'],
    ['next wants', s.next_partitions.join('\n')],
  ]);
}

export function registerSchedules(program: Command): void {
  const schedules = program
    .command('schedules')
    .description('the schedules of platform.json: their last and next tick, and the wants they made (one in detail with its name)')
    .argument('[name]', 'show this schedule only')
    .addOption(parsedOption('--limit <n>', 'at most this many (1-1000, default 100)', wholeNumber({ min: 1 })))
    .addOption(parsedOption('--offset <n>', 'skip this many', wholeNumber()))
    .action(async (name: string | undefined, opts: { limit?: number; offset?: number }, cmd: Command) => {
      const { client, options } = await connect(cmd);
      if (name !== undefined) {
        const one = await client.getSchedule(name);
        if (options.json) return printJson(one);
        line(detail(one));
        return;
      }
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
