import type { AppendList } from './append-list.js';
import type { BuildInput, JobConfig, OutputInputs, RebuildPolicy, WantSource } from '../events/build-event.js';
import { OrderedMap, compareNumbers, compareStrings, type Compare } from './ordered-map.js';
import type { PartitionCounts } from './want-status.js';

export type WantStatus =
  | 'idle'
  | 'building'
  | 'upstream_building'
  | 'successful'
  | 'failed'
  | 'upstream_failed'
  | 'canceled';

/**
 * `canceled`: its first build was canceled (no active want needed it); a canceled rebuild leaves a partition as its
 * build is (reduce.ts `asItsBuildOr`). `tainted`: marked for rebuild.
 */
export type PartitionStatus = 'building' | 'live' | 'failed' | 'canceled' | 'tainted';

export type JobRunStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'dep_missed' | 'canceled';

export const WANT_STATUSES: readonly WantStatus[] = [
  'idle', 'building', 'upstream_building', 'successful', 'failed', 'upstream_failed', 'canceled',
];
export const PARTITION_STATUSES: readonly PartitionStatus[] = ['building', 'live', 'failed', 'canceled', 'tainted'];
export const JOB_RUN_STATUSES: readonly JobRunStatus[] = [
  'queued', 'running', 'succeeded', 'failed', 'dep_missed', 'canceled',
];

export const TERMINAL_WANT_STATUSES: ReadonlySet<WantStatus> = new Set([
  'successful', 'failed', 'upstream_failed', 'canceled',
]);
export const ACTIVE_JOB_RUN_STATUSES: ReadonlySet<JobRunStatus> = new Set(['queued', 'running']);
/** Most refs a want's `rebuilt` keeps (what its view shows); `rebuilt_total` counts them all. */
export const REBUILT_KEPT = 1000;
export const ACTIVE_WANT_STATUSES: readonly WantStatus[] = WANT_STATUSES.filter((s) => !TERMINAL_WANT_STATUSES.has(s));

export interface WantRecord {
  readonly want_id: string;
  /** Creation order, 1-based; lists sort by it. */
  readonly seq: number;
  /** Id of the event that created the want: failures older than this are not the want's failures. */
  readonly created_event_id: number;
  readonly partitions: readonly string[];
  readonly comment: string;
  readonly data_timestamp: number;
  readonly ttl_seconds: number;
  readonly sla_seconds: number;
  readonly source: WantSource;
  readonly parent_want_id: string;
  readonly root_want_id: string;
  readonly status: WantStatus;
  readonly created_at: number;
  readonly updated_at: number;
  /** Its derived wants, oldest first (append-list.ts: an append copies no list). */
  readonly child_want_ids: AppendList<string>;
  /** The runs that served it, oldest first. */
  readonly job_run_ids: AppendList<string>;
  readonly cancel_reason: string;
  /** Its partitions by where they stand (see want-status.ts); kept by reduce as partitions move. */
  readonly counts: PartitionCounts;
  readonly rebuild: RebuildPolicy;
  /** Its sla deadline passed before it was successful (recorded once, by `want_sla_missed`). */
  readonly sla_missed: boolean;
  /** Partitions that had a build and were built again by runs serving this want: the first REBUILT_KEPT. */
  readonly rebuilt: readonly string[];
  /** How many builds replaced one for it and its derived wants (a partition rebuilt twice counts twice). */
  readonly rebuilt_total: number;
  readonly priority: number;
  /** The backfill this want is ('' for any other): it goes on past failed partitions (want-status.ts). */
  readonly backfill_id: string;
  /** Most runs serving it and its derived wants at once; 0 = no cap of its own. */
  readonly max_concurrent_job_runs: number;
  /** The brace pattern its partitions came from; '' when they were listed. */
  readonly pattern: string;
  /**
   * How many of its partitions may be open at once (want-window.ts); 0: the want is small and schedules all of
   * them. A windowed want's scheduling costs its window, not its range.
   */
  readonly window: number;
  /** How many of its partitions, from the first, have been released into its window. */
  readonly released: number;
  /** The schedule tick that made it (epoch ms); 0 when no schedule did. */
  readonly schedule_tick: number;
  /**
   * How many of its derived wants are still active, and how many failed (failed or upstream_failed): kept by `putWant`
   * as each derived want's status moves, so its status is derived without walking them (want-status.ts). The record in
   * `wants` holds the true counts; a copy held aside meanwhile may not (putWant keeps the stored ones).
   */
  readonly children_active: number;
  readonly children_failed: number;
}

