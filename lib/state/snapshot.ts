/**
 * Build state as plain records at an event id, and back. Only the records are kept; every index is rebuilt
 * from them in O(n), so a snapshot cannot disagree with its own indexes. Loading a snapshot and folding the
 * events after it gives the state a full replay would: the tests hold it to that.
 */
import { listArray, listItems, listOf, type AppendList } from './append-list.js';
import {
  JOB_RUN_STATUSES,
  PARTITION_STATUSES,
  SCHEDULE_RECENT_TICKS,
  TERMINAL_WANT_STATUSES,
  WANT_STATUSES,
  type BuildRecord,
  type BuildState,
  type CreatedCounts,
  type JobRunRecord,
  type TaintRecord,
  taintCounts,
  consumerKey,
  historyKey,
  jobPartitionKey,
  outputInputBuilds,
  queueKey,
  refTaintKey,
  REBUILT_KEPT,
  withJobRun,
  withStillTainted,
  withWant,
  slaDeadline,
  slaKey,
  type PartitionRecord,
  type ScheduleRecord,
  type ScheduleTickWant,
  type StatusIndex,
  type WantRecord,
  compareIds,
  copyState,
  newScheduleRecord,
  withSchedule,
} from './build-state.js';
import { OrderedMap, compareNumbers, compareStrings } from './ordered-map.js';
import { scheduleOf } from './schedule-fold.js';

/**
 * 4: schedules are kept as records (since when each counts its ticks is not in its wants).
 * 5: a run's wants are an index derived from the wants' `job_run_ids`, no longer a list on the run; the file is
 *    JSON lines (a header, a record a line, an end line), written a chunk at a time.
 * 6: how many wants, runs, builds, taints and backfills were ever made is kept (ids and seqs come from it, since
 *    compaction prunes old records); a backfill's place in order is its want's seq.
 * 7: wants, runs and builds are listed in id order (`compareIds`: creation order), no longer in code-unit order.
 *    A version that reads 6 would refuse them as out of order, so the number says so; files of 6 are still read
 *    (their records are sorted as they are loaded).
 * 8: a schedule's record keeps whether it is paused, the ticks it skipped and its latest ticks' wants with their
 *    statuses. Files of 6 and 7 are read: their schedules load as running (there was no pause) with nothing skipped
 *    (nor skips), and their latest ticks' wants are found again among the wants the file holds (`recentTicksFound`):
 *    those a compaction pruned before the file was written are gone with their statuses.
 * 9: a job run's record keeps the run that retried it (`retried_by`, folded from the retry's `retry_of`). Files of
 *    6 to 8 are read: their runs load with `retried_by` '' and the view works it out as it did before (views.ts).
 */
export const SNAPSHOT_FORMAT = 9;

/** The record formats this code reads (a compaction base is read by every later version). */
export const SNAPSHOT_FORMATS_READ: readonly number[] = [6, 7, 8, 9];

export interface Snapshot {
  format: typeof SNAPSHOT_FORMAT;
  last_event_id: number;
  /** In want id order, as the state keeps them. */
  wants: WantRecord[];
  /** In ref order. */
  partitions: PartitionRecord[];
  /** In job run id order. */
  job_runs: JobRunRecord[];
  /** In build id order. */
  builds: BuildRecord[];
  /** In taint id order. */
  taints: TaintRecord[];
  /** [job label, fingerprint] in label order. */
  job_fingerprints: Array<[string, string]>;
  /**
   * The open partitions of windowed wants (`<want id>\0<ref>`, sorted): kept, not derived, since a taint may
   * reopen a partition beyond what a want released.
   */
  window_open: string[];
  /** In name order: kept, not derived, since when a schedule counts from is recorded by no want. */
  schedules: ScheduleRecord[];
  created: CreatedCounts;
  /** Kept, not derived: the wants that missed it may have been pruned, and it counts for a Prometheus counter. */
  wants_sla_missed: number;
  /**
   * Read from a file of a format before 8: the schedules whose records had no latest ticks' wants (`recent`), found
   * again among the wants when the state is built (`stateFromSnapshot`). Absent otherwise.
   */
  recent_unknown?: string[];
  /**
   * Read from a file written before `rebuilt_total`: each want's count was taken from its own list, and the wants it
   * was derived from are given their derived wants' counts when the state is built (`withRebuiltTotals`).
   */
  rebuilt_unknown?: boolean;
}

