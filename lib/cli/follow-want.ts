/**
 * Following a want like a build tool, for `platform build` (a want it just created) and `platform want wait` (one
 * that exists): follows the events stream from an id read before the want was created or read (so nothing in
 * between is missed), tracks the root want, the wants derived from it and the job runs that serve them, and
 * shows progress (progress-view.ts). Ends with a summary table and says how it came out; the command chooses the
 * exit code (settle-follow.ts).
 */
import { groupDigits } from '../group-digits.js';
import { EMPTY, type Observable, ReplaySubject, Subject, catchError, connectable, defer, filter, finalize, firstValueFrom, map, merge, tap, throwError } from 'rxjs';
import { NoServerError } from '../client/server-connection.js';
import type { EventView, JobRunView, PlatformClient, WantView } from '../client/platform-client.js';
import { TERMINAL_WANT_STATUSES } from '../state/build-state.js';
import { WANT_TREE_MAX } from '../api/want-tree.js';
import { applyEvent, applyRunSnapshot, elapsed, failedRuns, mayHaveEnded, newBuildModel, trackWant, type TrackedRun } from './build-progress.js';
import { followEnding, type Ending } from './follow-ending.js';
import { HeldRunEvents } from './held-run-events.js';
import { MANY_RUNS, PlainView, SilentView, TtyView, type ProgressView } from './progress-view.js';
import { ServerWentAwayError } from './server-went-away-error.js';
import { stillStale, stillStaleLines } from './still-stale.js';
import { colors, duration, endedHow, isTty, line, listShort, printable, printJson, runWithJob, shellWords, statusColor, table, type CommandContext } from './output.js';
import { someNamed } from '../some-named.js';

/** A safety net besides the events: how often the root want's status is read anyway. */
const POLL_MS = 5_000;
/** Job runs a page (the list's most). */
const RUNS_PAGE = 1_000;


function summaryTable(runs: TrackedRun[]): string {
  return table(
    ['Job run', 'Job', 'Status', 'Attempt', 'Duration', 'Outputs', 'Detail'],
    runs.map((r) => {
      const detail = [endedHow(r), r.status === 'failed' && r.retrying ? 'retried' : ''].filter((b) => b !== '').join('; ');
      return [
        r.job_run_id,
        r.job_label,
        statusColor(r.status),
        r.attempt,
        r.started_at !== null && r.ended_at !== null ? duration(r.ended_at - r.started_at) : '',
        listShort(r.outputs, 2),
        detail,
      ];
    }),
  );
}

/** A want derived from the followed one, as far as the follow needs it: its partitions (all of them), its runs' count. */
export interface DerivedWant {
  want_id: string;
  partitions: string[];
  job_runs_total: number;
}

/**
 * The ids of the want and of the wants derived from it (transitively, at most 1,000), root first, as the server has
 * them now: one read of its tree.
 */
async function treeIds(client: PlatformClient, rootId: string): Promise<string[]> {
  return (await client.wantTree(rootId, { limit: WANT_TREE_MAX })).nodes.map((n) => n.want_id);
}

/**
 * The wants derived from `rootId`, from one read of its tree; a want whose partitions the tree does not list whole
 * (it names three) is read for them, all such reads at once.
 */
async function derivedWants(client: PlatformClient, rootId: string): Promise<DerivedWant[]> {
  const tree = await client.wantTree(rootId, { limit: WANT_TREE_MAX });
  return Promise.all(
    tree.nodes.slice(1).map(async (n) => ({
      want_id: n.want_id,
      job_runs_total: n.job_runs_total,
      partitions: n.partitions.length === n.partitions_total ? n.partitions : (await client.getWant(n.want_id)).partitions,
    })),
  );
}

/**
 * The runs of a want, a page of a thousand a request (`GET /api/job_runs?want_id=`): a want created with 256 runs
 * queued had them read one by one, ~1 s before its follow began.
 */
async function runsOfWant(client: PlatformClient, wantId: string): Promise<JobRunView[]> {
  const runs: JobRunView[] = [];
  for (let offset = 0; ; offset += RUNS_PAGE) {
    const page = await client.listJobRuns({ want_id: wantId, limit: RUNS_PAGE, offset });
    runs.push(...page.data);
    if (page.data.length < RUNS_PAGE || offset + page.data.length >= page.total) break;
  }
  // An item of a list names a run's first outputs only: a batch run's others (the build's roots among them, and
  // what --json prints) come with its detail. Only those: one cut elsewhere (`truncated`: its inputs, args, env or
  // missing refs) needs no read of its own, or a want of a thousand runs of 25 variables is read a run at a time.
  return Promise.all(runs.map((r) => (r.outputs.length < r.outputs_total ? client.getJobRun(r.job_run_id) : r)));
}

