/** `platform events [--follow]`: the build event log. */
import type { Command } from 'commander';
import { EMPTY, catchError, lastValueFrom, tap, throwError } from 'rxjs';
import { NoServerError } from '../../client/server-connection.js';
import type { EventView } from '../../client/platform-client.js';
import { MAX_EVENTS_PER_READ } from '../../api/page.js';
import { parsedOption, wholeNumber } from '../option-parsers.js';
import { colors, connect, line, listShort, printJson, table, usageExitCode, when } from '../output.js';
import { ServerWentAwayError } from '../server-went-away-error.js';
import { eventsGoneInCliWords } from '../events-gone.js';

/** What an event says, in one short phrase. */
export function eventSummary(e: EventView): string {
  switch (e.type) {
    case 'want_created': {
      const w = e.want_created;
      const from = w.parent_want_id ? ` for ${w.parent_want_id}` : '';
      const backfill = w.backfill_id ? `, backfill ${w.backfill_id}` : '';
      const what = w.pattern ? `${w.pattern} (${w.partitions.length} partitions)` : listShort(w.partitions, 5);
      return `${w.want_id} (${w.source}${from}${backfill}): ${what}`;
    }
    case 'want_canceled':
      return `${e.want_canceled.want_id}: ${e.want_canceled.reason}`;
    case 'job_run_queued': {
      const r = e.job_run_queued;
      const attempt = r.attempt > 1 ? ` (attempt ${r.attempt}${r.retry_of ? `, retry of ${r.retry_of}` : ''})` : '';
      return `${r.job_run_id} ${r.job_label} for ${r.want_ids.join(', ')}${attempt}: ${r.config.outputs.join(', ')}`;
    }
    case 'job_run_started':
      return `${e.job_run_started.job_run_id} pid ${e.job_run_started.pid}${e.job_run_started.worker && e.job_run_started.worker !== 'local' ? ` on ${e.job_run_started.worker}` : ''}${startedBefore(e.job_run_started.started_at)}`;
    case 'job_run_placed':
      return `${e.job_run_placed.job_run_id} taken by ${e.job_run_placed.worker}, pid ${e.job_run_placed.pid}${takenBefore(e.job_run_placed.started_at)}`;
    case 'job_run_succeeded': {
      const r = e.job_run_succeeded;
      return `${r.job_run_id}${r.builds.length > 0 ? `: ${r.builds.map((b) => `${b.partition_ref} ${b.build_id}`).join(', ')}` : ''}${endedBefore(r.ended_at)}`;
    }
    case 'job_run_failed': {
      const f = e.job_run_failed;
      const how = f.signal ? `signal ${f.signal}` : f.exit_code >= 0 ? `exit ${f.exit_code}` : 'no exit code';
      return `${f.job_run_id} ${how}${f.reason ? `: ${f.reason}` : ''}${f.retry_at > 0 ? ' (will retry)' : ''}${endedBefore(f.ended_at)}`;
    }
    case 'job_run_canceled':
      return `${e.job_run_canceled.job_run_id}: ${e.job_run_canceled.reason}`;
    case 'job_run_dep_missed':
      return `${e.job_run_dep_missed.job_run_id} missing ${e.job_run_dep_missed.missing.join(', ')}${endedBefore(e.job_run_dep_missed.ended_at)}`;
    case 'partition_tainted':
      return `${e.partition_tainted.partition_ref}: ${e.partition_tainted.reason}`;
    case 'taint_created': {
      const tc = e.taint_created;
      return `${tc.taint_id}: ${tc.partitions.join(', ')}${tc.reason ? ` (${tc.reason})` : ''}`;
    }
    case 'job_definitions_changed':
      return e.job_definitions_changed.jobs.map((j) => `${j.job_label} -> ${j.fingerprint}`).join(', ');
    case 'want_sla_missed':
      return `${e.want_sla_missed.want_id} missed its sla (deadline ${new Date(e.want_sla_missed.deadline).toISOString()})`;
    case 'want_released':
      return `${e.want_released.want_id}: its first ${e.want_released.released} partitions are released for scheduling`;
    case 'schedules_changed':
      return e.schedules_changed.schedules
        .map((x) => `${x.name} (${x.cron}${x.timezone === 'UTC' ? '' : ` ${x.timezone}`}) ticks from ${new Date(x.since).toISOString()}`)
        .join(', ');
    case 'schedule_ticks_skipped': {
      const k = e.schedule_ticks_skipped;
      const range = k.count === 1 ? `tick ${new Date(k.latest_tick).toISOString()}` : `ticks ${new Date(k.first_tick).toISOString()} .. ${new Date(k.latest_tick).toISOString()}`;
      const why = k.reason === 'paused' ? 'they fell due while it was paused' : 'missed beyond its catchup';
      return `${k.name} skipped ${k.count_at_least ? 'at least ' : ''}${k.count} ${range} (${why})`;
    }
    case 'schedule_paused':
      return `${e.schedule_paused.name} paused${e.schedule_paused.reason ? `: ${e.schedule_paused.reason}` : ''}`;
    case 'schedule_resumed':
      return `${e.schedule_resumed.name} resumed`;
  }
}

