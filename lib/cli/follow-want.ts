/**
 * Following a want like a build tool, for `platform build` (a want it just created) and `platform want wait` (one
 * that exists): follows the events stream from an id read before the want was created or read (so nothing in
 * between is missed), tracks the root want, the wants derived from it and the job runs that serve them, and
 * shows progress: redrawn in place on a terminal, one plain line per job run change otherwise. Ends with a
 * summary table; resolves when the want is successful, throws (exit 1) when it is not, exits 130 on Ctrl-C (the
 * want keeps building unless `cancelOnInterrupt`).
 */
import type { Subscription } from 'rxjs';
import type { EventView, JobRunView, PlatformClient, WantView } from '../client/platform-client.js';
import { errorMessage } from '../errors.js';
import { TERMINAL_WANT_STATUSES } from '../state/build-state.js';
import {
  applyEvent,
  applyRunSnapshot,
  elapsed,
  failedRuns,
  newBuildModel,
  plainLine,
  renderProgress,
  trackWant,
  type BuildModel,
  type Paint,
  type RunChange,
  type TrackedRun,
} from './build-progress.js';
import { colors, duration, endedHow, isTty, line, listShort, printJson, statusColor, table, type CommandContext } from './output.js';

/** A safety net besides the events: how often the root want's status is read anyway. */
const POLL_MS = 5_000;
const REDRAW_MS = 100;

type Ending =
  | { kind: 'done'; want: WantView }
  | { kind: 'stream-ended' }
  | { kind: 'interrupted' }
  | { kind: 'error'; error: unknown };

/** Where progress goes: redrawn on a terminal, plain lines in a pipe, nothing with --json. */
interface ProgressView {
  start(): void;
  changes(changes: RunChange[]): void;
  note(text: string, at?: number): void;
  refresh(): void;
  stop(): void;
}

const paint: Paint = {
  good: (s) => colors.green(s),
  bad: (s) => colors.red(s),
  busy: (s) => colors.yellow(s),
  dim: (s) => colors.dim(s),
  bold: (s) => colors.bold(s),
};

class PlainView implements ProgressView {
  constructor(private readonly model: BuildModel) {}
  start(): void {}
  changes(changes: RunChange[]): void {
    for (const c of changes) line(plainLine(c, this.model.startedAt));
  }
  note(text: string, at = Date.now()): void {
    line(`[${elapsed(at - this.model.startedAt)}] ${text}`);
  }
  refresh(): void {}
  stop(): void {}
}

class SilentView implements ProgressView {
  start(): void {}
  changes(): void {}
  note(): void {}
  refresh(): void {}
  stop(): void {}
}

/** The live block at the bottom of the terminal; ended runs are printed above it as permanent lines. */
class TtyView implements ProgressView {
  private drawn = 0;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private readonly out = process.stdout;

  constructor(private readonly model: BuildModel) {}

  start(): void {
    this.out.write('\x1b[?25l');
    process.once('exit', () => this.out.write('\x1b[?25h'));
    this.timer = setInterval(() => this.refresh(), REDRAW_MS);
    this.refresh();
  }

  changes(changes: RunChange[]): void {
    const ended = changes.filter((c) => c.status !== 'queued' && c.status !== 'running');
    if (ended.length > 0) {
      this.clear();
      for (const c of ended) this.out.write(`${this.permanent(c)}\n`);
    }
    this.refresh();
  }

  note(text: string): void {
    this.clear();
    this.out.write(`${text}\n`);
    this.refresh();
  }

  private permanent(c: RunChange): string {
    const text = plainLine(c, this.model.startedAt);
    if (c.status === 'succeeded') return `${colors.green('✓')} ${text}`;
    if (c.status === 'failed') return `${colors.red('✗')} ${c.run.retrying ? text : colors.red(text)}`;
    return `${colors.magenta('•')} ${text}`;
  }

  refresh(): void {
    if (this.stopped) return;
    const width = Math.max(20, (this.out.columns || 80) - 1);
    const lines = renderProgress(this.model, Date.now(), width, paint);
    this.clear();
    this.out.write(lines.join('\n'));
    this.drawn = lines.length;
  }