/**
 * The runs of each of `wantIds`, by id (a run two wants share once), the wants read at once (the transport's pool
 * bounds the connections), in the order of `wantIds`.
 */
async function runsOfWants(client: PlatformClient, wantIds: Iterable<string>): Promise<Map<string, JobRunView>> {
  const perWant = await Promise.all([...wantIds].map((wantId) => runsOfWant(client, wantId)));
  const runs = new Map<string, JobRunView>();
  for (const list of perWant) for (const r of list) runs.set(r.job_run_id, r);
  return runs;
}

/** A run that failed for good, as the follow's model or the server has it: enough to say why and where to look. */
interface FailedRun {
  job_run_id: string;
  job_label: string;
  exit_code: number | null;
  signal: string | null;
  reason: string | null;
  started_at: number | string | null;
}

/** Runs of the want and its derived wants that failed for good, when the events did not show them. */
async function failedRunsFromServer(client: PlatformClient, rootId: string): Promise<JobRunView[]> {
  const runs = await runsOfWants(client, await treeIds(client, rootId));
  return [...runs.values()].filter((r) => r.status === 'failed' && r.retry_at === null);
}

/** Failed runs whose last stderr line the message quotes: a few, each one more read. */
const QUOTED_RUNS = 3;
/** What of a quoted line is shown. */
const QUOTE_MAX = 200;

/**
 * The last line a run wrote to stderr (of its last 5), cut to QUOTE_MAX: why a job failed is most often said
 * there ("feed incomplete for 2026-01-03"), where "exited with code 3" says only that it did. Undefined when it
 * wrote none or its log cannot be read (removed by retention, a server gone).
 */
async function lastStderrLine(client: PlatformClient, runId: string): Promise<string | undefined> {
  const text = await client.logText(runId, 'stderr', 5).catch(() => '');
  const last = text.split('\n').map((l) => printable(l).trim()).filter((l) => l !== '').pop();
  return last === undefined ? undefined : last.length > QUOTE_MAX ? `${last.slice(0, QUOTE_MAX)}…` : last;
}

/** The last stderr line of each of the first QUOTED_RUNS failed runs that ran, read at once. */
async function lastStderrLines(client: PlatformClient, failed: FailedRun[]): Promise<Map<string, string>> {
  const ran = failed.filter((r) => r.started_at !== null).slice(0, QUOTED_RUNS);
  const lines = await Promise.all(ran.map(async (r) => [r.job_run_id, await lastStderrLine(client, r.job_run_id)] as const));
  return new Map(lines.flatMap(([id, l]) => (l === undefined ? [] : [[id, l] as [string, string]])));
}

function failureMessage(want: WantView, failed: FailedRun[], took: string, stderrLines: ReadonlyMap<string, string> = new Map()): string {
  const lines = [`want ${want.want_id} ${want.status === 'canceled' ? 'was canceled' : want.status} after ${took}.`];
  if (want.status === 'canceled' && want.cancel_reason) lines[0] += ` (${want.cancel_reason})`;
  for (const r of failed) {
    const why = endedHow({ status: 'failed', ...r });
    lines.push(`  job run ${runWithJob(r)} failed${why ? `: ${why}` : ''}`);
    const said = stderrLines.get(r.job_run_id);
    if (said !== undefined) lines.push(`    its stderr ends: ${said}`);
  }
  // A run that never started (no job for its ref, an input that failed) has no log: its reason above is all there is.
  const ran = failed.filter((r) => r.started_at !== null);
  if (ran.length > 0) {
    lines.push(`See why: ${ran.map((r) => `platform logs ${r.job_run_id}`).join(', ')} (add --stderr for its error output).`);
  } else if (failed.length === 0 && want.status !== 'canceled') {
    lines.push(`See: platform want get ${want.want_id}`);
  }
  return lines.join('\n');
}

export interface WantToFollow {
  /** The root want, as just created or read. */
  want: WantView;
  /** The wants already derived from it (for a want read, not one just created). */
  derived: DerivedWant[];
  /** Follow the events after this id: the latest before the want was created or read. */
  after: number;
  /** True when the want was just created: events before its `want_created` are not about it. */
  created: boolean;
}