export interface PartitionRecord {
  readonly ref: string;
  readonly status: PartitionStatus;
  /** The latest job run that built (or is building) the partition. */
  readonly job_run_id: string;
  /** Event id of the last status change. */
  readonly changed_event_id: number;
  readonly created_at: number;
  readonly updated_at: number;
  /** The current build (the last that made it live); '' if it never was. */
  readonly build_id: string;
  /** Event id of the current build ('all' wants rebuild what was built before they were made). */
  readonly built_event_id: number;
  /** Why the current build is out of date; empty when it is not (see staleness.ts). */
  readonly stale_reasons: readonly string[];
  /**
   * The current build was tainted: kept while it is rebuilt and when that rebuild fails, until a new build replaces
   * it, so what consumed it stays stale. (Absent, read as false, in compaction bases written before it.)
   */
  readonly build_tainted: boolean;
  /**
   * Event id of its latest run's failure for good, which left it as its build is (live, or tainted): the wants made
   * before it that needed that rebuild fail with it (want-status.ts). 0 once anything newer moved it (a run, a taint,
   * a build); absent, read as 0, in compaction bases written before session 31.
   */
  readonly rebuild_failed_event_id: number;
}

/**
 * One time a partition became live, by which run. What the run consumed, its job and that job's fingerprint are
 * the run's (`buildLineage`): kept once, on the run, not again on each of its outputs' builds.
 */
/** Its current build was tainted: `tainted`, or marked while rebuilt and after that rebuild failed (until replaced). */
export function buildIsTainted(p: PartitionRecord | undefined): boolean {
  return p !== undefined && (p.status === 'tainted' || p.build_tainted);
}

export interface BuildRecord {
  readonly build_id: string;
  readonly seq: number;
  readonly partition_ref: string;
  readonly job_run_id: string;
  readonly built_at: number;
  readonly event_id: number;
}

export interface BuildLineage {
  readonly job_label: string;
  readonly inputs: readonly BuildInput[];
  readonly job_fingerprint: string;
}

const NO_LINEAGE: BuildLineage = { job_label: '', inputs: [], job_fingerprint: '' };

export function buildLineage(state: Pick<BuildState, 'job_runs'>, build: BuildRecord): BuildLineage {
  const run = state.job_runs.get(build.job_run_id);
  return run ? { job_label: run.job_label, inputs: outputInputBuilds(run, build.partition_ref), job_fingerprint: run.job_fingerprint } : NO_LINEAGE;
}

/** The builds one output of a run consumed: all the run's, or for a batch run only that output's own inputs. */
export function outputInputBuilds(run: Pick<JobRunRecord, 'input_builds' | 'output_inputs'>, output: string): readonly BuildInput[] {
  if (run.output_inputs.length === 0) return run.input_builds;
  // Indexed once a run (its lists are shared by every version of its record): a batch of n outputs asks n times,
  // and a search of both lists each time was O(n^2) on its success, its replay and every view of its builds.
  let index = batchIndexes.get(run.output_inputs);
  if (!index) {
    const position = new Map<string, number>();
    run.input_builds.forEach((b, i) => position.set(b.partition_ref, i));
    index = { position, own: new Map(run.output_inputs.map((o) => [o.output, o.inputs])) };
    batchIndexes.set(run.output_inputs, index);
  }
  const own = index.own.get(output);
  if (!own) return run.input_builds;
  // In the run's own order, as a filter of input_builds gave them.
  const at: number[] = [];
  for (const ref of own) {
    const i = index.position.get(ref);
    if (i !== undefined) at.push(i);
  }
  return at.sort((a, b) => a - b).map((i) => run.input_builds[i]!);
}