export function toSnapshot(state: BuildState): Snapshot {
  return runToEnd(snapshotOf(state));
}

/** `toSnapshot` in slices, a kind of record each (see `stateFromSnapshot`). */
export function* snapshotOf(state: BuildState): Generator<void, Snapshot, void> {
  const wants = [...state.wants.values()];
  yield;
  const partitions = [...state.partitions.values()];
  yield;
  const jobRuns = [...state.job_runs.values()];
  yield;
  const builds = [...state.builds.values()];
  yield;
  return {
    format: SNAPSHOT_FORMAT,
    last_event_id: state.last_event_id,
    wants,
    partitions,
    job_runs: jobRuns,
    builds,
    taints: [...state.taints.values()],
    job_fingerprints: [...state.job_fingerprints.entries()],
    window_open: [...state.window_open.keys()],
    schedules: [...state.schedules.values()],
    created: state.created,
    wants_sla_missed: state.wants_sla_missed,
  };
}

/** One line of a snapshot file: a record and which section it belongs to. */
export type SnapshotLine =
  | ['want', WantRecord | WantInFile]
  | ['partition', PartitionRecord]
  | ['job_run', JobRunRecord]
  | ['build', BuildRecord]
  | ['taint', TaintRecord]
  | ['job_fingerprint', [string, string]]
  | ['window_open', string]
  | ['schedule', ScheduleRecord]
  | ['created', CreatedCounts]
  | ['wants_sla_missed', number];

/**
 * The records of a state one at a time, in the order `toSnapshot` lists them: a writer can stream them out a chunk at
 * a time from this (immutable) state while steps go on with newer ones.
 */
export function* snapshotLines(state: BuildState): Generator<SnapshotLine> {
  for (const w of state.wants.values()) yield ['want', wantToFile(w)];
  for (const p of state.partitions.values()) yield ['partition', p];
  for (const r of state.job_runs.values()) yield ['job_run', r];
  for (const b of state.builds.values()) yield ['build', b];
  for (const t of state.taints.values()) yield ['taint', t];
  for (const f of state.job_fingerprints.entries()) yield ['job_fingerprint', f];
  for (const k of state.window_open.keys()) yield ['window_open', k];
  for (const r of state.schedules.values()) yield ['schedule', r];
  yield ['created', state.created];
  yield ['wants_sla_missed', state.wants_sla_missed];
}

/** A snapshot from its lines (in any order of sections; records keep their order within one). */
export function snapshotFromLines(lastEventId: number, lines: Iterable<SnapshotLine>): Snapshot {
  const snap: Snapshot = {
    format: SNAPSHOT_FORMAT,
    last_event_id: lastEventId,
    wants: [],
    partitions: [],
    job_runs: [],
    builds: [],
    taints: [],
    job_fingerprints: [],
    window_open: [],
    schedules: [],
    created: { wants: 0, job_runs: 0, builds: 0, taints: 0, backfills: 0 },
    wants_sla_missed: 0,
  };
  for (const line of lines) addLine(snap, line);
  return snap;
}

export function addLine(snap: Snapshot, line: SnapshotLine): void {
  switch (line[0]) {
    case 'want':
      if ((line[1] as Partial<WantInFile>).rebuilt_total === undefined) snap.rebuilt_unknown = true;
      snap.wants.push(wantFromFile(line[1]));
      return;
    case 'partition':
      snap.partitions.push(line[1]);
      return;
    case 'job_run':
      snap.job_runs.push(jobRunFromFile(line[1]));
      return;
    case 'build':
      snap.builds.push(line[1]);
      return;
    case 'taint':
      snap.taints.push(line[1]);
      return;
    case 'job_fingerprint':
      snap.job_fingerprints.push(line[1]);
      return;
    case 'window_open':
      snap.window_open.push(line[1]);
      return;
    case 'schedule':
      if (!Array.isArray((line[1] as Partial<ScheduleRecord>).recent)) (snap.recent_unknown ??= []).push(line[1].name);
      snap.schedules.push(scheduleFromFile(line[1]));
      return;
    case 'created':
      snap.created = line[1];
      return;
    case 'wants_sla_missed':
      snap.wants_sla_missed = line[1];
      return;
    default:
      throw new Error(`a snapshot line of unknown kind '${String((line as unknown[])[0])}'`);
  }
}