/** A run that ended while no daemon ran: its event comes later than its end. */
const startedBefore = (startedAt: number): string => (startedAt > 0 ? ` (started ${new Date(startedAt).toISOString()}, by a daemon that did not record it)` : '');
/** A run a worker took while no daemon ran: the next daemon read when from the queue. */
const takenBefore = (startedAt: number): string => (startedAt > 0 ? ` (at ${new Date(startedAt).toISOString()}, while no daemon ran)` : '');
const endedBefore = (endedAt: number): string => (endedAt > 0 ? ` (ended ${new Date(endedAt).toISOString()}, while no daemon ran)` : '');

function typeColor(type: string): string {
  if (type.endsWith('succeeded')) return colors.green(type);
  if (type.endsWith('failed')) return colors.red(type);
  if (type.endsWith('canceled') || type.endsWith('dep_missed')) return colors.magenta(type);
  if (type === 'job_run_started') return colors.yellow(type);
  return colors.cyan(type);
}

export function eventLine(e: EventView): string {
  return `${colors.dim(`#${e.event_id}`)} ${colors.dim(when(e.timestamp))} ${typeColor(e.type)} ${eventSummary(e)}`;
}

const FOLLOW_BACKLOG = 20;

export function registerEvents(program: Command): void {
  const events = program
    .command('events')
    .description('show the build event log; --follow streams new events as they happen')
    .addOption(
      parsedOption('--offset <id>', 'start after this event id (default: the first; with --follow, the last 20 events)', wholeNumber()),
    )
    .addOption(
      parsedOption('--limit <n>', 'at most this many (1-10000, default 10000; with --follow, only the backlog)', wholeNumber({ min: 1, max: MAX_EVENTS_PER_READ })),
    )
    .option('-f, --follow', 'keep streaming events until interrupted')
    .action(async (opts: { offset?: number; limit?: number; follow?: boolean }, cmd: Command) => {
      const { offset, limit } = opts;
      const { client, options } = await connect(cmd);
      if (!opts.follow) {
        const page = await client.listEvents({ offset, limit }).catch((err: unknown) => {
          throw eventsGoneInCliWords(err, offset ?? 0, false);
        });
        if (options.json) return printJson(page);
        if (page.data.length > 0) {
          line(
            table(
              ['Id', 'Time', 'Type', 'Detail'],
              page.data.map((e) => [e.event_id, when(e.timestamp), typeColor(e.type), eventSummary(e)]),
            ),
          );
        }
        const last = page.data.at(-1)?.event_id ?? page.offset;
        if (page.data.length === 0) line(colors.dim(`no events after id ${page.offset} (latest id ${page.latest_id})`));
        else if (last < page.latest_id) line(colors.dim(`more events after ${last} (latest id ${page.latest_id}): --offset ${last}`));
        return;
      }
      const { latest_id, first_id } = await client.listEvents({ limit: 1 });
      // Said in the words typed: the server would refuse it as `after=`.
      if (offset !== undefined && offset > latest_id) {
        throw new Error(`--offset ${offset} is past the latest event (${latest_id}): give an id of at most ${latest_id}, or none to follow from the last ${limit ?? FOLLOW_BACKLOG} events.`);
      }
      const after = offset ?? Math.max(first_id - 1, latest_id - (limit ?? FOLLOW_BACKLOG));
      if (process.stderr.isTTY) process.stderr.write(colors.dim(`following events after id ${after}; Ctrl-C to stop\n`));
      let printed: number | undefined;
      // One line per event: JSON lines with --json, since a stream has no single document to pretty-print.
      await lastValueFrom(
        client.eventStream({ after }).pipe(
          tap((m) => {
            if (m.event === 'error') throw new Error(`the server failed to stream events: ${m.data}`);
            const event = JSON.parse(m.data) as EventView;
            line(options.json ? m.data : eventLine(event));
            printed = event.event_id;
          }),
          // A connection dropped mid-stream is the server gone as much as a stream it ended.
          catchError((err: unknown) => (err instanceof NoServerError ? EMPTY : throwError(() => eventsGoneInCliWords(err, printed ?? after, true)))),
        ),
        { defaultValue: undefined },
      );
      const resumeAfter = printed ?? after;
      throw new ServerWentAwayError(
        `the server ended the event stream ${printed !== undefined ? `after event ${printed}, the last printed` : `before any event after ${after} came`} (it shut down?). ` +
          `The log keeps every event: 'platform events --follow --offset ${resumeAfter}' resumes after it once a server runs again.`,
      );
    });
  usageExitCode(events);
}