interface BatchIndex {
  readonly position: Map<string, number>;
  readonly own: Map<string, readonly string[]>;
}
const batchIndexes = new WeakMap<readonly OutputInputs[], BatchIndex>();

export interface TaintRecord {
  readonly taint_id: string;
  readonly seq: number;
  readonly partitions: readonly string[];
  readonly reason: string;
  readonly downstream: boolean;
  readonly created_at: number;
  /**
   * The event that made it: its refs' builds made before it are the ones it marked (`taintCounts`). 0 (or absent) in
   * a record written before it was kept: such a taint counts whatever of its refs is tainted now.
   */
  readonly event_id: number;
  /** How many of its refs it still counts (`taintCounts`): moved by the fold as each one flips (taints_by_ref). */
  readonly still_tainted: number;
}

/**
 * Whether taint `t` counts `p` among its refs still tainted: p's current build is tainted and is one made before the
 * taint (its own mark, or one it found marked), not rebuilt since. A later taint's mark on a build that replaced the
 * one `t` marked is that taint's, not `t`'s: `t` stays rebuilt. A record without its event counts any tainted build.
 */
export function taintCounts(taintEventId: number, p: PartitionRecord | undefined): boolean {
  if (!buildIsTainted(p)) return false;
  return !taintEventId || p!.built_event_id < taintEventId;
}

export interface JobRunRecord {
  readonly job_run_id: string;
  readonly seq: number;
  readonly job_label: string;
  readonly config: JobConfig;
  readonly attempt: number;
  readonly exec: readonly string[];
  readonly timeout_seconds: number;
  readonly status: JobRunStatus;
  readonly pid: number;
  /** Where it ran: 'local', or a worker's name; '' until it started. */
  readonly worker: string;
  /** null until it ended, and when the job gave none: killed by a signal (`signal`) or never started (run-exit-code.ts). */
  readonly exit_code: number | null;
  readonly signal: string;
  readonly reason: string;
  /** Epoch ms when the next attempt may be queued; 0 when none will be. */
  readonly retry_at: number;
  /**
   * The run that retried it (its next attempt), once queued: set by the fold from that run's `job_run_queued`
   * (`retry_of`), the first one naming it (of a batch retried in halves, the half with its first output). '' until
   * then, for a run never retried, and for runs retried in logs or compaction bases written before it was recorded
   * (the view works those out as it did before: views.ts).
   */
  readonly retried_by: string;
  readonly missing: readonly string[];
  readonly queued_at: number;
  readonly started_at: number | null;
  readonly ended_at: number | null;
  /** The builds of its inputs that were live when it was queued: what its outputs' builds consumed. */
  readonly input_builds: readonly BuildInput[];
  readonly job_fingerprint: string;
  /** A batch run's inputs per output (empty for a run of one ref). */
  readonly output_inputs: readonly OutputInputs[];
  /** The highest priority of the wants it serves: queued runs start in this order, then oldest first. */
  readonly priority: number;
}

/**
 * The order of the maps keyed by want, run and build id: shorter first, then code units. Ids are `<prefix>-<n>`
 * numbered in creation order, so this is creation order, and a page of wants by seq reads neighbours in the map
 * (and in a loaded snapshot's blocks of records) where code-unit order scattered them (w-12 before w-120 before w-13).
 */
export const compareIds: Compare<string> = (a, b) => a.length - b.length || compareStrings(a, b);

/** Want ids by creation seq. */
export type WantSet = OrderedMap<number, string>;

export const NO_WANTS: WantSet = OrderedMap.empty(compareNumbers);

/** The active wants on a ref, oldest first. */
export function activeWantsOn(state: Pick<BuildState, 'active_wants_by_ref'>, ref: string): IterableIterator<string> {
  return (state.active_wants_by_ref.get(ref) ?? NO_WANTS).values();
}