  private clear(): void {
    if (this.drawn === 0) return;
    this.out.write(`\r${this.drawn > 1 ? `\x1b[${this.drawn - 1}A` : ''}\x1b[J`);
    this.drawn = 0;
  }

  stop(): void {
    if (this.stopped) return;
    if (this.timer) clearInterval(this.timer);
    this.clear();
    this.stopped = true;
    this.out.write('\x1b[?25h');
  }
}

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

function failureMessage(want: WantView, failed: Array<{ job_run_id: string; job_label: string; exit_code: number | null; signal: string | null; reason: string | null }>, took: string): string {
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

/**
 * Shows the want's progress until it ends, then its summary. `startedAt` (epoch ms) is what elapsed times count
 * from: when the build began, or when the want was created.
 */
export async function followWant({ client, options }: CommandContext, follow: WantToFollow, startedAt: number): Promise<void> {
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
    else view.note(`want ${rootId} ${what}`);
  }
  view.start();

  let closed = false;
  // Runs the want joined (already queued or running for another want), and those of a want that was already
  // building, are known only from the server's answer, not from the events that follow.
  const snapshot = async (ids: readonly string[]) => {
    for (const id of ids) {
      if (model.runs.has(id)) continue;
      const run = await client.getJobRun(id);
      if (!closed) view.changes(applyRunSnapshot(model, run));
    }
  };

  let ending: Ending;
  let subscription: Subscription | undefined;
  let poll: NodeJS.Timeout | undefined;
  // Ctrl-C from now on is ours: the want exists and must be reported (or canceled).
  let onSigint!: () => void;
  const interrupted = new Promise<Ending>((resolve) => (onSigint = () => resolve({ kind: 'interrupted' })));
  process.on('SIGINT', onSigint);
  const followEvents = async (): Promise<Ending> => {
    for (const w of follow.derived) trackWant(model, w);
    await snapshot([root, ...follow.derived].flatMap((w) => w.job_run_ids));
    return new Promise<Ending>((resolve) => {
      let finished = false;
      const finish = (e: Ending) => {
        if (finished) return;
        finished = true;
        resolve(e);
      };
      if (TERMINAL_WANT_STATUSES.has(root.status)) return finish({ kind: 'done', want: root });

      // Reads the root want after events that may have changed it; one read at a time, coalesced.
      let checking = false;
      let again = false;
      const check = (): Promise<void> | undefined => {
        if (checking) {
          again = true;
          return undefined;
        }
        checking = true;
        return (async () => {
          try {
            do {
              again = false;
              const w = await client.getWant(rootId);
              model.wantStatus = w.status;
              if (TERMINAL_WANT_STATUSES.has(w.status)) return finish({ kind: 'done', want: w });
            } while (again && !finished);
          } catch {
            // The stream's end or error says what happened to the server; the poll tries again.
          } finally {
            checking = false;
          }
        })();
      };

      poll = setInterval(() => void check(), POLL_MS);

      subscription = client.eventStream({ after }).subscribe({
        next: (m) => {
          if (m.event === 'error') return finish({ kind: 'error', error: new Error(`the server failed to stream events: ${m.data}`) });
          let event: EventView;
          try {
            event = JSON.parse(m.data) as EventView;
          } catch {
            return;
          }
          const wantsBefore = model.wants.size;
          const changes = applyEvent(model, event);
          view.changes(changes);
          if (model.wants.size > wantsBefore && event.type === 'want_created') {
            // A derived want may join runs queued before it existed: read them.
            const id = event.want_created.want_id;
            client
              .getWant(id)
              .then((w) => {
                trackWant(model, w);
                return snapshot(w.job_run_ids);
              })
              .catch(() => undefined);
          }
          const concernsBuild =
            changes.length > 0 ||
            (event.type === 'want_created' && model.wants.has(event.want_created.want_id)) ||
            (event.type === 'want_canceled' && model.wants.has(event.want_canceled.want_id));
          if (concernsBuild) void check();
        },
        error: (error: unknown) => finish({ kind: 'error', error }),
        complete: () => {
          // The server ended the stream (it is shutting down): the want may still have finished just before.
          void (async () => {
            try {
              const w = await client.getWant(rootId);
              if (TERMINAL_WANT_STATUSES.has(w.status)) return finish({ kind: 'done', want: w });
            } catch {
              // gone already
            }
            finish({ kind: 'stream-ended' });
          })();
        },
      });
      void check();
    });
  };
  try {
    const following = followEvents();
    following.catch(() => undefined); // after Ctrl-C its failure no longer matters
    ending = await Promise.race([interrupted, following]);
    if (ending.kind === 'done') {
      // The want's status can be read before the stream delivered the last run events: catch up on those runs.
      const active = [...model.runs.values()].filter((r) => r.status === 'queued' || r.status === 'running');
      for (const r of active) {
        const latest = await client.getJobRun(r.job_run_id).catch(() => undefined);
        if (latest) view.changes(applyRunSnapshot(model, latest));
      }
    }
  } finally {
    closed = true;
    subscription?.unsubscribe();
    if (poll) clearInterval(poll);
    view.stop();
  }

  if (ending.kind === 'interrupted') {
    // A second Ctrl-C while canceling leaves at once.
    process.on('SIGINT', () => process.exit(130));
    if (follow.cancelOnInterrupt) {
      try {
        const w = await client.cancelWant(rootId);
        process.stderr.write(`platform: interrupted; want ${rootId} is ${w.status}.\n`);
      } catch (err) {
        process.stderr.write(`platform: interrupted; canceling want ${rootId} failed: ${errorMessage(err)}\n`);
      }
    } else {
      process.stderr.write(`platform: interrupted; want ${rootId} keeps building; \`platform want cancel ${rootId}\` to stop it.\n`);
    }
    process.exit(130);
  }
  process.off('SIGINT', onSigint);
  if (ending.kind === 'error') throw ending.error;
  if (ending.kind === 'stream-ended') {
    if (!options.json && model.runs.size > 0) line(summaryTable([...model.runs.values()]));
    throw new Error(
      `the server ended the event stream before want ${rootId} finished (it shut down?). The want is kept: 'platform want get ${rootId}' shows where it is, 'platform want wait ${rootId}' resumes waiting.`,
    );
  }

  const want = ending.want;
  model.wantStatus = want.status;
  // A want that was over before it was waited for took until its last update, not until now.
  const took = elapsed((endedBefore ? Date.parse(want.updated_at) : Date.now()) - startedAt);
  const runs = [...model.runs.values()];
  let failed: Array<{ job_run_id: string; job_label: string; exit_code: number | null; signal: string | null; reason: string | null }> =
    failedRuns(model);
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
  if (want.status !== 'successful') throw new Error(failureMessage(want, failed, took));
}
