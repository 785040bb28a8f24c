/**
 * The model behind `platform build`'s progress: which wants belong to the build (the root want and the wants
 * derived from it), which job runs serve them and where each run is. It is updated from the event stream (and
 * from job-run snapshots for runs the build joined before it started), and rendered by pure functions:
 * `renderProgress` for the redrawn block on a terminal, `plainLine` for one line per change otherwise.
 */
import { groupDigits } from '../group-digits.js';
import type { EventView, JobRunView, WantView } from '../client/platform-client.js';
import type { JobRunStatus } from '../state/build-state.js';
import { runEndedAt } from '../state/run-ended-at.js';
import { exitCodeOf } from '../state/run-exit-code.js';
import { runStartedAt } from '../state/run-started-at.js';
import { waitingInQueue } from '../api/run-placement.js';
import { formatDuration } from '../duration.js';

export interface TrackedWant {
  want_id: string;
  partitions: string[];
}

export interface TrackedRun {
  job_run_id: string;
  job_label: string;
  status: JobRunStatus;
  attempt: number;
  outputs: string[];
  queued_at: number | null;
  started_at: number | null;
  ended_at: number | null;
  exit_code: number | null;
  signal: string;
  reason: string;
  /** A failed attempt that will be retried (as a new run). */
  retrying: boolean;
  /** Handed to a queue that no worker has taken it from yet (`running` by the log; nothing runs it). */
  waiting_in: string | undefined;
  /** The platform worker that took it from its queue, once one did. */
  worker: string | undefined;
}

export interface BuildModel {
  readonly rootWantId: string;
  /** Epoch ms when the build started (the client's clock; plain lines count from it). */
  readonly startedAt: number;
  /** The root want's status, as last read from the server. */
  wantStatus: string;
  /**
   * Whether the root's `want_created` event has been seen. Until then (events from just before the want was
   * created) no run or want is added: only runs already tracked move.
   */
  rootCreated: boolean;
  readonly wants: Map<string, TrackedWant>;
  /** Every partition the tracked wants ask for: a run for one of them serves the build. */
  readonly wantedRefs: Set<string>;
  /** In the order they became known. */
  readonly runs: Map<string, TrackedRun>;
  /** The root want's own partitions: the want ends well only when the last run for one of them did. */
  readonly rootRefs: ReadonlySet<string>;
  /**
   * How many of `runs` that output a root partition are queued or running, kept as they move (a build of 10,000
   * runs asks after each end). Not every run: a run for an input the build already got (a schedule's rebuild of it,
   * say) would hold back the end of a build it no longer serves.
   */
  activeRoot: number;
}

/** A run's status moved: what a plain line reports. */
export interface RunChange {
  run: TrackedRun;
  status: JobRunStatus;
  /** Epoch ms of the change (the event's time). */
  at: number;
  /** Not a change of status: a worker took the run (`running` already) from its queue. */
  taken?: true;
}

const RANK: Record<JobRunStatus, number> = { queued: 0, running: 1, succeeded: 2, failed: 2, dep_missed: 2, canceled: 2 };

export function newBuildModel(
  root: Pick<WantView, 'want_id' | 'partitions' | 'status'>,
  startedAt: number,
  options: { rootCreated?: boolean } = {},
): BuildModel {
  return {
    rootWantId: root.want_id,
    startedAt,
    wantStatus: root.status,
    rootCreated: options.rootCreated ?? false,
    wants: new Map([[root.want_id, { want_id: root.want_id, partitions: [...root.partitions] }]]),
    wantedRefs: new Set(root.partitions),
    runs: new Map(),
    rootRefs: new Set(root.partitions),
    activeRoot: 0,
  };
}

const isActive = (status: JobRunStatus): boolean => status === 'queued' || status === 'running';
const servesRoot = (model: BuildModel, run: TrackedRun): boolean => run.outputs.some((ref) => model.rootRefs.has(ref));

/** Keeps `activeRoot` as `run` moves from `from` (undefined: newly known) to `to`. */
function counted(model: BuildModel, run: TrackedRun, from: JobRunStatus | undefined, to: JobRunStatus): void {
  if (servesRoot(model, run)) model.activeRoot += Number(isActive(to)) - Number(from !== undefined && isActive(from));
}

/**
 * Whether the build may just have ended: a run for a root partition ended with none left to go (the root can end
 * well only then), or a run ended otherwise than well (a failure or a cancel may end it at once).
 */