/**
 * A want as a file holds it: its runs and derived wants as lists (the fold keeps them as append-lists, which any later
 * version need not know), and `rebuilt_total` absent in a file written before it was kept.
 */
type WantInFile = Omit<WantRecord, 'job_run_ids' | 'child_want_ids' | 'rebuilt_total'> & {
  job_run_ids: readonly string[];
  child_want_ids: readonly string[];
  rebuilt_total?: number;
};

function wantToFile(w: WantRecord): WantInFile {
  return { ...w, job_run_ids: listArray(w.job_run_ids), child_want_ids: listArray(w.child_want_ids) };
}

/** A want as the fold keeps it, from a file's (or a record already so: a snapshot held in memory). */
function wantFromFile(w: WantRecord | WantInFile): WantRecord {
  const asList = (items: AppendList<string> | readonly string[]): AppendList<string> => (Array.isArray(items) ? listOf(items as readonly string[]) : (items as AppendList<string>));
  // Before rebuilt_total, `rebuilt` listed every partition rebuilt: its length was the count, and it is kept to the first REBUILT_KEPT.
  const rebuilt = w.rebuilt.length > REBUILT_KEPT ? w.rebuilt.slice(0, REBUILT_KEPT) : w.rebuilt;
  return withWant(w as WantRecord, {
    job_run_ids: asList(w.job_run_ids),
    child_want_ids: asList(w.child_want_ids),
    rebuilt,
    rebuilt_total: w.rebuilt_total ?? w.rebuilt.length,
  });
}

/**
 * The wants of a file written before `rebuilt_total`, each counting its own rebuilds (its list was then whole) and
 * those of the wants derived from it, as the fold counts them: each want's own added to every want above it.
 */
function withRebuiltTotals(wants: readonly WantRecord[]): WantRecord[] {
  const byId = new Map(wants.map((w) => [w.want_id, w] as const));
  const added = new Map<string, number>();
  for (const w of wants) {
    const own = w.rebuilt_total;
    if (own === 0) continue;
    const seen = new Set<string>([w.want_id]);
    for (let a = byId.get(w.parent_want_id); a && !seen.has(a.want_id); a = byId.get(a.parent_want_id)) {
      seen.add(a.want_id);
      added.set(a.want_id, (added.get(a.want_id) ?? 0) + own);
    }
  }
  return wants.map((w) => (added.has(w.want_id) ? withWant(w, { rebuilt_total: w.rebuilt_total + added.get(w.want_id)! }) : w));
}

/**
 * The wants each counting its derived wants still active and failed, as `putWant` keeps them: counted here from the
 * statuses, whatever the file says (a file written before the counts has none). One pass, on a load that builds every
 * index over the wants anyway.
 */
function withChildCounts(wants: readonly WantRecord[]): WantRecord[] {
  const seqOf = new Map(wants.map((w) => [w.want_id, w.seq] as const));
  const active = new Map<string, number>();
  const failed = new Map<string, number>();
  for (const w of wants) {
    // Counted by a parent that was there when it was made, as the fold counts it (indexed-records.ts).
    if (w.parent_want_id === '' || !((seqOf.get(w.parent_want_id) ?? Infinity) <= w.seq)) continue;
    const into = w.status === 'failed' || w.status === 'upstream_failed' ? failed : TERMINAL_WANT_STATUSES.has(w.status) ? undefined : active;
    into?.set(w.parent_want_id, (into.get(w.parent_want_id) ?? 0) + 1);
  }
  return wants.map((w) => {
    const a = active.get(w.want_id) ?? 0;
    const f = failed.get(w.want_id) ?? 0;
    return w.children_active === a && w.children_failed === f ? w : withWant(w, { children_active: a, children_failed: f });
  });
}

/**
 * A schedule record as a file holds it, in the shape (and field order) of this code's: one of a format before 8 has
 * none of the fields added then, which take their defaults (running, nothing skipped, no recent ticks).
 */
function scheduleFromFile(r: ScheduleRecord): ScheduleRecord {
  return withSchedule(newScheduleRecord(r.name), r);
}

/**
 * A job run record as a file holds it, in this code's shape: one of a format before 9 has no `retried_by`, which
 * loads as '' (not recorded; the view falls back to working it out, views.ts).
 */
function jobRunFromFile(r: JobRunRecord): JobRunRecord {
  return typeof (r as Partial<JobRunRecord>).retried_by === 'string' ? r : withJobRun(r, { retried_by: '' });
}