/** The wants a run serves, oldest first. */
export function wantsOfRun(state: Pick<BuildState, 'run_wants'>, jobRunId: string): IterableIterator<string> {
  return (state.run_wants.get(jobRunId) ?? NO_WANTS).values();
}

/** A status index: creation seq -> id, so a page of one status costs the page. */
export type StatusIndex<S extends string> = Readonly<Record<S, OrderedMap<number, string>>>;

export interface BuildState {
  readonly last_event_id: number;
  readonly wants: OrderedMap<string, WantRecord>;
  readonly want_order: OrderedMap<number, string>;
  readonly wants_by_status: StatusIndex<WantStatus>;
  /**
   * ref -> the non-terminal wants that ask for it, by creation seq (joins, cancel and status propagation). A map, not
   * a list: a hundred thousand wants on one input each cost O(log n) to add and remove.
   */
  readonly active_wants_by_ref: OrderedMap<string, WantSet>;
  /** Job run id -> the wants it serves (those that queued it and those that joined it), by creation seq. */
  readonly run_wants: OrderedMap<string, WantSet>;
  /** Sorted by ref, so a prefix query is a range scan. */
  readonly partitions: OrderedMap<string, PartitionRecord>;
  readonly partitions_by_status: Readonly<Record<PartitionStatus, OrderedMap<string, true>>>;
  readonly job_runs: OrderedMap<string, JobRunRecord>;
  readonly job_run_order: OrderedMap<number, string>;
  readonly job_runs_by_status: StatusIndex<JobRunStatus>;
  readonly builds: OrderedMap<string, BuildRecord>;
  /** `<ref>\0<build seq, 12 digits>` -> build id: a partition's history is a range, newest last. */
  readonly build_history: OrderedMap<string, string>;
  /** `<input build id>\0<consumer ref>` -> that ref's current build, which consumed the input build (only current builds). */
  readonly consumers: OrderedMap<string, string>;
  /** `<job label>\0<ref>`: partitions whose current build that job made (a job edit makes them stale). */
  readonly partitions_by_job: OrderedMap<string, true>;
  /** The job definitions' fingerprints as last recorded. */
  readonly job_fingerprints: OrderedMap<string, string>;
  readonly taints: OrderedMap<string, TaintRecord>;
  readonly taint_order: OrderedMap<number, string>;
  /**
   * `<ref>\0<taint id>` for each ref a taint lists: the taints whose count moves when that partition's build does; the
   * value is the taint's `event_id` in decimal (a plain map of an image holds `true` or strings), so a flip decides
   * which count moves without reading the taint's record (an image's records are decoded at each read until one is
   * written, and a downstream taint's holds its 15,000 refs: 1,095 flips read 30,000 refs each).
   */
  readonly taints_by_ref: OrderedMap<string, string>;
  /** `<sla deadline, 15 digits>\0<want id>` of wants whose sla can still be missed: the due ones are a prefix. */
  readonly sla_pending: OrderedMap<string, true>;
  /** How many wants missed their sla (for the metrics counter). */
  readonly wants_sla_missed: number;
  /** Queued runs in launch order (`queueKey`): highest priority first, then oldest. */
  readonly queued_by_priority: OrderedMap<string, string>;
  /** `<want id>\0<ref>` of a windowed want's released partitions that are not settled yet (want-window.ts). */
  readonly window_open: OrderedMap<string, true>;
  /** Backfill id -> its want id. */
  readonly backfills: OrderedMap<string, string>;
  /** Creation order -> backfill id. */
  readonly backfill_order: OrderedMap<number, string>;
  /**
   * Schedule name -> what the log says of it: since when it counts ticks (the cron it was seen with) and its latest
   * tick made into a want. A tick is made into a want once: only ticks after both are due.
   */
  readonly schedules: OrderedMap<string, ScheduleRecord>;
  /**
   * How many of each were ever made: their seqs and the next ids come from these, not from the sizes of the maps,
   * which shrink when compaction prunes old history.
   */
  readonly created: CreatedCounts;
}