export function mayHaveEnded(model: BuildModel, changes: readonly RunChange[]): boolean {
  const ends = changes.filter((c) => !isActive(c.status));
  return ends.some((c) => c.status !== 'succeeded') || (model.activeRoot === 0 && ends.some((c) => servesRoot(model, c.run)));
}

/** Adds a want the build depends on (a derived want, or one read from the server). */
export function trackWant(model: BuildModel, want: TrackedWant): void {
  if (model.wants.has(want.want_id)) return;
  model.wants.set(want.want_id, { want_id: want.want_id, partitions: [...want.partitions] });
  for (const ref of want.partitions) model.wantedRefs.add(ref);
}

function servesBuild(model: BuildModel, wantIds: readonly string[], outputs: readonly string[]): boolean {
  if (wantIds.some((id) => model.wants.has(id))) return true;
  // A run another want queued for a ref this build wants: the build joins it (as the server records it).
  return outputs.some((ref) => model.wantedRefs.has(ref));
}

/**
 * Folds one event into the model; returns the run status changes it caused. Statuses only move forward
 * (queued -> running -> ended), so an event older than a snapshot changes nothing.
 */
export function applyEvent(model: BuildModel, event: EventView): RunChange[] {
  const at = Date.parse(event.timestamp);
  switch (event.type) {
    case 'want_created': {
      const e = event.want_created;
      if (e.want_id === model.rootWantId) model.rootCreated = true;
      if (!model.rootCreated) return [];
      if (e.root_want_id === model.rootWantId || model.wants.has(e.parent_want_id)) trackWant(model, e);
      return [];
    }
    case 'job_run_queued': {
      const e = event.job_run_queued;
      if (!model.rootCreated) return [];
      if (model.runs.has(e.job_run_id) || !servesBuild(model, e.want_ids, e.config.outputs)) return [];
      const run = newRun(e.job_run_id, e.job_label, e.attempt, e.config.outputs, at);
      model.runs.set(run.job_run_id, run);
      counted(model, run, undefined, 'queued');
      return [{ run, status: 'queued', at }];
    }
    case 'job_run_started': {
      const e = event.job_run_started;
      return move(model, e.job_run_id, 'running', at, (r) => {
        r.started_at = runStartedAt(e.started_at, r.queued_at ?? 0, at);
        r.waiting_in = waitingInQueue(e.worker);
      });
    }
    case 'job_run_placed': {
      // A run handed to a queue starts when a worker takes it (when it says so: taken while no daemon ran), as the
      // state has it.
      const e = event.job_run_placed;
      const run = model.runs.get(e.job_run_id);
      if (run?.status !== 'running') return [];
      run.started_at = runStartedAt(e.started_at, run.queued_at ?? 0, at);
      run.waiting_in = undefined;
      run.worker = e.worker || undefined;
      return run.worker ? [{ run, status: 'running', at, taken: true }] : [];
    }
    case 'job_run_succeeded': {
      const e = event.job_run_succeeded;
      return move(model, e.job_run_id, 'succeeded', at, (r) => {
        r.ended_at = runEndedAt(e.ended_at, r.started_at ?? r.queued_at, at);
        r.exit_code = 0;
      });
    }
    case 'job_run_failed': {
      const e = event.job_run_failed;
      return move(model, e.job_run_id, 'failed', at, (r) => {
        r.ended_at = runEndedAt(e.ended_at, r.started_at ?? r.queued_at, at);
        r.exit_code = exitCodeOf(e.exit_code);
        r.signal = e.signal;
        r.reason = e.reason;
        r.retrying = e.retry_at > 0;
      });
    }
    case 'job_run_canceled': {
      const e = event.job_run_canceled;
      return move(model, e.job_run_id, 'canceled', at, (r) => {
        r.ended_at = at;
        r.reason = e.reason;
        // Canceled while it waited for a worker: it never started, as the state has it.
        if (r.waiting_in !== undefined) r.started_at = null;
        r.waiting_in = undefined;
      });
    }
    case 'job_run_dep_missed': {
      const e = event.job_run_dep_missed;
      return move(model, e.job_run_id, 'dep_missed', at, (r) => {
        r.ended_at = runEndedAt(e.ended_at, r.started_at ?? r.queued_at, at);
        r.reason = `missing ${e.missing.join(', ')}`;
      });
    }
    default:
      return [];
  }
}

