/**
 * Following a want like a build tool, for `platform build` (a want it just created) and `platform want wait` (one
 * that exists): follows the events stream from an id read before the want was created or read (so nothing in
 * between is missed), tracks the root want, the wants derived from it and the job runs that serve them, shows
 * progress (see progress-view.ts) and ends with a summary table. When it ends is decided by followEnding (the
 * want over, Ctrl-C, the stream ended); what that means for the exit code is the caller's choice.
 */
import {
  type Observable,
  EMPTY,
  catchError,
  concatMap,
  defer,
  filter,
  firstValueFrom,
  from,
  ignoreElements,
  map,
  merge,
  mergeMap,
  of,
  race,
  share,
  take,
  tap,
} from 'rxjs';
import type { EventView, JobRunView, PlatformClient, SseMessage, WantView } from '../client/platform-client.js';
import { errorMessage } from '../errors.js';
import { TERMINAL_WANT_STATUSES } from '../state/build-state.js';
import {
  applyEvent,
  applyRunSnapshot,
  elapsed,
  failedRuns,
  newBuildModel,
  trackWant,
  type BuildModel,
  type TrackedRun,
} from './build-progress.js';
import { followEnding } from './follow-ending.js';
import { colors, duration, endedHow, isTty, line, listShort, printJson, statusColor, table, type CommandContext } from './output.js';
import { progressView, type ProgressView } from './progress-view.js';

/** A safety net besides the events: how often the root want's status is read anyway. */
const POLL_MS = 5_000;

/** How a follow ended, with what the user is told when it is not a success. */
export type FollowOutcome =
  | { kind: 'done'; want: WantView; /** Why the want is not successful; absent when it is. */ failure?: string }
  | { kind: 'interrupted' }
  | { kind: 'stream-ended'; message: string }
  | { kind: 'error'; error: unknown };

type FailedRun = { job_run_id: string; job_label: string; exit_code: number | null; signal: string | null; reason: string | null };

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

/** The want and the wants derived from it (transitively), root first, as the server has them now. */
async function wantTree(client: PlatformClient, rootId: string): Promise<WantView[]> {
  const wants: WantView[] = [];
  const ids = [rootId];
  const seen = new Set(ids);
  for (let i = 0; i < ids.length && i < 1000; i++) {
    const w = await client.getWant(ids[i]!);
    wants.push(w);
    for (const child of w.child_want_ids) {
      if (seen.has(child)) continue;
      seen.add(child);
      ids.push(child);
    }
  }
  return wants;
}

/** Runs of the want and its derived wants that failed for good, when the events did not show them. */
async function failedRunsFromServer(client: PlatformClient, rootId: string): Promise<JobRunView[]> {
  const runs: JobRunView[] = [];
  const seen = new Set<string>();
  for (const w of await wantTree(client, rootId)) {
    for (const id of w.job_run_ids) {
      if (seen.has(id)) continue;
      seen.add(id);
      const r = await client.getJobRun(id);
      if (r.status === 'failed' && r.retry_at === null) runs.push(r);
    }
  }
  return runs;
}

function failureMessage(want: WantView, failed: FailedRun[], took: string): string {
  const lines = [`want ${want.want_id} ${want.status === 'canceled' ? 'was canceled' : want.status} after ${took}.`];
  if (want.status === 'canceled' && want.cancel_reason) lines[0] += ` (${want.cancel_reason})`;
  for (const r of failed) {
    const why = endedHow({ status: 'failed', ...r });
    lines.push(`  job run ${r.job_run_id} (${r.job_label}) failed${why ? `: ${why}` : ''}`);
  }
  if (failed.length > 0) {
    lines.push(`See why: ${failed.map((r) => `platform logs ${r.job_run_id}`).join(', ')} (add --stderr for its error output).`);
  } else if (want.status !== 'canceled') {
    lines.push(`See: platform want get ${want.want_id}`);
  }
  return lines.join('\n');
}

export interface WantToFollow {
  /** The root want, as just created or read. */
  want: WantView;
  /** The wants already derived from it (for a want read, not one just created). */
  derived: WantView[];
  /** Follow the events after this id: the latest before the want was created or read. */
  after: number;
  /** True when the want was just created: events before its `want_created` are not about it. */
  created: boolean;
  /** On Ctrl-C cancel the want (default: it keeps building). */
  cancelOnInterrupt?: boolean;
}