/**
 * A record with some fields changed: `withWant(want, { status })` for `{ ...want, status }`. The copy is a literal of
 * every field, then the change assigned: V8 (Node 20) spreads a 28-field want in ~2 us, this takes ~0.15 us, and
 * the fold changes several records an event (docs/BENCHMARKS.md, session 9). A field added to a record and not
 * here fails to compile (the copy would not be the record type).
 */
export function withWant(r: WantRecord, change: Partial<WantRecord>): WantRecord {
  return Object.assign({
    want_id: r.want_id, seq: r.seq, created_event_id: r.created_event_id, partitions: r.partitions,
    comment: r.comment, data_timestamp: r.data_timestamp, ttl_seconds: r.ttl_seconds, sla_seconds: r.sla_seconds,
    source: r.source, parent_want_id: r.parent_want_id, root_want_id: r.root_want_id, status: r.status,
    created_at: r.created_at, updated_at: r.updated_at, child_want_ids: r.child_want_ids, job_run_ids: r.job_run_ids,
    cancel_reason: r.cancel_reason, counts: r.counts, rebuild: r.rebuild, sla_missed: r.sla_missed,
    rebuilt: r.rebuilt, rebuilt_total: r.rebuilt_total, priority: r.priority, backfill_id: r.backfill_id,
    max_concurrent_job_runs: r.max_concurrent_job_runs, pattern: r.pattern, window: r.window, released: r.released,
    schedule_tick: r.schedule_tick, children_active: r.children_active, children_failed: r.children_failed,
  }, change);
}

export function withJobRun(r: JobRunRecord, change: Partial<JobRunRecord>): JobRunRecord {
  return Object.assign({
    job_run_id: r.job_run_id, seq: r.seq, job_label: r.job_label, config: r.config, attempt: r.attempt, exec: r.exec,
    timeout_seconds: r.timeout_seconds, status: r.status, pid: r.pid, worker: r.worker, exit_code: r.exit_code,
    signal: r.signal, reason: r.reason, retry_at: r.retry_at, retried_by: r.retried_by, missing: r.missing, queued_at: r.queued_at,
    started_at: r.started_at, ended_at: r.ended_at, input_builds: r.input_builds, job_fingerprint: r.job_fingerprint,
    output_inputs: r.output_inputs, priority: r.priority,
  }, change);
}

export function withPartition(r: PartitionRecord, change: Partial<PartitionRecord>): PartitionRecord {
  return Object.assign({
    ref: r.ref, status: r.status, job_run_id: r.job_run_id, changed_event_id: r.changed_event_id,
    created_at: r.created_at, updated_at: r.updated_at, build_id: r.build_id, built_event_id: r.built_event_id,
    stale_reasons: r.stale_reasons, build_tainted: r.build_tainted, rebuild_failed_event_id: r.rebuild_failed_event_id ?? 0,
  }, change);
}

/** A state being made: a copy whose fields are set before it is handed on (and never after). */
type StateDraft = { -readonly [K in keyof BuildState]: BuildState[K] };

/**
 * A copy of the state, field by field in one fixed order (initialState's), so every state has the same shape. Not
 * `{ ...s, field }`: V8 (Node 20) clones this 26-field object by spread in ~1.5 us, with the fields set after it
 * ~3 us, where this literal takes ~0.1 us, and the fold copies the state several times an event (docs/BENCHMARKS.md,
 * session 9).
 */