function move(model: BuildModel, id: string, status: JobRunStatus, at: number, update: (r: TrackedRun) => void): RunChange[] {
  const run = model.runs.get(id);
  if (!run || RANK[status] <= RANK[run.status]) return [];
  counted(model, run, run.status, status);
  run.status = status;
  update(run);
  return [{ run, status, at }];
}

/**
 * A run read from the server (one the build joined, or one not yet seen in the events): added, or moved
 * forward. The changes it reports are the steps the events would have shown (queued, running, the end), from
 * where the model had the run, with the run's own times.
 */
export function applyRunSnapshot(model: BuildModel, view: JobRunView): RunChange[] {
  const ms = (iso: string | null) => (iso ? Date.parse(iso) : null);
  const existing = model.runs.get(view.job_run_id);
  if (existing && RANK[view.status] <= RANK[existing.status]) return [];
  const run: TrackedRun = existing ?? newRun(view.job_run_id, view.job_label, view.attempt, view.outputs, null);
  const changes: RunChange[] = [];
  const queuedAt = ms(view.queued_at) ?? model.startedAt;
  if (!existing) changes.push({ run, status: 'queued', at: queuedAt });
  const startedAt = ms(view.started_at);
  if (startedAt !== null && RANK[run.status] < RANK.running) changes.push({ run, status: 'running', at: startedAt });
  if (RANK[view.status] > RANK.running) changes.push({ run, status: view.status, at: ms(view.ended_at) ?? startedAt ?? queuedAt });
  counted(model, run, existing?.status, view.status);
  run.status = view.status;
  run.queued_at = ms(view.queued_at);
  run.started_at = startedAt;
  run.ended_at = ms(view.ended_at);
  run.exit_code = view.exit_code;
  run.signal = view.signal ?? '';
  run.reason = view.reason ?? '';
  run.retrying = view.status === 'failed' && view.retry_at !== null;
  run.waiting_in = view.status === 'running' ? waitingInQueue(view.worker) : undefined;
  run.worker = view.worker && view.worker !== 'local' && run.waiting_in === undefined ? view.worker : undefined;
  if (!existing) model.runs.set(run.job_run_id, run);
  return changes;
}

export interface Counts {
  queued: number;
  running: number;
  succeeded: number;
  failed: number;
  /** canceled and dep_missed (the latter is rerun as a new run). */
  other: number;
  total: number;
}

export function countRuns(model: BuildModel): Counts {
  const c: Counts = { queued: 0, running: 0, succeeded: 0, failed: 0, other: 0, total: 0 };
  for (const r of model.runs.values()) {
    c.total++;
    if (r.status === 'queued') c.queued++;
    else if (r.status === 'running') c.running++;
    else if (r.status === 'succeeded') c.succeeded++;
    else if (r.status === 'failed') c.failed++;
    else c.other++;
  }
  return c;
}

/** Runs that failed for good (no retry coming). */
export function failedRuns(model: BuildModel): TrackedRun[] {
  return [...model.runs.values()].filter((r) => r.status === 'failed' && !r.retrying);
}

export function elapsed(ms: number): string {
  return formatDuration(Math.max(0, ms), { tenths: true });
}

/**
 * When a change happened, from the build's start: a joined run's steps that came before it are negative (`-4.2s`),
 * not all `0.0s`. A few ms under zero are the two clocks (server and client), not a step before the build.
 */
function sinceStart(ms: number): string {
  return ms < -50 ? `-${elapsed(-ms)}` : elapsed(ms);
}

/** Colours for the rendered parts; identity by default, so the output is plain text. */
export interface Paint {
  good(s: string): string;
  bad(s: string): string;
  busy(s: string): string;
  dim(s: string): string;
  bold(s: string): string;
}

const noPaint: Paint = { good: (s) => s, bad: (s) => s, busy: (s) => s, dim: (s) => s, bold: (s) => s };

type Part = [text: string, paint?: (s: string) => string];

/** Joins parts into one line of at most `width` visible characters, painting after cutting. */
function fit(parts: Part[], width: number): string {
  let room = Math.max(1, width);
  let out = '';
  for (const [text, paint] of parts) {
    if (room <= 0) break;
    let t = text;
    if (t.length > room) t = room > 1 ? `${t.slice(0, room - 1)}…` : '…';
    room -= t.length;
    out += paint ? paint(t) : t;
  }
  return out;
}

const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const BAR_WIDTH = 16;

/**
 * The live block: a status line (spinner, want, status, elapsed time, a bar of ended runs), the counts
 * (queued, running, succeeded, failed), and the running job runs (label, id, how long they run, outputs), one
 * line each up to `maxRunning`; every line at most `width` wide.
 */