/** Reads a want and the wants derived from it, with the events id to follow them from. */
export async function readWantToFollow(client: PlatformClient, wantId: string): Promise<WantToFollow> {
  // The latest event id before the read: following from it misses nothing that changes the want afterwards.
  const { latest_id: after } = await client.listEvents({ limit: 1 });
  const [want, derived] = await Promise.all([client.getWant(wantId), derivedWants(client, wantId)]);
  return { want, derived, after, created: false };
}

/** How a follow came out; the command turns it into an exit code (0 successful, 1 not, 130 interrupted). */
export type FollowResult =
  | { kind: 'successful' }
  | { kind: 'unsuccessful'; message: string }
  | { kind: 'interrupted' };

/**
 * Shows the want's progress until it ends (see follow-ending.ts for what ends it), then its summary.
 * `startedAt` (epoch ms) is what elapsed times count from: when the build began, or when the want was created.
 * `interrupt$` is Ctrl-C (the command passes `fromEvent(process, 'SIGINT')`). Throws when the server failed or
 * ended the stream before the want ended.
 */
export async function followWant(
  { client: given, options }: CommandContext,
  follow: WantToFollow,
  startedAt: number,
  interrupt$: Observable<unknown>,
): Promise<FollowResult> {
  // The server that builds it is followed: if it stops, that is what the user is told, and no other is started.
  const client = given.pinned();
  const { want: root, created, after } = follow;
  const rootId = root.want_id;
  const endedBefore = !created && TERMINAL_WANT_STATUSES.has(root.status);
  const tty = isTty() && !options.json;
  const model = newBuildModel(root, startedAt, { rootCreated: !created });
  const view: ProgressView = options.json ? new SilentView() : tty ? new TtyView(model) : new PlainView(model);
  if (!options.json) {
    const refs = listShort(root.partitions, 3);
    const what = created ? `created for ${refs}` : `for ${refs} is ${root.status}${endedBefore ? '' : '; waiting for it'}`;
    if (tty) line(`${colors.bold(`want ${rootId}`)} ${colors.dim(what)}`);
    else if (created) view.note(`want ${rootId} ${what} (${root.status})`, Date.parse(root.created_at));
    // A heading, as on a terminal: the history under it goes back to the want's creation, so a time of now on it
    // would run backwards into the lines that follow.
    else line(`want ${rootId} ${what}`);
  }
  view.start();
  // Runs handed to a queue that nothing takes from (no worker, a Redis that does not answer) waited here in silence
  // for ever: what stops them is said, as status and doctor say it, once, and again when it changes.
  const waitWatch = watchWaitingRuns(client, () => [...model.runs.values()].some((r) => r.waiting_in !== undefined), (text) => view.note(colors.yellow(text)));
  // Ctrl-C from now on is ours (the want exists and must be reported), even while the first reads are made.
  const interrupts = connectable(interrupt$, { connector: () => new ReplaySubject<unknown>(1), resetOnDisconnect: false });
  const listening = interrupts.connect();

  let closed = false;
  // Reasons to read the want that do not come with an event of the stream: what a read of runs changed.
  const recheck$ = new Subject<void>();
  const held = new HeldRunEvents();
  // Runs the want joined (already queued or running for another want), and those of a want that was already
  // building, are known only from the server's answer, not from the events that follow.
  const snapshot = async (wants: ReadonlyArray<{ want_id: string; job_runs_total?: number }>) => {
    held.readStarted();
    try {
      const runs: JobRunView[] = [];
      for (const w of wants) {
        if (w.job_runs_total === 0) continue;
        runs.push(...(await runsOfWant(client, w.want_id)));
        if (closed) return;
      }
      // In time order across runs and wants (each run's steps are in order already): the history as it happened,
      // the inputs' runs before the runs that consumed them, not a want's history and then its inputs'. Known in
      // the order they were queued, as the events would have made them known (the summary lists them so).
      runs.sort((a, b) => Date.parse(a.queued_at) - Date.parse(b.queued_at));
      const changes = runs.flatMap((run) => applyRunSnapshot(model, run)).sort((a, b) => a.at - b.at);
      for (const run of runs) changes.push(...held.after(run.job_run_id).flatMap((e) => applyEvent(model, e)));
      view.changes(changes);
      if (mayHaveEnded(model, changes)) recheck$.next();
    } finally {
      held.readEnded();
    }
  };

  let ending: Ending;
  // The runs of the build's wants as the catch-up at the end read them: `--json` prints them without reading again.
  let caughtUp: Map<string, JobRunView> | undefined;
  try {
    for (const w of follow.derived) trackWant(model, w);
    await snapshot([root, ...follow.derived]);
    // Each event updates the model and the view; those after which the build may have ended are reasons to read the want.
    const relevant$ = client.eventStream({ after }).pipe(
      // A server shutting down may drop the connection rather than end the stream: the same news for the user.
      catchError((err: unknown) => (err instanceof NoServerError ? EMPTY : throwError(() => err))),
      map((m) => {
        if (m.event === 'error') throw new Error(`the server failed to stream events: ${m.data}`);
        return parseEvent(m.data);
      }),
      filter((event): event is EventView => event !== undefined),
      filter((event) => applyToModel(event)),
      // The reads' reasons end with the stream (its end is what tells the server went away).
      (events$) => merge(events$.pipe(finalize(() => recheck$.complete())), recheck$),
    );
    const applyToModel = (event: EventView): boolean => {
      const wantsBefore = model.wants.size;
      const rootActiveBefore = model.activeRoot > 0;
      const changes = applyEvent(model, event);
      view.changes(changes);
      held.offer(event, (runId) => model.runs.has(runId));
      if (model.wants.size > wantsBefore && event.type === 'want_created') {
        // A derived want may join runs queued before it existed: read them.
        snapshot([{ want_id: event.want_created.want_id }]).catch(() => undefined);
      }
      // The want is read when it may have ended, not after every event: a read of a want of 1,000 partitions is
      // ~60 KB of JSON for the daemon to write and this process to parse, and a build of 2,000 runs took twice as
      // long for it (docs/decisions.md, session 19). The poll stays as the safety net.
      // Nor at every run that starts: only when the root's own runs begin or all stop, where its status moves between
      // upstream_building and building (the status line showed the first until the 5 s poll).
      const rootMoved = rootActiveBefore !== model.activeRoot > 0;
      return rootMoved || mayHaveEnded(model, changes) || (event.type === 'want_canceled' && model.wants.has(event.want_canceled.want_id));
    };
    const readWant = () =>
      defer(() => client.getWant(rootId)).pipe(
        tap((w) => {
          model.wantStatus = w.status;
        }),
      );
    ending = TERMINAL_WANT_STATUSES.has(root.status)
      ? { kind: 'done', want: root }
      : await firstValueFrom(followEnding({ relevant$, readWant, interrupt$: interrupts, pollMs: POLL_MS }));
    if (ending.kind === 'done') {
      // The want's status can be read before the stream delivered the last run events: catch up on those runs,
      // reading the runs of the wants that have them still going (a page of a thousand a request).
      const going = [...model.runs.values()].filter((r) => r.status === 'queued' || r.status === 'running');
      if (going.length > 0) {
        caughtUp = await runsOfWants(client, model.wants.keys()).catch(() => undefined);
        for (const r of going) {
          const run = caughtUp?.get(r.job_run_id);
          if (run) view.changes(applyRunSnapshot(model, run));
        }
      }
    }
  } finally {
    closed = true;
    waitWatch.stop();
    listening.unsubscribe();
    view.stop();
  }

  if (ending.kind === 'interrupted') return { kind: 'interrupted' };
  if (ending.kind === 'error') throw ending.error;
  if (ending.kind === 'stream-ended') {
    if (!options.json && model.runs.size > 0) line(summaryTable([...model.runs.values()]));
    throw new ServerWentAwayError(
      `the server ended the event stream before want ${rootId} finished (it shut down?). The want is kept: 'platform want get ${rootId}' shows where it is, 'platform want wait ${rootId}' resumes waiting.`,
    );
  }

  const want = ending.want;
  model.wantStatus = want.status;
  // A want that was over before it was waited for took until its last update, not until now.
  const took = elapsed((endedBefore ? Date.parse(want.updated_at) : Date.now()) - startedAt);
  const runs = [...model.runs.values()];
  let failed: FailedRun[] =
    failedRuns(model);
  if (want.status !== 'successful' && want.status !== 'canceled' && failed.length === 0) {
    failed = await failedRunsFromServer(client, rootId).catch(() => []);
  }

  const staleAfter = want.status === 'successful' ? await stillStale(client, want, new Set(model.runs.keys())).catch(() => undefined) : undefined;
  if (options.json) {
    // The build's runs are its wants' runs: read a page of a thousand at a time, and on their own only those a
    // want of the build does not list (none, as the server records joins).
    const read = caughtUp ?? (await runsOfWants(client, model.wants.keys()));
    const details = await Promise.all(runs.map((r) => read.get(r.job_run_id) ?? client.getJobRun(r.job_run_id)));
    printJson({
      want_id: rootId,
      status: want.status,
      want,
      job_runs: details,
      ...(staleAfter ? { still_stale: staleAfter.stale, still_stale_checked: staleAfter.checked } : {}),
    });
  } else {
    if (runs.length > MANY_RUNS) {
      // Ten thousand rows are not a summary: the failures (the first 50), then the counts.
      const bad = runs.filter((r) => r.status === 'failed' && !r.retrying);
      if (bad.length > 0) line(summaryTable(bad.slice(0, 50)));
      const succeeded = runs.filter((r) => r.status === 'succeeded').length;
      line(`${groupDigits(runs.length)} job runs: ${groupDigits(succeeded)} succeeded, ${groupDigits(bad.length)} failed${bad.length > 50 ? ' (the first 50 shown)' : ''}, ${groupDigits(runs.length - succeeded - bad.length)} other.`);
    } else if (runs.length > 0) line(summaryTable(runs));
    if (want.status === 'successful') {
      const left = leftAsTheyWere(want);
      const what =
        runs.length > 0 ? `${groupDigits(runs.length)} job run${runs.length === 1 ? '' : 's'}` : left.length > 0 ? 'nothing to build' : 'nothing to build, every partition was already live';
      line(`${colors.green('✓')} want ${colors.bold(rootId)} ${statusColor('successful')} in ${took} (${what}).`);
      if (left.length > 0) line(colors.yellow(leftLine(left)));
      for (const l of staleAfter ? stillStaleLines(staleAfter) : []) line(colors.yellow(l));
    }
  }
  if (want.status === 'successful') return { kind: 'successful' };
  return { kind: 'unsuccessful', message: failureMessage(want, failed, took, await lastStderrLines(client, failed)) };
}