export function copyState(s: BuildState): StateDraft {
  return {
    last_event_id: s.last_event_id,
    wants: s.wants,
    want_order: s.want_order,
    wants_by_status: s.wants_by_status,
    active_wants_by_ref: s.active_wants_by_ref,
    run_wants: s.run_wants,
    partitions: s.partitions,
    partitions_by_status: s.partitions_by_status,
    job_runs: s.job_runs,
    job_run_order: s.job_run_order,
    job_runs_by_status: s.job_runs_by_status,
    builds: s.builds,
    build_history: s.build_history,
    consumers: s.consumers,
    partitions_by_job: s.partitions_by_job,
    job_fingerprints: s.job_fingerprints,
    taints: s.taints,
    taint_order: s.taint_order,
    taints_by_ref: s.taints_by_ref,
    sla_pending: s.sla_pending,
    wants_sla_missed: s.wants_sla_missed,
    queued_by_priority: s.queued_by_priority,
    window_open: s.window_open,
    backfills: s.backfills,
    backfill_order: s.backfill_order,
    schedules: s.schedules,
    created: s.created,
  };
}

/** The record with another count, its fields in the one order every taint record has. */
export function withStillTainted(t: TaintRecord, still_tainted: number): TaintRecord {
  return { taint_id: t.taint_id, seq: t.seq, partitions: t.partitions, reason: t.reason, downstream: t.downstream, created_at: t.created_at, event_id: t.event_id ?? 0, still_tainted };
}

/** The state with some fields changed: `withState(s, { schedules })` for `{ ...s, schedules }` (see copyState). */
export function withState(s: BuildState, change: Partial<BuildState>): BuildState {
  return Object.assign(copyState(s), change);
}

export interface CreatedCounts {
  readonly wants: number;
  readonly job_runs: number;
  readonly builds: number;
  readonly taints: number;
  readonly backfills: number;
}

export interface ScheduleRecord {
  readonly name: string;
  /** The cron and time zone `since` was recorded for ('' when only wants of the schedule are on record). */
  readonly cron: string;
  readonly timezone: string;
  /** Epoch ms from which its ticks count: when the log first saw it with this cron (0: unknown). */
  readonly since: number;
  /** Its latest tick made into a want (epoch ms), and that want; 0 and '' before the first. */
  readonly tick: number;
  readonly want_id: string;
  /** Paused (`schedule_paused`): it makes no wants until resumed. */
  readonly paused: boolean;
  /**
   * When it was paused (epoch ms: when the pause was asked for, `schedule_paused.requested_at`; the event's time in logs
   * written before that field), and why, as the caller said; 0 and '' while it runs.
   */
  readonly paused_at: number;
  readonly paused_reason: string;
  /** Ticks that fell due and were skipped (`schedule_ticks_skipped`), in all; a lower bound when `skipped_at_least`. */
  readonly skipped: number;
  readonly skipped_at_least: boolean;
  /** The latest tick skipped (epoch ms), 0 before the first: like `tick`, no tick up to it is made any more. */
  readonly skipped_tick: number;
  /**
   * The wants of its latest ticks (at most SCHEDULE_RECENT_TICKS, oldest first) with each one's status as it is
   * now, moved by the fold as the want moves: what the view's last status and recent failures are read from, in
   * O(1), and what still answers once compaction pruned the wants themselves.
   */
  readonly recent: readonly ScheduleTickWant[];
}

/** A tick's want as its schedule's record keeps it. */
export interface ScheduleTickWant {
  readonly want_id: string;
  readonly status: WantStatus;
}

/** How many of a schedule's latest ticks its record keeps the wants (and statuses) of. */
export const SCHEDULE_RECENT_TICKS = 10;

/** A schedule the log knows only the name of: nothing recorded yet. */
export function newScheduleRecord(name: string): ScheduleRecord {
  return {
    name, cron: '', timezone: '', since: 0, tick: 0, want_id: '', paused: false, paused_at: 0, paused_reason: '', skipped: 0,
    skipped_at_least: false, skipped_tick: 0, recent: [],
  };
}

/** The record with some fields changed, its fields in the one order every schedule record has (see withWant). */
export function withSchedule(r: ScheduleRecord, change: Partial<ScheduleRecord>): ScheduleRecord {
  return Object.assign({
    name: r.name, cron: r.cron, timezone: r.timezone, since: r.since, tick: r.tick, want_id: r.want_id,
    paused: r.paused, paused_at: r.paused_at, paused_reason: r.paused_reason, skipped: r.skipped, skipped_at_least: r.skipped_at_least,
    skipped_tick: r.skipped_tick, recent: r.recent,
  }, change);
}

