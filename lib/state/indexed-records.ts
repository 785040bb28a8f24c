/**
 * Writes of one record into BuildState that keep every index in step (by status, by ref, by order).
 * Pure: each returns a new state; the persistent maps share everything the write did not touch.
 */
import type {
  BuildState,
  JobRunRecord,
  PartitionRecord,
  WantRecord,
} from './build-state.js';
import { NO_WANTS, TERMINAL_WANT_STATUSES, buildIsTainted, taintCounts, withWant, queueKey, refTaintKey, slaDeadline, slaKey, withState, withStillTainted } from './build-state.js';
import { closeWindow } from './want-window.js';
import { recordScheduleWantStatus, scheduleOf } from './schedule-fold.js';

export function putWant(state: BuildState, put: WantRecord): BuildState {
  const old = state.wants.get(put.want_id);
  // The stored counts of its derived wants are the true ones: a copy of the record held aside while one of them
  // moved (reduce.ts, a refresh's pending wants) carries the counts of before.
  const want = old !== undefined && (old.children_active !== put.children_active || old.children_failed !== put.children_failed)
    ? withWant(put, { children_active: old.children_active, children_failed: old.children_failed })
    : put;
  let wantsByStatus = state.wants_by_status;
  let activeByRef = state.active_wants_by_ref;
  if (!old || old.status !== want.status) {
    const byStatus = { ...wantsByStatus };
    if (old) byStatus[old.status] = byStatus[old.status].delete(old.seq);
    byStatus[want.status] = byStatus[want.status].set(want.seq, want.want_id);
    wantsByStatus = byStatus;
  }
  const wasActive = old !== undefined && !TERMINAL_WANT_STATUSES.has(old.status);
  const isActive = !TERMINAL_WANT_STATUSES.has(want.status);
  if (wasActive !== isActive) {
    // Immutable, so one set serves every ref no other active want is on (a backfill's 100,000).
    const alone = NO_WANTS.set(want.seq, want.want_id);
    activeByRef = activeByRef.updateMany(want.partitions, (_, ids) => {
      if (ids === undefined) return isActive ? alone : undefined;
      const next = isActive ? ids.set(want.seq, want.want_id) : ids.delete(want.seq);
      return next.size > 0 ? next : undefined;
    });
  }
  // An ended want has nothing open any more.
  let windowOpen = state.window_open;
  if (wasActive && !isActive && want.window > 0) windowOpen = closeWindow(state, want.want_id).window_open;
  let slaPending = state.sla_pending;
  // Once successful or canceled, a want can no longer miss its sla.
  if (old && old.status !== want.status && (want.status === 'successful' || want.status === 'canceled') && want.sla_seconds > 0) {
    slaPending = slaPending.delete(slaKey(slaDeadline(want), want.want_id));
  }
  const next = withState(state, {
    sla_pending: slaPending,
    window_open: windowOpen,
    wants_sla_missed: state.wants_sla_missed + (want.sla_missed && !old?.sla_missed ? 1 : 0),
    wants: parentCounted(state.wants.set(want.want_id, want), old, want),
    want_order: old ? state.want_order : state.want_order.set(want.seq, want.want_id),
    wants_by_status: wantsByStatus,
    active_wants_by_ref: activeByRef,
  });
  // A schedule's record keeps the statuses of its latest ticks' wants: moved here, where every status change passes.
  const schedule = old && old.status !== want.status ? scheduleOf(want) : undefined;
  return schedule === undefined ? next : recordScheduleWantStatus(next, schedule, want);
}

/** Where a derived want stands for its parent's status: still active, failed (its parent's failure), or neither. */
function childClass(want: WantRecord | undefined): 'active' | 'failed' | 'none' {
  if (want === undefined) return 'none';
  if (want.status === 'failed' || want.status === 'upstream_failed') return 'failed';
  return TERMINAL_WANT_STATUSES.has(want.status) ? 'none' : 'active';
}