/**
 * Every POLL_MS while some run of the build waits for a worker, the executor's health as the daemon sees it
 * (`/api/status`'s `executor.problem`, looked at every 5 s there): a problem is said when it comes or changes. A read that fails is left to the follow, which says a server gone.
 */
function watchWaitingRuns(client: PlatformClient, waiting: () => boolean, say: (text: string) => void): { stop(): void } {
  let said: string | null = null;
  let reading = false;
  const timer = setInterval(() => {
    if (reading || (!waiting() && said === null)) return;
    reading = true;
    client
      .serverStatus()
      .then((status) => {
        const problem = waiting() ? status.executor.problem : null;
        if (problem === said) return;
        // Gone, the runs are taken (their lines say so): said again only if it comes back.
        if (problem !== null) say(`runs wait: ${problem}`);
        said = problem;
      })
      .catch(() => undefined)
      .finally(() => (reading = false));
  }, POLL_MS);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}

/**
 * The partitions a successful want left failed or tainted: its rebuild 'absent' builds only what was never built nor
 * attempted (one that failed after the want was made would have failed it). Of those its view lists.
 */
function leftAsTheyWere(want: WantView): Array<[string, string]> {
  return Object.entries(want.partition_status).filter(([, status]) => status === 'failed' || status === 'tainted');
}

function leftLine(left: ReadonlyArray<[string, string]>): string {
  const one = left.length === 1;
  return (
    `${groupDigits(left.length)} partition${one ? ' was' : 's were'} left as ${one ? 'it was' : 'they were'}: ${someNamed(left, 5, ([ref, status]) => `${ref} (${status})`)}. ` +
    `Rebuild 'absent' builds only what was never built nor attempted; rebuild ${one ? 'it' : 'them'}: ` +
    `platform build ${shellWords(left.slice(0, 5).map(([ref]) => ref))}${left.length > 5 ? ' ...' : ''}`
  );
}

function parseEvent(data: string): EventView | undefined {
  try {
    return JSON.parse(data) as EventView;
  } catch {
    return undefined;
  }
}