/** Ticks after this are due for the schedule: after its start, its latest tick made and its latest tick skipped. */
export function scheduleAfter(r: ScheduleRecord): number {
  return Math.max(r.since, r.tick, r.skipped_tick);
}

export const SCHEDULE_SOURCE_PREFIX = 'schedule:';

function statusIndex<S extends string>(statuses: readonly S[]): StatusIndex<S> {
  const index = {} as Record<S, OrderedMap<number, string>>;
  for (const s of statuses) index[s] = OrderedMap.empty<number, string>(compareNumbers);
  return index;
}

export function initialState(): BuildState {
  const partitionsByStatus = {} as Record<PartitionStatus, OrderedMap<string, true>>;
  for (const s of PARTITION_STATUSES) partitionsByStatus[s] = OrderedMap.empty<string, true>(compareStrings);
  return copyState({
    last_event_id: 0,
    wants: OrderedMap.empty(compareIds),
    want_order: OrderedMap.empty(compareNumbers),
    wants_by_status: statusIndex(WANT_STATUSES),
    active_wants_by_ref: OrderedMap.empty(compareStrings),
    run_wants: OrderedMap.empty(compareIds),
    partitions: OrderedMap.empty(compareStrings),
    partitions_by_status: partitionsByStatus,
    job_runs: OrderedMap.empty(compareIds),
    job_run_order: OrderedMap.empty(compareNumbers),
    job_runs_by_status: statusIndex(JOB_RUN_STATUSES),
    builds: OrderedMap.empty(compareIds),
    build_history: OrderedMap.empty(compareStrings),
    consumers: OrderedMap.empty(compareStrings),
    partitions_by_job: OrderedMap.empty(compareStrings),
    job_fingerprints: OrderedMap.empty(compareStrings),
    taints: OrderedMap.empty(compareStrings),
    taint_order: OrderedMap.empty(compareNumbers),
    taints_by_ref: OrderedMap.empty(compareStrings),
    sla_pending: OrderedMap.empty(compareStrings),
    wants_sla_missed: 0,
    queued_by_priority: OrderedMap.empty(compareStrings),
    window_open: OrderedMap.empty(compareStrings),
    backfills: OrderedMap.empty(compareStrings),
    backfill_order: OrderedMap.empty(compareNumbers),
    schedules: OrderedMap.empty(compareStrings),
    created: { wants: 0, job_runs: 0, builds: 0, taints: 0, backfills: 0 },
  });
}

/** Keys of the composite indexes above. */
export const historyKey = (ref: string, seq: number): string => `${ref}\0${String(seq).padStart(12, '0')}`;
export const consumerKey = (inputBuildId: string, consumerRef: string): string => `${inputBuildId}\0${consumerRef}`;
export const jobPartitionKey = (label: string, ref: string): string => `${label}\0${ref}`;
export const refTaintKey = (ref: string, taintId: string): string => `${ref}\0${taintId}`;
/** Launch order of a queued run: priority descending (offset so it sorts as text), then creation order. */
export const queueKey = (priority: number, seq: number): string =>
  `${String(2 ** 31 - 1 - priority).padStart(11, '0')}\0${String(seq).padStart(12, '0')}`;
export const slaKey = (deadline: number, wantId: string): string => `${String(deadline).padStart(15, '0')}\0${wantId}`;

/** When a want's clock starts: its data's timestamp if it has one (ttl and sla count from it), else its creation. */
export function wantClockStart(want: Pick<WantRecord, 'data_timestamp' | 'created_at'>): number {
  return want.data_timestamp > 0 ? want.data_timestamp : want.created_at;
}

export function slaDeadline(want: Pick<WantRecord, 'data_timestamp' | 'created_at' | 'sla_seconds'>): number {
  return want.sla_seconds > 0 ? wantClockStart(want) + want.sla_seconds * 1000 : 0;
}