/**
 * The schedules' records with the latest ticks' wants of those in `unknown` (read from a file of a format before 8)
 * found among `wantsBySeq`, as the fold would have kept them: the latest SCHEDULE_RECENT_TICKS of its wants (whose
 * ticks increase with their creation: no tick at or before one on record is made), each with its status now. Walked back from the newest want, it stops once each has its ten,
 * so a schedule that ticks often costs the wants since its tenth-latest tick; one with fewer ticks, or whose older
 * ticks' wants were pruned, the whole walk: one pass over the wants, once, on a start from an old base (whose load
 * builds every index over them anyway). A schedule whose latest tick's want is not among them (pruned) keeps none:
 * the latest entry must be its latest tick's.
 */
function recentTicksFound(records: readonly ScheduleRecord[], unknown: ReadonlySet<string>, wantsBySeq: readonly WantRecord[]): ScheduleRecord[] {
  const open = new Map<string, { below: number; found: ScheduleTickWant[] }>();
  for (const r of records) if (unknown.has(r.name) && r.tick > 0) open.set(r.name, { below: r.tick + 1, found: [] });
  let left = open.size;
  for (let i = wantsBySeq.length - 1; i >= 0 && left > 0; i--) {
    const w = wantsBySeq[i]!;
    if (w.schedule_tick === 0) continue;
    const name = scheduleOf(w);
    const o = name === undefined ? undefined : open.get(name);
    // The fold takes a schedule's want only when its tick is later than the ticks before it.
    if (!o || o.found.length >= SCHEDULE_RECENT_TICKS || w.schedule_tick >= o.below) continue;
    o.found.push({ want_id: w.want_id, status: w.status });
    o.below = w.schedule_tick;
    if (o.found.length === SCHEDULE_RECENT_TICKS) left--;
  }
  return records.map((r) => {
    const o = open.get(r.name);
    return o && o.found[0]?.want_id === r.want_id ? withSchedule(r, { recent: o.found.reverse() }) : r;
  });
}

/** Records in id order (`compareIds`): as written, or sorted when a file of an earlier order is read. */
function inIdOrder<T>(records: readonly T[], id: (r: T) => string): readonly T[] {
  for (let i = 1; i < records.length; i++) {
    if (compareIds(id(records[i - 1]!), id(records[i]!)) >= 0) return [...records].sort((a, b) => compareIds(id(a), id(b)));
  }
  return records;
}

function bySeq<T extends { seq: number }>(records: readonly T[]): T[] {
  return [...records].sort((a, b) => a.seq - b.seq);
}

/** Records by status, each kind's order kept: one pass over them (not one per status). */
function byStatus<S extends string, T extends { status: S }>(statuses: readonly S[], records: readonly T[]): Record<S, T[]> {
  const buckets = {} as Record<S, T[]>;
  for (const s of statuses) buckets[s] = [];
  for (const r of records) buckets[r.status]?.push(r);
  return buckets;
}

function statusIndex<S extends string, T extends { seq: number; status: S }>(
  statuses: readonly S[],
  inSeqOrder: readonly T[],
  id: (r: T) => string,
): StatusIndex<S> {
  const buckets = byStatus(statuses, inSeqOrder);
  const index = {} as Record<S, OrderedMap<number, string>>;
  for (const s of statuses) index[s] = OrderedMap.fromSortedBy(compareNumbers, buckets[s], (r) => r.seq, id);
  return index;
}

/**
 * The state of a snapshot's records, every index built. `onSlice` is told after each slice of that work (done, of
 * STATE_FROM_SNAPSHOT_SLICES): a start after an upgrade spends seconds here at a million events, and a client that
 * waits for it must see it go on.
 */
export function fromSnapshot(snap: Snapshot, onSlice?: (done: number, total: number) => void): BuildState {
  const steps = stateFromSnapshot(snap);
  for (let done = 1; ; done++) {
    const next = steps.next();
    if (next.done) return next.value;
    onSlice?.(done, STATE_FROM_SNAPSHOT_SLICES);
  }
}

/** How many times `stateFromSnapshot` yields (tests/state-snapshot.test.ts holds it to that). */
export const STATE_FROM_SNAPSHOT_SLICES = 15;