/** The wants with the parent of `want` counting it where it now stands (O(log wants), only when that moved). */
function parentCounted(wants: BuildState['wants'], old: WantRecord | undefined, want: WantRecord): BuildState['wants'] {
  if (want.parent_want_id === '') return wants;
  const from = childClass(old);
  const to = childClass(want);
  if (from === to) return wants;
  const parent = wants.get(want.parent_want_id);
  // Only a parent there when it was made lists it (reduce.ts); one made later under that id is another want's.
  if (parent === undefined || parent.seq > want.seq) return wants;
  const active = parent.children_active + (to === 'active' ? 1 : 0) - (from === 'active' ? 1 : 0);
  const failed = parent.children_failed + (to === 'failed' ? 1 : 0) - (from === 'failed' ? 1 : 0);
  return wants.set(parent.want_id, withWant(parent, { children_active: active, children_failed: failed }));
}

export function putPartition(state: BuildState, partition: PartitionRecord): BuildState {
  const old = state.partitions.get(partition.ref);
  let byStatus = state.partitions_by_status;
  if (!old || old.status !== partition.status) {
    const next = { ...byStatus };
    if (old) next[old.status] = next[old.status].delete(old.ref);
    next[partition.status] = next[partition.status].set(partition.ref, true);
    byStatus = next;
  }
  const partitions = state.partitions.set(partition.ref, partition);
  const was = buildIsTainted(old);
  const is = buildIsTainted(partition);
  // A taint's count moves when its ref's build turns tainted or not, or is replaced while tainted.
  if (was === is && (!is || old!.built_event_id === partition.built_event_id)) return withState(state, { partitions, partitions_by_status: byStatus });
  return withState(state, { partitions, partitions_by_status: byStatus, taints: movedTaintCounts(state, old, partition) });
}

/** Every taint listing the ref counts it as still tainted, or no longer (`taintCounts`): O(those taints). */
function movedTaintCounts(state: BuildState, old: PartitionRecord | undefined, now: PartitionRecord): BuildState['taints'] {
  let taints = state.taints;
  const prefix = refTaintKey(now.ref, '');
  for (const [key, eventId] of state.taints_by_ref.entriesFrom(prefix)) {
    if (!key.startsWith(prefix)) break;
    // Decided from the index: a taint's record is read only when its count moves.
    const taintEventId = typeof eventId === 'string' ? Number(eventId) : 0;
    const by = Number(taintCounts(taintEventId, now)) - Number(taintCounts(taintEventId, old));
    if (by === 0) continue;
    const t = taints.get(key.slice(prefix.length));
    if (t) taints = taints.set(t.taint_id, withStillTainted(t, t.still_tainted + by));
  }
  return taints;
}

export function putJobRun(state: BuildState, run: JobRunRecord): BuildState {
  const old = state.job_runs.get(run.job_run_id);
  let byStatus = state.job_runs_by_status;
  if (!old || old.status !== run.status) {
    const next = { ...byStatus };
    if (old) next[old.status] = next[old.status].delete(old.seq);
    next[run.status] = next[run.status].set(run.seq, run.job_run_id);
    byStatus = next;
  }
  let queued = state.queued_by_priority;
  if (old?.status === 'queued' && (run.status !== 'queued' || old.priority !== run.priority)) queued = queued.delete(queueKey(old.priority, old.seq));
  if (run.status === 'queued' && (old?.status !== 'queued' || old.priority !== run.priority)) queued = queued.set(queueKey(run.priority, run.seq), run.job_run_id);
  return withState(state, {
    queued_by_priority: queued,
    job_runs: state.job_runs.set(run.job_run_id, run),
    job_run_order: old ? state.job_run_order : state.job_run_order.set(run.seq, run.job_run_id),
    job_runs_by_status: byStatus,
  });
}

/** The want now served by the run too (a join, or one of the wants that queued it). O(log n). */
export function addRunWant(state: BuildState, jobRunId: string, want: Pick<WantRecord, 'seq' | 'want_id'>): BuildState {
  return withState(state, { run_wants: state.run_wants.update(jobRunId, (ids = NO_WANTS) => ids.set(want.seq, want.want_id)) });
}