/** Reads a want and the wants derived from it, with the events id to follow them from. */
export async function readWantToFollow(client: PlatformClient, wantId: string): Promise<WantToFollow> {
  // The latest event id before the read: following from it misses nothing that changes the want afterwards.
  const { latest_id: after } = await client.listEvents({ limit: 1 });
  const [want, ...derived] = await wantTree(client, wantId);
  return { want: want!, derived, after, created: false };
}

/** What the follow keeps up to date as events and reads come in. */
interface Tracking {
  client: PlatformClient;
  model: BuildModel;
  view: ProgressView;
}

/**
 * Runs the want joined (already queued or running for another want), and those of a want that was already
 * building, are known only from the server's answer, not from the events that follow: read the unknown ones.
 */
function readRuns$({ client, model, view }: Tracking, ids: readonly string[]): Observable<never> {
  return from(ids).pipe(
    concatMap((id) => (model.runs.has(id) ? EMPTY : defer(() => client.getJobRun(id)))),
    tap((run) => view.changes(applyRunSnapshot(model, run))),
    ignoreElements(),
  );
}

/** The events stream folded into the model and the view; one value per event: whether it may have changed the want. */
function eventNews$(tracking: Tracking, messages$: Observable<SseMessage>): Observable<boolean> {
  const { client, model, view } = tracking;
  return messages$.pipe(
    map((m) => {
      if (m.event === 'error') throw new Error(`the server failed to stream events: ${m.data}`);
      try {
        return JSON.parse(m.data) as EventView;
      } catch {
        return undefined;
      }
    }),
    filter((event): event is EventView => event !== undefined),
    mergeMap((event) => {
      const wantsBefore = model.wants.size;
      const changes = applyEvent(model, event);
      view.changes(changes);
      const concerns =
        changes.length > 0 ||
        (event.type === 'want_created' && model.wants.has(event.want_created.want_id)) ||
        (event.type === 'want_canceled' && model.wants.has(event.want_canceled.want_id));
      if (!(model.wants.size > wantsBefore && event.type === 'want_created')) return of(concerns);
      // A derived want may join runs queued before it existed: read them.
      const joined$ = defer(() => client.getWant(event.want_created.want_id)).pipe(
        mergeMap((w) => {
          trackWant(model, w);
          return readRuns$(tracking, w.job_run_ids);
        }),
        catchError(() => EMPTY),
      );
      return merge(of(concerns), joined$);
    }),
  );
}

/** After Ctrl-C: cancels the want if asked, and says where it is. A second Ctrl-C leaves at once. */
async function reportInterrupt(client: PlatformClient, follow: WantToFollow, presses$: Observable<unknown>): Promise<void> {
  const rootId = follow.want.want_id;
  if (!follow.cancelOnInterrupt) {
    process.stderr.write(`platform: interrupted; want ${rootId} keeps building; \`platform want cancel ${rootId}\` to stop it.\n`);
    return;
  }
  const canceled$ = defer(() => client.cancelWant(rootId)).pipe(
    map((w) => `platform: interrupted; want ${rootId} is ${w.status}.\n`),
    catchError((err: unknown) => of(`platform: interrupted; canceling want ${rootId} failed: ${errorMessage(err)}\n`)),
    tap((text) => process.stderr.write(text)),
  );
  await firstValueFrom(race(canceled$, presses$.pipe(take(1))));
}

/**
 * Shows the want's progress until it ends, then its summary, and says how it ended. `startedAt` (epoch ms) is
 * what elapsed times count from: when the build began, or when the want was created. `sigint$` is Ctrl-C
 * (`fromEvent(process, 'SIGINT')`): while the follow watches it, Ctrl-C no longer ends the process by itself.
 */
