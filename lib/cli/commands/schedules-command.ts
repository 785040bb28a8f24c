/**
 * `platform schedules [name]`: the schedules of platform.json with their last and next tick, how their latest ticks'
 * wants did, and what they skipped (a table, or --json); `platform schedules show|pause|resume <name>` (`show` reads
 * any one, also a schedule whose name is one of these words).
 */
import type { Command } from 'commander';
import type { ScheduleChangeReply, ScheduleView } from '../../client/platform-client.js';
import { MAX_PAGE } from '../../api/page.js';
import { parsedOption, wholeNumber } from '../option-parsers.js';
import { textOption } from '../request-options.js';
import { graphRefused } from '../graph-refused.js';
import { colors, connect, detailTable, line, listShort, pageFooter, printJson, shellWords, statusColor, table, usageExitCode, when } from '../output.js';

const cronOf = (s: ScheduleView) => `${s.cron}${s.timezone !== 'UTC' ? ` (${s.timezone})` : ''}`;

/** "failed" (coloured), with how many of the latest ticks failed when any did: "failed (3 of last 10 failed)". */
function lastStatus(s: ScheduleView): string {
  if (s.last_want_status === null) return '';
  const failures = s.recent_failed > 0 ? ` (${s.recent_failed} of last ${s.recent_ticks} failed)` : '';
  return `${statusColor(s.last_want_status)}${failures}`;
}

const skippedCount = (s: ScheduleView): string => `${s.skipped_ticks_at_least ? 'at least ' : ''}${s.skipped_ticks}`;

/** "2, latest 2026-01-05 22:44:00", or '' when it never skipped one. */
function skipped(s: ScheduleView): string {
  return s.skipped_ticks > 0 ? `${skippedCount(s)}, latest ${when(s.last_skipped_tick)}` : '';
}

function state(s: ScheduleView): string {
  return s.paused ? colors.yellow('paused') : 'running';
}

function rows(items: ScheduleView[]): string {
  return table(
    ['Schedule', 'State', 'Cron', 'Partitions', 'Last tick', 'Its want', 'Status', 'Skipped', 'Next tick', 'Next wants'],
    items.map((s) => [
      s.name,
      state(s),
      cronOf(s),
      listShort(s.partitions, 2),
      s.last_tick ? when(s.last_tick) : 'none yet',
      s.last_want_id ?? '',
      lastStatus(s),
      skipped(s),
      s.next_tick ? when(s.next_tick) : '',
      listShort(s.next_partitions, 2),
    ]),
  );
}

function pausedLine(s: ScheduleView): string {
  return `paused since ${when(s.paused_at)}${s.paused_reason ? `: ${s.paused_reason}` : ''} (platform schedules resume ${s.name})`;
}

function detail(s: ScheduleView): string {
  return detailTable([
    ['schedule', s.name],
    ['state', s.paused ? pausedLine(s) : 'running'],
    ['cron', cronOf(s)],
    ['partitions', s.partitions.join('\n')],
    ['offset', s.offset || 'none'],
    ['priority', s.priority],
    ['ttl seconds', s.ttl_seconds || 'none'],
    ['sla seconds', s.sla_seconds || 'none'],
    ['catchup', s.catchup === 0 ? '0 (no missed tick is made, only those that fall due while the daemon runs)' : `${s.catchup} (at most ${s.catchup === 1 ? 'one missed tick' : `${s.catchup} missed ticks`} made at start, the latest)`],
    ['ticks since', s.since ? when(s.since) : 'the daemon has not run with it yet'],
    ['last tick', s.last_tick ? `${when(s.last_tick)} (want ${s.last_want_id ?? ''})` : 'none yet'],
    ['its status', s.last_want_status === null ? '' : statusColor(s.last_want_status)],
    ['latest ticks', s.recent_ticks > 0 ? `${s.recent_failed} of the last ${s.recent_ticks} failed` : ''],
    ['skipped ticks', s.skipped_ticks > 0 ? `${skippedCount(s)} (missed beyond catchup, or due while paused), the latest ${when(s.last_skipped_tick)}` : 'none'],
    ['next tick', s.next_tick ? when(s.next_tick) : s.paused ? 'none while paused' : 'none (the cron has no later tick)'],
    ['next wants', s.next_partitions.join('\n')],
  ]);
}

/** What a pause or resume did, in one line. */
function changeLine(verb: 'pause' | 'resume', reply: ScheduleChangeReply): string {
  const s = reply.schedule;
  if (verb === 'pause') {
    return reply.changed
      ? `${s.name}: paused; it makes no wants until 'platform schedules resume ${s.name}' (ticks that fall due meanwhile are skipped, not caught up)`
      : `${s.name}: already ${pausedLine(s)}`;
  }
  if (!reply.changed) return `${s.name}: not paused, nothing to resume`;
  const n = `${reply.skipped_ticks_at_least ? 'at least ' : ''}${reply.skipped_ticks}`;
  const skippedNow = reply.skipped_ticks > 0 ? `; ${n} tick${reply.skipped_ticks === 1 ? '' : 's'} that fell due while it was paused skipped, not made` : '';
  return `${s.name}: resumed${skippedNow}${s.next_tick ? `; next tick ${when(s.next_tick)}` : ''}`;
}