export function renderProgress(model: BuildModel, nowMs: number, width: number, paint: Paint = noPaint, maxRunning = 5): string[] {
  const c = countRuns(model);
  const ended = c.succeeded + c.failed + c.other;
  const filled = c.total === 0 ? 0 : Math.round((ended / c.total) * BAR_WIDTH);
  const spin = SPINNER[Math.floor(nowMs / 100) % SPINNER.length]!;
  const head: Part[] = [
    [`${spin} `, paint.busy],
    [model.rootWantId, paint.bold],
    [` ${model.wantStatus} `],
    [elapsed(nowMs - model.startedAt), paint.dim],
    ['  ['],
    ['#'.repeat(filled), paint.good],
    ['-'.repeat(BAR_WIDTH - filled), paint.dim],
    [`] ${groupDigits(ended)}/${groupDigits(c.total)} job runs ended`],
  ];
  const tally: Part[] = [
    ['  '],
    [`queued ${groupDigits(c.queued)}`],
    [' · '],
    [`running ${groupDigits(c.running)}`, c.running > 0 ? paint.busy : undefined],
    [' · '],
    [`succeeded ${groupDigits(c.succeeded)}`, c.succeeded > 0 ? paint.good : undefined],
    [' · '],
    [`failed ${groupDigits(c.failed)}`, c.failed > 0 ? paint.bad : undefined],
  ];
  if (c.other > 0) tally.push([' · '], [`other ${groupDigits(c.other)}`, paint.dim]);
  const lines = [fit(head, width), fit(tally, width)];
  const running = [...model.runs.values()].filter((r) => r.status === 'running');
  for (const r of running.slice(0, maxRunning)) {
    const since = r.started_at ?? r.queued_at;
    lines.push(
      fit(
        [
          ['  ▸ '],
          [r.job_label, paint.busy],
          [` ${r.job_run_id}`, paint.dim],
          r.waiting_in !== undefined
            ? [` waiting for a worker (queue ${r.waiting_in}) ${since !== null ? elapsed(nowMs - since) : ''}`, paint.busy]
            : [`${r.worker ? ` on ${r.worker}` : ''}${since !== null ? ` ${elapsed(nowMs - since)}` : ''}`],
          [r.outputs.length > 0 ? `  ${r.outputs.join(', ')}` : '', paint.dim],
        ],
        width,
      ),
    );
  }
  if (running.length > maxRunning) lines.push(fit([[`  … and ${groupDigits(running.length - maxRunning)} more running`, paint.dim]], width));
  return lines;
}

/** One line per run status change, for a log or a pipe: `[12.3s] r-4 daily_revenue running`. */
export function plainLine(change: RunChange, startedAt: number): string {
  const r = change.run;
  let detail = '';
  if (change.status === 'failed') {
    // The server's reason already names the exit code or signal; without one, say it here.
    const how = r.reason || (r.signal ? `killed by ${r.signal}` : r.exit_code !== null && r.exit_code >= 0 ? `exit code ${r.exit_code}` : '');
    const bits = [how, r.retrying ? 'will retry' : ''].filter((b) => b !== '');
    if (bits.length > 0) detail = ` (${bits.join('; ')})`;
  } else if ((change.status === 'canceled' || change.status === 'dep_missed') && r.reason) {
    detail = ` (${r.reason})`;
  } else if (change.status === 'queued' && r.attempt > 1) {
    detail = ` (attempt ${r.attempt})`;
  } else if (change.status === 'running' && r.waiting_in !== undefined) {
    detail = ` (handed to queue ${r.waiting_in}, waiting for a worker)`;
  } else if (change.taken) {
    return `[${sinceStart(change.at - startedAt)}] ${r.job_run_id} ${r.job_label} taken by worker ${r.worker}`;
  }
  return `[${sinceStart(change.at - startedAt)}] ${r.job_run_id} ${r.job_label} ${change.status}${detail}`;
}

/** A run as first seen: queued, nothing known of how it will end. */
function newRun(job_run_id: string, job_label: string, attempt: number, outputs: readonly string[], queued_at: number | null): TrackedRun {
  return {
    job_run_id,
    job_label,
    status: 'queued',
    attempt,
    outputs: [...outputs],
    queued_at,
    started_at: null,
    ended_at: null,
    exit_code: null,
    signal: '',
    reason: '',
    retrying: false,
    waiting_in: undefined,
    worker: undefined,
  };
}