export async function followWant(
  { client, options }: CommandContext,
  follow: WantToFollow,
  startedAt: number,
  sigint$: Observable<unknown>,
): Promise<FollowOutcome> {
  const { want: root, created, after } = follow;
  const rootId = root.want_id;
  const endedBefore = !created && TERMINAL_WANT_STATUSES.has(root.status);
  const tty = isTty() && !options.json;
  const model = newBuildModel(root, startedAt, { rootCreated: !created });
  const view = progressView(model, options.json ? 'silent' : tty ? 'tty' : 'plain');
  if (!options.json) {
    const refs = listShort(root.partitions, 3);
    const what = created ? `created for ${refs}` : `for ${refs} is ${root.status}${endedBefore ? '' : '; waiting for it'}`;
    if (tty) line(`${colors.bold(`want ${rootId}`)} ${colors.dim(what)}`);
    else if (created) view.note(`want ${rootId} ${what} (${root.status})`, Date.parse(root.created_at));
    else view.note(`want ${rootId} ${what}`);
  }
  view.start();

  // Ctrl-C is ours from now on (the want exists and must be reported or canceled): one listener, held until the
  // ending is known, and through the report after an interrupt.
  const presses$ = sigint$.pipe(share());
  const held = presses$.subscribe();
  const tracking: Tracking = { client, model, view };
  try {
    for (const w of follow.derived) trackWant(model, w);
    const ending = await firstValueFrom(
      followEnding({
        want: root,
        catchUp$: readRuns$(tracking, [root, ...follow.derived].flatMap((w) => w.job_run_ids)),
        events$: eventNews$(tracking, client.eventStream({ after })),
        readWant: () => defer(() => client.getWant(rootId)).pipe(tap((w) => (model.wantStatus = w.status))),
        sigint$: presses$,
        pollMs: POLL_MS,
      }),
    );
    if (ending.kind === 'done') {
      // The want's status can be read before the stream delivered the last run events: catch up on those runs.
      const active = [...model.runs.values()].filter((r) => r.status === 'queued' || r.status === 'running');
      for (const r of active) {
        const latest = await client.getJobRun(r.job_run_id).catch(() => undefined);
        if (latest) view.changes(applyRunSnapshot(model, latest));
      }
    }
    view.stop();
    if (ending.kind === 'interrupted') {
      await reportInterrupt(client, follow, presses$);
      return ending;
    }
    held.unsubscribe();
    if (ending.kind === 'error') return ending;
    if (ending.kind === 'stream-ended') {
      if (!options.json && model.runs.size > 0) line(summaryTable([...model.runs.values()]));
      return {
        kind: 'stream-ended',
        message: `the server ended the event stream before want ${rootId} finished (it shut down?). The want is kept: 'platform want get ${rootId}' shows where it is, 'platform want wait ${rootId}' resumes waiting.`,
      };
    }
    return { kind: 'done', want: ending.want, ...(await summary({ client, options }, model, ending.want, endedBefore)) };
  } finally {
    view.stop();
    held.unsubscribe();
  }
}

/** The summary of a want that is over; for one that is not successful, why. */
async function summary({ client, options }: CommandContext, model: BuildModel, want: WantView, endedBefore: boolean): Promise<{ failure?: string }> {
  const rootId = want.want_id;
  model.wantStatus = want.status;
  // A want that was over before it was waited for took until its last update, not until now.
  const took = elapsed((endedBefore ? Date.parse(want.updated_at) : Date.now()) - model.startedAt);
  const runs = [...model.runs.values()];
  let failed: FailedRun[] = failedRuns(model);
  if (want.status !== 'successful' && want.status !== 'canceled' && failed.length === 0) {
    failed = await failedRunsFromServer(client, rootId).catch(() => []);
  }

  if (options.json) {
    const details = await Promise.all(runs.map((r) => client.getJobRun(r.job_run_id)));
    printJson({ want_id: rootId, status: want.status, want, job_runs: details });
  } else {
    if (runs.length > 0) line(summaryTable(runs));
    if (want.status === 'successful') {
      const what = runs.length === 0 ? 'nothing to build, every partition was already live' : `${runs.length} job run${runs.length === 1 ? '' : 's'}`;
      line(`${colors.green('✓')} want ${colors.bold(rootId)} ${statusColor('successful')} in ${took} (${what}).`);
    }
  }
  return want.status === 'successful' ? {} : { failure: failureMessage(want, failed, took) };
}