/** The words `platform schedules` takes as its subcommands: a schedule of one of these names is shown with `show`. */
const SUBCOMMANDS = ['show', 'pause', 'resume'] as const;

/** `platform schedules show <name>`, as a shell takes it. */
const showCommand = (name: string) => `platform schedules show ${shellWords([name])}`;

/** A subcommand called without its schedule's name: a usage error (exit 2) saying what to type, also to show a schedule of that name. */
function nameMissing(cmd: Command, usage: string): never {
  const word = cmd.name();
  cmd.error(`error: '${word}' needs a schedule's name: ${usage}. (To show a schedule named '${word}': ${showCommand(word)}.)`, {
    exitCode: 2,
    code: 'commander.missingArgument',
  });
}

async function showOne(name: string, cmd: Command): Promise<void> {
  const { client, options } = await connect(cmd);
  const one = await client.getSchedule(name);
  if (options.json) return printJson(one);
  line(detail(one));
}

export function registerSchedules(program: Command): void {
  const schedules = program
    .command('schedules')
    .description('the schedules of platform.json: their last and next tick, the wants they made and how those did, the ticks they skipped (one in detail with its name); pause and resume one')
    .argument('[name]', 'show this schedule only (or: platform schedules show <name>)')
    .addOption(parsedOption('--limit <n>', 'at most this many (1-1000, default 100)', wholeNumber({ min: 1, max: MAX_PAGE })))
    .addOption(parsedOption('--offset <n>', 'skip this many', wholeNumber()))
    .addHelpText(
      'after',
      [
        '',
        'One schedule in detail: platform schedules <name>, or platform schedules show',
        '<name>, which works whatever the name. A schedule named show, pause or resume',
        "is shown only with show: 'platform schedules pause' is the pause command.",
      ].join('\n'),
    )
    // The subcommands take the name as they must (their name is checked in the action, to say what to type).
    .configureHelp({ subcommandTerm: (cmd) => `${cmd.name()}${cmd.options.length > 0 ? ' [options]' : ''} <name>` })
    .action(async (name: string | undefined, opts: { limit?: number; offset?: number }, cmd: Command) => {
      if (name !== undefined) return showOne(name, cmd);
      const { client, options } = await connect(cmd);
      const page = await client.listSchedules(opts);
      if (options.json) return printJson(page);
      // The schedules are the graph in use: while platform.json is refused, those of its last valid version, not the
      // file's. An older daemon says nothing of it (undefined).
      const refused = (await client.serverStatus()).graph_problem;
      // A page past the end of some: how many there are, as every list says it (not "add schedules").
      if (page.data.length === 0 && page.total > 0) {
        line(pageFooter(page, 'schedules')!);
        return;
      }
      if (page.data.length === 0) {
        line(
          refused
            ? `no schedules in use: ${graphRefused(refused)}`
            : 'no schedules: add "schedules" to platform.json, e.g. [{"name": "daily", "cron": "0 3 * * *", "partitions": ["daily/revenue/date=${date}"], "offset": "-1d"}]',
        );
        return;
      }
      if (refused) line(colors.red(`these are the schedules of the last valid graph: ${graphRefused(refused)}`));
      line(rows(page.data));
      const footer = pageFooter(page, 'schedules');
      if (footer) line(footer);
      // 'platform schedules pause' is the command, not the schedule: say how to read the one of that name.
      for (const s of page.data) {
        if ((SUBCOMMANDS as readonly string[]).includes(s.name)) line(`schedule '${s.name}' in detail: ${showCommand(s.name)} ('platform schedules ${s.name}' is the ${s.name} command)`);
      }
    });
  usageExitCode(schedules);
  usageExitCode(
    schedules
      .command('show')
      .usage('<name>')
      .description('one schedule in detail, whatever its name (also one named show, pause or resume)')
      .argument('[name]', 'the schedule')
      .action(async (name: string | undefined, _opts: unknown, cmd: Command) => {
        if (name === undefined) nameMissing(cmd, 'platform schedules show <name>');
        return showOne(name, cmd);
      }),
  );
  usageExitCode(
    schedules
      .command('pause')
      .usage('[options] <name>')
      .description('pause a schedule: it makes no wants until resumed, across restarts (pausing a paused one changes nothing)')
      .argument('[name]', 'the schedule')
      .addOption(textOption('--reason <text>', 'why (shown with the schedule)'))
      .action(async (name: string | undefined, opts: { reason?: string }, cmd: Command) => {
        if (name === undefined) nameMissing(cmd, 'platform schedules pause <name> [--reason <text>]');
        const { client, options } = await connect(cmd);
        const reply = await client.pauseSchedule(name, opts.reason);
        if (options.json) return printJson(reply);
        line(changeLine('pause', reply));
      }),
  );
  usageExitCode(
    schedules
      .command('resume')
      .usage('<name>')
      .description('resume a paused schedule: the ticks that fell due while it was paused are skipped (counted), not caught up')
      .argument('[name]', 'the schedule')
      .action(async (name: string | undefined, _opts: unknown, cmd: Command) => {
        if (name === undefined) nameMissing(cmd, 'platform schedules resume <name>');
        const { client, options } = await connect(cmd);
        const reply = await client.resumeSchedule(name);
        if (options.json) return printJson(reply);
        line(changeLine('resume', reply));
      }),
  );
}