/** Runs a sliced computation at once. */
export function runToEnd<T>(steps: Generator<void, T, void>): T {
  for (;;) {
    const next = steps.next();
    if (next.done) return next.value;
  }
}

/**
 * `fromSnapshot` in slices: it yields between the indexes it builds, so a caller that has time (a compaction's
 * prune) can let the event loop run in between; the largest slice is one index over all records of a kind.
 */
export function* stateFromSnapshot(snap: Snapshot): Generator<void, BuildState, void> {
  const runs = new Map(snap.job_runs.map((r) => [r.job_run_id, r] as const));
  const lineageOf = (b: BuildRecord) => runs.get(b.job_run_id);
  if (snap.rebuilt_unknown) snap = { ...snap, wants: withRebuiltTotals(snap.wants), rebuilt_unknown: false };
  // Every record of the state takes the counts (not only the indexes built from `wantsBySeq`).
  snap = { ...snap, wants: withChildCounts(snap.wants) };
  const wantsBySeq = bySeq(snap.wants);
  const runsBySeq = bySeq(snap.job_runs);
  yield;
  // A want is active from its creation until it ends, so creation order is the order the fold added it in.
  const activeByRef = new Map<string, Array<readonly [number, string]>>();
  // Every want served by a run lists it (queued for it or joined it): the run's wants are these, in seq order.
  const runWants = new Map<string, Array<readonly [number, string]>>();
  const push = (m: Map<string, Array<readonly [number, string]>>, key: string, w: WantRecord) => {
    const list = m.get(key);
    if (list) list.push([w.seq, w.want_id]);
    else m.set(key, [[w.seq, w.want_id]]);
  };
  for (const w of wantsBySeq) {
    for (const id of listItems(w.job_run_ids)) push(runWants, id, w);
    if (TERMINAL_WANT_STATUSES.has(w.status)) continue;
    for (const ref of w.partitions) push(activeByRef, ref, w);
  }
  yield;
  const wantSets = (m: Map<string, Array<readonly [number, string]>>, compare: typeof compareStrings) =>
    OrderedMap.fromSortedBy(compare, [...m.keys()].sort(compare), (k) => k, (k) => OrderedMap.fromSorted(compareNumbers, m.get(k)!));
  const partitionsByStatus = {} as Record<(typeof PARTITION_STATUSES)[number], OrderedMap<string, true>>;
  const partitionBuckets = byStatus(PARTITION_STATUSES, snap.partitions);
  for (const s of PARTITION_STATUSES) partitionsByStatus[s] = OrderedMap.fromSortedBy(compareStrings, partitionBuckets[s], (p) => p.ref, () => true as const);
  const builds = new Map(snap.builds.map((b) => [b.build_id, b] as const));
  // The keys sorted natively (code-unit order, as compareStrings), not through a comparator: several times faster.
  const sorted = <V>(entries: Array<readonly [string, V]>) => {
    const byKey = new Map(entries);
    return OrderedMap.fromSortedBy(compareStrings, [...byKey.keys()].sort(), (k) => k, (k) => byKey.get(k)!);
  };
  const consumers = new Map<string, BuildRecord>();
  // Only partitions' current builds consume, as in the fold (reduce.ts `built`).
  for (const p of snap.partitions) {
    const b = p.build_id ? builds.get(p.build_id) : undefined;
    const run = b && lineageOf(b);
    for (const input of run ? outputInputBuilds(run, p.ref) : []) consumers.set(consumerKey(input.build_id, p.ref), b!);
  }
  yield;
  // Backfills are numbered in the order their wants were made; a repeated id keeps its first want, as the fold does.
  const firstOfId = new Map<string, WantRecord>();
  for (const w of wantsBySeq) if (w.backfill_id !== '' && !firstOfId.has(w.backfill_id)) firstOfId.set(w.backfill_id, w);
  const backfills = [...firstOfId.values()];
  const slaPending = snap.wants.filter(
    (w) => !w.parent_want_id && w.sla_seconds > 0 && !w.sla_missed && w.status !== 'successful' && w.status !== 'canceled',
  );
  // The big indexes one a slice; the small ones with the last.
  const buildsById = OrderedMap.fromSortedBy(compareIds, inIdOrder(snap.builds, (b) => b.build_id), (b) => b.build_id, (b) => b);
  yield;
  const buildHistory = sorted(snap.builds.map((b) => [historyKey(b.partition_ref, b.seq), b.build_id] as const));
  yield;
  const consumerIndex = sorted([...consumers].map(([key, b]) => [key, b.build_id] as const));
  yield;
  const partitionsByJob = sorted(
    snap.partitions.flatMap((p) => {
      const b = p.build_id ? builds.get(p.build_id) : undefined;
      const label = b && lineageOf(b)?.job_label;
      return label !== undefined ? [[jobPartitionKey(label, p.ref), true] as const] : [];
    }),
  );
  yield;
  const wants = OrderedMap.fromSortedBy(compareIds, inIdOrder(snap.wants, (w) => w.want_id), (w) => w.want_id, (w) => w);
  yield;
  const wantOrder = OrderedMap.fromSortedBy(compareNumbers, wantsBySeq, (w) => w.seq, (w) => w.want_id);
  const wantsByStatus = statusIndex(WANT_STATUSES, wantsBySeq, (w) => w.want_id);
  yield;
  const activeWantsByRef = wantSets(activeByRef, compareStrings);
  yield;
  const runWantSets = wantSets(runWants, compareIds);
  yield;
  const partitions = OrderedMap.fromSortedBy(compareStrings, snap.partitions, (p) => p.ref, (p) => p);
  yield;
  const jobRuns = OrderedMap.fromSortedBy(compareIds, inIdOrder(snap.job_runs, (r) => r.job_run_id), (r) => r.job_run_id, (r) => r);
  yield;
  const jobRunOrder = OrderedMap.fromSortedBy(compareNumbers, runsBySeq, (r) => r.seq, (r) => r.job_run_id);
  const jobRunsByStatus = statusIndex(JOB_RUN_STATUSES, runsBySeq, (r) => r.job_run_id);
  yield;
  // Each taint's refs, and how many of them are tainted now, as the fold keeps them (reduce.ts, indexed-records.ts);
  // counted here, so a base written before the count was kept loads the same.
  const taintRefs: Array<readonly [string, string]> = [];
  const taints: TaintRecord[] = [];
  for (const t of snap.taints) {
    let still = 0;
    for (const ref of new Set(t.partitions)) {
      taintRefs.push([refTaintKey(ref, t.taint_id), String(t.event_id ?? 0)]);
      if (taintCounts(t.event_id ?? 0, partitions.get(ref))) still++;
    }
    taints.push(withStillTainted(t, still));
  }
  const taintsByRef = sorted(taintRefs);
  yield;
  // In the fold's own shape of state (build-state.ts's copyState).
  return copyState({
    builds: buildsById,
    build_history: buildHistory,
    consumers: consumerIndex,
    partitions_by_job: partitionsByJob,
    job_fingerprints: OrderedMap.fromSorted(compareStrings, snap.job_fingerprints),
    taints: OrderedMap.fromSortedBy(compareStrings, taints, (t) => t.taint_id, (t) => t),
    taint_order: OrderedMap.fromSorted(compareNumbers, bySeq(snap.taints).map((t) => [t.seq, t.taint_id] as const)),
    taints_by_ref: taintsByRef,
    sla_pending: sorted(slaPending.map((w) => [slaKey(slaDeadline(w), w.want_id), true] as const)),
    wants_sla_missed: snap.wants_sla_missed,
    queued_by_priority: sorted(snap.job_runs.filter((r) => r.status === 'queued').map((r) => [queueKey(r.priority, r.seq), r.job_run_id] as const)),
    schedules: sorted(
      (snap.recent_unknown?.length ? recentTicksFound(snap.schedules, new Set(snap.recent_unknown), wantsBySeq) : snap.schedules).map((r) => [r.name, r] as const),
    ),
    window_open: OrderedMap.fromSortedBy(compareStrings, snap.window_open, (key) => key, () => true as const),
    backfills: sorted(backfills.map((w) => [w.backfill_id, w.want_id] as const)),
    backfill_order: OrderedMap.fromSorted(compareNumbers, backfills.map((w) => [w.seq, w.backfill_id] as const)),
    last_event_id: snap.last_event_id,
    wants,
    want_order: wantOrder,
    wants_by_status: wantsByStatus,
    active_wants_by_ref: activeWantsByRef,
    run_wants: runWantSets,
    partitions,
    partitions_by_status: partitionsByStatus,
    job_runs: jobRuns,
    job_run_order: jobRunOrder,
    job_runs_by_status: jobRunsByStatus,
    created: snap.created,
  });
}
