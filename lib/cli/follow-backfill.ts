/**
 * Following a backfill, for `platform backfill` and `platform backfills wait`: every event is a reason to read the
 * backfill again (throttled: a busy log does not become a read per event), each read redraws one aggregate block
 * (backfill-progress.ts), and it ends as a want's follow does (follow-ending.ts): when the backfill ends, on Ctrl-C
 * (the backfill keeps going), or when the server ends the stream.
 */
import { groupDigits } from '../group-digits.js';
import { patternPrefix } from '../graph/partition-pattern.js';
import { ServerWentAwayError } from './server-went-away-error.js';
import { EMPTY, type Observable, ReplaySubject, catchError, connectable, defer, firstValueFrom, interval, tap, throttleTime, asyncScheduler } from 'rxjs';
import { NoServerError } from '../client/server-connection.js';
import type { BackfillView } from '../client/platform-client.js';
import { TERMINAL_WANT_STATUSES } from '../state/build-state.js';
import { partitionCount, plainMilestone, renderBackfill, type BackfillPaint } from './backfill-progress.js';
import { outputWidth } from './table-layout.js';
import { followEnding, type Ending } from './follow-ending.js';
import { colors, isTty, line, printJson, shellWords, statusColor, type CommandContext } from './output.js';
import type { FollowResult } from './follow-want.js';

const POLL_MS = 5_000;
/** At most this often a burst of events makes a read. */
const READ_EVERY_MS = 200;
const REDRAW_MS = 250;

const paint: BackfillPaint = {
  good: (s) => colors.green(s),
  bad: (s) => colors.red(s),
  busy: (s) => colors.yellow(s),
  dim: (s) => colors.dim(s),
};

/** Whether `shown` already says what `now` would: its status and every count. */
function sameProgress(shown: BackfillView | undefined, now: BackfillView): boolean {
  if (!shown || shown.status !== now.status || shown.running_job_runs !== now.running_job_runs) return false;
  const a = shown.counts;
  const b = now.counts;
  return a.live === b.live && a.failed === b.failed && a.skipped === b.skipped && a.building === b.building && a.waiting === b.waiting && a.pending === b.pending && a.canceled === b.canceled;
}

export async function followBackfill(
  { client: given, options }: CommandContext,
  first: BackfillView,
  after: number,
  startedAt: number,
  interrupt$: Observable<unknown>,
): Promise<FollowResult> {
  // The server that builds it is followed: if it stops, that is what the user is told, and no other is started.
  const client = given.pinned();
  const tty = isTty() && !options.json;
  // An ended backfill took until its last change, not until now (`backfills wait` of one ended long ago).
  const elapsed = (b: BackfillView): number => (TERMINAL_WANT_STATUSES.has(b.status) ? Date.parse(b.updated_at) : Date.now()) - startedAt;
  let latest = first;
  let shownPlain: BackfillView | undefined;
  let drawn = 0;
  const draw = () => {
    if (options.json) return;
    if (!tty) {
      if (plainMilestone(shownPlain, latest)) {
        line(renderBackfill(latest, elapsed(latest)).join(''));
        shownPlain = latest;
      }
      return;
    }
    // The terminal's width (COLUMNS when set), as a build's progress takes it: a line it wrapped would be left behind.
    const lines = renderBackfill(latest, elapsed(latest), paint, Math.max(20, (outputWidth() ?? 80) - 1));
    if (drawn > 0) process.stdout.write(`\r${drawn > 1 ? `\x1b[${drawn - 1}A` : ''}\x1b[J`);
    process.stdout.write(lines.join('\n'));
    drawn = lines.length;
  };
  const interrupts = connectable(interrupt$, { connector: () => new ReplaySubject<unknown>(1), resetOnDisconnect: false });
  const listening = interrupts.connect();
  const redraws = tty ? interval(REDRAW_MS).subscribe(draw) : undefined;
  draw();
  let ending: Ending<BackfillView>;
  try {
    const relevant$ = client.eventStream({ after }).pipe(
      catchError((err: unknown) => (err instanceof NoServerError ? EMPTY : Promise.reject(err))),
      throttleTime(READ_EVERY_MS, asyncScheduler, { leading: true, trailing: true }),
    );
    const readWant = () =>
      defer(() => client.getBackfill(first.backfill_id)).pipe(
        tap((b) => {
          latest = b;
          draw();
        }),
      );
    ending = TERMINAL_WANT_STATUSES.has(first.status)
      ? { kind: 'done', want: first }
      : await firstValueFrom(followEnding({ relevant$, readWant, interrupt$: interrupts, pollMs: POLL_MS }));
  } finally {
    listening.unsubscribe();
    redraws?.unsubscribe();
    if (tty && drawn > 0) process.stdout.write('\n');
  }
  if (ending.kind === 'interrupted') return { kind: 'interrupted' };
  if (ending.kind === 'error') throw ending.error;
  const id = first.backfill_id;
  if (ending.kind === 'stream-ended') {
    throw new ServerWentAwayError(
      `the server ended the event stream before backfill ${id} finished (it shut down?). The backfill is kept and goes on when the server starts again: 'platform backfills get ${id}' shows where it is, 'platform backfills wait ${id}' resumes waiting.`,
    );
  }
  const b = ending.want;
  latest = b;
  if (options.json) printJson(b);
  else {
    // A pipe was given the line of the status it ended with when it moved there: not again.
    if (tty ? drawn === 0 : !sameProgress(shownPlain, b)) line(renderBackfill(b, elapsed(b)).join(''));
    const c = b.counts;
    line(`backfill ${colors.bold(id)} ${statusColor(b.status)}: ${groupDigits(c.live)} live, ${groupDigits(c.failed)} failed, ${groupDigits(c.skipped)} skipped of ${groupDigits(b.partitions)}.`);
    // Only policy 'missing' skips (as 'absent' rebuilds): without a word, "skipped" read as done.
    if (c.skipped > 0) {
      line(
        `${c.skipped} skipped: ${c.skipped === 1 ? 'it had failed or was tainted' : 'they had failed or were tainted'} before the backfill, ` +
          `and policy '${b.policy}' builds only what was never built. Rebuild ${c.skipped === 1 ? 'it' : 'them'}: ` +
          `platform backfill ${b.pattern ? shellWords([b.pattern]) : '<pattern>'} --policy failed`,
      );
    }
  }
  if (b.status === 'successful') return { kind: 'successful' };
  const why =
    b.status === 'canceled'
      ? `backfill ${id} was canceled${b.cancel_reason ? ` (${b.cancel_reason})` : ''}: ${b.counts.canceled} of its ${partitionCount(b.partitions)} not built for it.`
      : `backfill ${id} ended ${b.status}: ${b.counts.failed} of its ${partitionCount(b.partitions)} failed. ` +
        `List them: platform partitions list --status failed${rangePrefix(b.pattern)}; why one failed: platform partitions get <ref>.`;
  return { kind: 'unsuccessful', message: why };
}

/**
 * ` --prefix '<text before the pattern's first brace>'`: the failures of the backfill's range, not the workspace's
 * (a listed backfill, or a pattern that starts with a brace, has none).
 */
function rangePrefix(pattern: string): string {
  let prefix: string;
  try {
    prefix = patternPrefix(pattern);
  } catch {
    // A pattern the server took is well formed; an older server's, if not, gets no prefix.
    return '';
  }
  return prefix === '' ? '' : ` --prefix ${shellWords([prefix])}`;
}
