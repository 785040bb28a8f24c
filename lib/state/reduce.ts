/**
 * The fold: build state is `events.reduce(reduce, initialState())`. Pure: no clock, no I/O, no mutation of
 * its inputs, so replaying the log any number of times gives the same state.
 */
import type { BuildEvent, BuildInput } from '../events/build-event.js';
import type { BuildRecord, BuildState, JobRunRecord, JobRunStatus, PartitionRecord, PartitionStatus, TaintRecord, WantRecord } from './build-state.js';
import { ACTIVE_JOB_RUN_STATUSES, REBUILT_KEPT, withJobRun, withPartition, withState, withWant, wantsOfRun, TERMINAL_WANT_STATUSES, outputInputBuilds, buildLineage, consumerKey, historyKey, jobPartitionKey, refTaintKey, taintCounts, slaDeadline, slaKey } from './build-state.js';
import { addRunWant, putJobRun, putPartition, putWant } from './indexed-records.js';
import { appended, emptyList, listItems, listOf } from './append-list.js';
import { waitingForWorker } from './run-placement.js';
import { runEndedAt } from './run-ended-at.js';
import { exitCodeOf } from './run-exit-code.js';
import { runStartedAt } from './run-started-at.js';
import { recordPaused, recordResumed, recordScheduleTick, recordSchedulesChanged, recordTicksSkipped, scheduleOf } from './schedule-fold.js';
import { currentConsumers, refreshStale } from './staleness.js';
import { NO_COUNTS, countPartitions, deriveWantStatus, moveCount, partitionCategory } from './want-status.js';
import { openKey, settled, windowFor } from './want-window.js';

export function reduce(state: BuildState, event: BuildEvent): BuildState {
  const s0 = withState(state, { last_event_id: event.event_id });
  const s = s0;
  const at = event.timestamp;
  switch (event.type) {
    case 'want_created': {
      const e = event.want_created;
      if (state.wants.has(e.want_id)) return s0;
      const s = created(s0, 'wants');
      let want: WantRecord = {
        want_id: e.want_id,
        seq: s.created.wants,
        created_event_id: event.event_id,
        partitions: [...new Set(e.partitions)],
        comment: e.comment,
        data_timestamp: e.data_timestamp,
        ttl_seconds: e.ttl_seconds,
        sla_seconds: e.sla_seconds,
        source: e.source,
        parent_want_id: e.parent_want_id,
        root_want_id: e.root_want_id || e.want_id,
        status: 'idle',
        created_at: at,
        updated_at: at,
        child_want_ids: emptyList(),
        job_run_ids: listOf(joinedRuns(s, e.partitions)),
        cancel_reason: '',
        counts: NO_COUNTS,
        rebuild: e.rebuild || 'missing',
        sla_missed: false,
        rebuilt: [],
        rebuilt_total: 0,
        priority: e.priority,
        backfill_id: e.backfill_id,
        max_concurrent_job_runs: e.max_concurrent_job_runs,
        pattern: e.pattern,
        window: 0,
        released: 0,
        schedule_tick: e.schedule_tick,
        children_active: 0,
        children_failed: 0,
      };
      const window = windowFor(want.partitions.length, want.max_concurrent_job_runs);
      want = withWant(want, { window, released: window > 0 ? window : want.partitions.length });
      want = withWant(want, { counts: countPartitions(s, want.partitions, want) });
      want = withWant(want, { status: deriveWantStatus(s, want) });
      let next = putWant(s, want);
      if (want.backfill_id && !next.backfills.has(want.backfill_id)) {
        next = withState(created(next, 'backfills'), {
          backfills: next.backfills.set(want.backfill_id, want.want_id),
          // Keyed by its want's creation seq: creation order, and the same key a snapshot derives.
          backfill_order: next.backfill_order.set(want.seq, want.backfill_id),
        });
      }
      if (window > 0 && !TERMINAL_WANT_STATUSES.has(want.status)) next = openReleased(next, want, 0, want.released);
      const schedule = scheduleOf(want);
      if (schedule !== undefined) next = recordScheduleTick(next, schedule, want);
      // Only what a user asked for has an sla of its own; derived wants serve their root's.
      if (!want.parent_want_id && want.sla_seconds > 0 && want.status !== 'successful') {
        next = withState(next, { sla_pending: next.sla_pending.set(slaKey(slaDeadline(want), want.want_id), true) });
      }
      // The runs it joins serve it too, and start as soon as the most urgent of their wants needs.
      for (const runId of listItems(want.job_run_ids)) {
        const run = next.job_runs.get(runId);
        if (!run) continue;
        next = addRunWant(next, runId, want);
        if (want.priority > run.priority) next = putJobRun(next, withJobRun(run, { priority: want.priority }));
      }
      const parent = next.wants.get(e.parent_want_id);
      if (parent) {
        next = putWant(next, withWant(parent, { child_want_ids: appended(parent.child_want_ids, want.want_id) }));
        next = refreshWant(next, parent.want_id, event.event_id, at);
      }
      return next;
    }
    case 'want_canceled': {
      const e = event.want_canceled;
      const want = s.wants.get(e.want_id);
      if (!want || TERMINAL_WANT_STATUSES.has(want.status)) return s;
      let next = putWant(s, withWant(want, { status: 'canceled', cancel_reason: e.reason, updated_at: at }));
      next = settleAbandoned(next, want.partitions, event.event_id, at);
      return refreshWant(next, want.parent_want_id, event.event_id, at);
    }
    case 'job_run_queued': {
      const e = event.job_run_queued;
      if (state.job_runs.has(e.job_run_id)) return s0;
      const s = created(s0, 'job_runs');
      const run: JobRunRecord = {
        job_run_id: e.job_run_id,
        seq: s.created.job_runs,
        job_label: e.job_label,
        config: e.config,
        attempt: e.attempt,
        exec: e.exec,
        timeout_seconds: e.timeout_seconds,
        status: 'queued',
        pid: 0,
        worker: '',
        exit_code: null,
        signal: '',
        reason: '',
        retry_at: 0,
        retried_by: '',
        missing: [],
        queued_at: at,
        started_at: null,
        ended_at: null,
        input_builds: e.input_builds,
        job_fingerprint: e.job_fingerprint,
        // Rebuilt field by field: a decoded event lists its fields in another order, and states compare as JSON.
        output_inputs: e.output_inputs.map((o) => ({ output: o.output, inputs: o.inputs })),
        priority: 0,
      };
      // Every active want on an output is a want of this run, whether it asked first or joined.
      const served = new Set(e.want_ids);
      for (const ref of e.config.outputs) s.active_wants_by_ref.get(ref)?.forEachValue((id) => served.add(id));
      let priority = Number.NEGATIVE_INFINITY;
      for (const id of served) priority = Math.max(priority, s.wants.get(id)?.priority ?? 0);
      let next = putJobRun(s, withJobRun(run, { priority: Number.isFinite(priority) ? priority : 0 }));
      // A job's first run records its definition; later edits come as job_definitions_changed (a retry queued with
      // the definition of its first attempt must not set the recorded one back).
      if (e.job_fingerprint && !next.job_fingerprints.has(e.job_label)) {
        next = recordFingerprint(next, e.job_label, e.job_fingerprint, event.event_id, at);
      }
      // The wants it serves are put once, with the run on their list, their counts and their status (pending).
      const pending: PendingWants = new Map();
      for (const id of served) {
        const w = next.wants.get(id);
        // The run is new, so it is on no want's list yet.
        if (!w) continue;
        pending.set(id, withWant(w, { job_run_ids: appended(w.job_run_ids, run.job_run_id) }));
        next = addRunWant(next, run.job_run_id, w);
      }
      next = recordRetry(next, e.retry_of, run.job_run_id);
      return setPartitions(s, next, e.config.outputs, 'building', run.job_run_id, event.event_id, at, pending);
    }
    case 'job_run_started': {
      const e = event.job_run_started;
      const run = s.job_runs.get(e.job_run_id);
      // A run canceled while it was being launched did start: its start says so (its process, from when it was
      // canceled, not later), and nothing else changes. Any other start after the run ended changes nothing.
      if (run?.status === 'canceled' && run.started_at === null && e.pid > 0) {
        const began = runStartedAt(e.started_at, run.queued_at, at);
        return updateRun(s, e.job_run_id, (r) => withJobRun(r, { pid: e.pid, worker: e.worker || 'local', started_at: Math.min(began, r.ended_at ?? began) }));
      }
      if (run?.status !== 'queued') return s;
      const began = runStartedAt(e.started_at, run.queued_at, at);
      return updateRun(s, e.job_run_id, (r) => withJobRun(r, { status: 'running', pid: e.pid, worker: e.worker || 'local', started_at: began }));
    }
    case 'job_run_placed': {
      const e = event.job_run_placed;
      const run = s.job_runs.get(e.job_run_id);
      // A run handed to a queue starts when a worker takes it: its time in the queue is no part of its duration. One
      // taken while no daemon ran says when (the next daemon heard of it later); an event without it (all of older
      // logs) is told as the worker takes it. Kept as job_run_started's is: not before it was queued (another clock).
      const began = runStartedAt(e.started_at, run?.queued_at ?? 0, at);
      // Canceled as it waited, but a worker had taken it (its word came after the cancel): it did start, for a moment,
      // as a local run canceled while it was launched does (job_run_started above).
      if (run?.status === 'canceled' && run.started_at === null) {
        return updateRun(s, e.job_run_id, (r) => withJobRun(r, { pid: e.pid, worker: e.worker, started_at: Math.min(began, r.ended_at ?? began) }));
      }
      if (run?.status !== 'running') return s;
      return updateRun(s, e.job_run_id, (r) => withJobRun(r, { pid: e.pid, worker: e.worker, started_at: began }));
    }
    case 'job_run_succeeded': {
      const e = event.job_run_succeeded;
      const run = s.job_runs.get(e.job_run_id);
      if (!stillRunning(run)) return s;
      let next = s;
      // The builds first, the outputs still building, then live with them: the wants on an output are counted once,
      // on its new build with its own staleness. Live first, a want that rebuilds what is stale would have seen
      // it fresh for a moment (no build yet, no reasons) and ended on a build stale at once.
      // Only outputs the run still owned became live by it (a newer run owns the rest).
      // A set for a batch's many outputs: a search of the list for each build was O(outputs^2).
      const outputs = run.config.outputs.length > 8 ? new Set(run.config.outputs) : undefined;
      const owned = e.builds.filter(
        (b) => (outputs ? outputs.has(b.partition_ref) : run.config.outputs.includes(b.partition_ref)) && s.partitions.get(b.partition_ref)?.job_run_id === run.job_run_id,
      );
      for (const b of owned) {
        // Field by field: a spread of the decoded event's object takes V8 the slow path (~1.5 us).
        const lineage: Lineage = {
          partition_ref: b.partition_ref,
          build_id: b.build_id,
          job_run_id: run.job_run_id,
          job_label: run.job_label,
          inputs: outputInputBuilds(run, b.partition_ref),
          job_fingerprint: run.job_fingerprint,
        };
        next = built(next, lineage, event.event_id, at);
      }
      next = endRun(next, e.job_run_id, 'succeeded', { exit_code: 0 }, 'live', event.event_id, at, e.ended_at);
      // An output that went live with no new build (none recorded for it) is its old build again: its consumers,
      // told it was being rebuilt, are told it is not. A run's success always records its outputs' builds.
      const unbuilt = run.config.outputs.filter(
        (ref) => s.partitions.get(ref)?.job_run_id === run.job_run_id && next.partitions.get(ref)?.build_id === s.partitions.get(ref)?.build_id,
      );
      return tellConsumers(next, unbuilt, event.event_id, at);
    }
    case 'job_run_failed': {
      const e = event.job_run_failed;
      const detail = { exit_code: exitCodeOf(e.exit_code), signal: e.signal, reason: e.reason, retry_at: e.retry_at };
      // A failure that will be retried keeps its partitions building. A failed rebuild leaves each output as its build
      // is (live, or tainted), as a cancel does: its data did not change, and consumers read its current build. The
      // wants that needed the rebuild still fail (want-status.ts `partitionCategory`: its latest run failed).
      const partition: PartitionStatusOf = e.retry_at > 0 ? 'building' : asItsBuildOr('failed');
      return endRun(s, e.job_run_id, 'failed', detail, partition, event.event_id, at, e.ended_at);
    }
    case 'job_run_canceled': {
      const e = event.job_run_canceled;
      // A canceled rebuild leaves the partition as its build is (live, or tainted): the data did not change, and
      // `canceled` took it out of what is live and had the next build rebuild it. One never built is canceled.
      // One canceled while it waited in a queue for a worker never started: no start (its hand-off was none) and so no
      // duration, and no worker, as a run canceled while queued here. A worker that had taken it still says so
      // (job_run_placed, after this).
      const run = s.job_runs.get(e.job_run_id);
      const unstarted: Partial<JobRunRecord> = run !== undefined && waitingForWorker(run) ? { started_at: null, worker: '' } : {};
      return endRun(s, e.job_run_id, 'canceled', { reason: e.reason, ...unstarted }, asItsBuildOr('canceled'), event.event_id, at);
    }
    case 'job_run_dep_missed': {
      const e = event.job_run_dep_missed;
      // The outputs stay building: they are rebuilt once the missing inputs are live.
      return endRun(s, e.job_run_id, 'dep_missed', { missing: e.missing }, 'building', event.event_id, at, e.ended_at);
    }
    case 'partition_tainted': {
      const e = event.partition_tainted;
      return taint(s, [e.partition_ref], event.event_id, at);
    }
    case 'taint_created': {
      const e = event.taint_created;
      if (state.taints.has(e.taint_id)) return s0;
      const s = created(s0, 'taints');
      // Its refs are indexed before they are marked, so the marks it makes count for it as for every other taint.
      const refs = new Set(e.partitions);
      // Every build there is now was made before it: what of them is tainted already, it counts.
      let still = 0;
      for (const ref of refs) if (taintCounts(event.event_id, s.partitions.get(ref))) still++;
      // A downstream taint may name 100,000 refs: one merge, not one insert each.
      const eventId = String(event.event_id);
      const byRef = s.taints_by_ref.updateMany([...refs].map((ref) => refTaintKey(ref, e.taint_id)), () => eventId);
      const record: TaintRecord = {
        taint_id: e.taint_id,
        seq: s.created.taints,
        partitions: e.partitions,
        reason: e.reason,
        downstream: e.downstream,
        created_at: at,
        event_id: event.event_id,
        still_tainted: still,
      };
      const next = withState(s, {
        taints: s.taints.set(record.taint_id, record),
        taint_order: s.taint_order.set(record.seq, record.taint_id),
        taints_by_ref: byRef,
      });
      return taint(next, e.partitions, event.event_id, at);
    }
    case 'job_definitions_changed': {
      let next = s;
      for (const { job_label, fingerprint } of event.job_definitions_changed.jobs) next = recordFingerprint(next, job_label, fingerprint, event.event_id, at);
      return next;
    }
    case 'schedules_changed':
      return recordSchedulesChanged(s, event.schedules_changed.schedules);
    case 'schedule_ticks_skipped':
      return recordTicksSkipped(s, event.schedule_ticks_skipped);
    case 'schedule_paused':
      // Paused since it was asked for; an event of a log written before `requested_at` has 0 there: its own time.
      return recordPaused(s, event.schedule_paused.name, event.schedule_paused.reason, event.schedule_paused.requested_at || at);
    case 'schedule_resumed':
      return recordResumed(s, event.schedule_resumed.name);
    case 'want_released': {
      const e = event.want_released;
      const want = s.wants.get(e.want_id);
      if (!want || want.window === 0 || TERMINAL_WANT_STATUSES.has(want.status) || e.released <= want.released) return s;
      const released = Math.min(e.released, want.partitions.length);
      const next = putWant(s, withWant(want, { released }));
      return openReleased(next, want, want.released, released);
    }
    case 'want_sla_missed': {
      const e = event.want_sla_missed;
      const want = s.wants.get(e.want_id);
      if (!want || want.sla_missed) return s;
      const next = putWant(s, withWant(want, { sla_missed: true }));
      return withState(next, { sla_pending: next.sla_pending.delete(slaKey(slaDeadline(want), want.want_id)) });
    }
  }
}

/** Opens the want's partitions [from, to) that are not settled for it. */
function openReleased(state: BuildState, want: WantRecord, from: number, to: number): BuildState {
  let open = state.window_open;
  for (let i = from; i < to; i++) {
    const ref = want.partitions[i]!;
    if (!settled(partitionCategory(state, state.partitions.get(ref), want))) open = open.set(openKey(want.want_id, ref), true);
  }
  return withState(state, { window_open: open });
}

interface Lineage {
  partition_ref: string;
  build_id: string;
  job_run_id: string;
  job_label: string;
  inputs: readonly BuildInput[];
  job_fingerprint: string;
}

/** A partition became live with a new build: history, lineage and the staleness of what consumed the old one. */
function built(prior: BuildState, e: Lineage, eventId: number, at: number): BuildState {
  if (prior.builds.has(e.build_id)) return prior;
  const s = created(prior, 'builds');
  const ref = e.partition_ref;
  const build: BuildRecord = {
    build_id: e.build_id,
    seq: s.created.builds,
    partition_ref: ref,
    job_run_id: e.job_run_id,
    built_at: at,
    event_id: eventId,
  };
  const old = s.partitions.get(ref);
  const replaced = old?.build_id ?? '';
  const oldBuild = replaced ? s.builds.get(replaced) : undefined;
  const oldLineage = oldBuild ? buildLineage(s, oldBuild) : undefined;
  let consumers = s.consumers;
  // Only current builds are kept as consumers: a build's consumers are then one key range, counted and paged
  // without a walk (staleness.ts). O(the old build's inputs).
  for (const input of oldLineage?.inputs ?? []) {
    const key = consumerKey(input.build_id, ref);
    if (consumers.get(key) === replaced) consumers = consumers.delete(key);
  }
  for (const input of e.inputs) consumers = consumers.set(consumerKey(input.build_id, ref), e.build_id);
  let byJob = s.partitions_by_job;
  if (oldLineage) byJob = byJob.delete(jobPartitionKey(oldLineage.job_label, ref));
  byJob = byJob.set(jobPartitionKey(e.job_label, ref), true);
  let next = withState(s, {
    builds: s.builds.set(build.build_id, build),
    build_history: s.build_history.set(historyKey(ref, build.seq), build.build_id),
    consumers,
    partitions_by_job: byJob,
  });
  // Its run's success makes it live with this build (endRun, after the builds of all its outputs).
  const before = next;
  const base: PartitionRecord = old ?? {
    ref,
    status: 'live',
    job_run_id: e.job_run_id,
    changed_event_id: eventId,
    created_at: at,
    updated_at: at,
    build_id: '',
    built_event_id: 0,
    stale_reasons: [],
    build_tainted: false,
    rebuild_failed_event_id: 0,
  };
  next = putPartition(next, withPartition(base, { build_id: e.build_id, built_event_id: eventId, stale_reasons: [], build_tainted: false, rebuild_failed_event_id: 0 }));
  next = recountWants(before, next, [ref], eventId, at);
  // Whoever consumed the old build now has an input rebuilt since.
  const downstream = replaced ? currentConsumers(s, replaced) : [];
  // Its own reasons too: a build made by a run queued with a job definition since edited is stale at once.
  next = refreshStale(next, [ref, ...downstream], putCounted(eventId, at));
  // A rebuild on behalf of a want: its detail lists it (the first REBUILT_KEPT), and it and the wants it was derived
  // from count it once each.
  if (replaced) {
    const counted = new Set<string>();
    for (const id of wantsOfRun(next, e.job_run_id)) {
      const w = next.wants.get(id);
      if (!w) continue;
      if (w.rebuilt.length < REBUILT_KEPT && !w.rebuilt.includes(ref)) next = putWant(next, withWant(w, { rebuilt: [...w.rebuilt, ref] }));
      for (let a = next.wants.get(id); a && !counted.has(a.want_id); a = next.wants.get(a.parent_want_id)) {
        counted.add(a.want_id);
        next = putWant(next, withWant(a, { rebuilt_total: a.rebuilt_total + 1 }));
      }
    }
  }
  return next;
}

/** Marks built partitions tainted (a build in flight will replace the taint anyway); their consumers turn stale. */
function taint(s: BuildState, refs: readonly string[], eventId: number, at: number): BuildState {
  let next = s;
  const moved: string[] = [];
  const marked: string[] = [];
  for (const ref of refs) {
    const p = next.partitions.get(ref);
    if (!p || p.status === 'tainted') continue;
    if (p.status === 'building') {
      // Its run goes on; the build it would replace is tainted all the same, should that run fail.
      if (p.build_id && !p.build_tainted) next = putPartition(next, withPartition(p, { build_tainted: true }));
      marked.push(ref);
      continue;
    }
    // A rebuild that failed before the taint is no longer why it is not live: the wants on it ask again.
    next = putPartition(next, withPartition(p, { status: 'tainted', changed_event_id: eventId, updated_at: at, build_tainted: p.build_id !== '', rebuild_failed_event_id: 0 }));
    moved.push(ref);
  }
  next = recountWants(s, next, moved, eventId, at);
  return tellConsumers(next, [...moved, ...marked], eventId, at);
}

/** The job's definition as now known; a change makes the partitions it built before stale, O(those partitions). */
function recordFingerprint(s: BuildState, label: string, fingerprint: string, eventId: number, at: number): BuildState {
  const old = s.job_fingerprints.get(label);
  if (old === fingerprint) return s;
  const next = withState(s, { job_fingerprints: s.job_fingerprints.set(label, fingerprint) });
  if (old === undefined) return next;
  const affected: string[] = [];
  const prefix = jobPartitionKey(label, '');
  for (const [key] of s.partitions_by_job.entriesFrom(prefix)) {
    if (!key.startsWith(prefix)) break;
    affected.push(key.slice(prefix.length));
  }
  return refreshStale(next, affected, putCounted(eventId, at));
}

/**
 * The consumers of `refs` (what their current builds fed) look at their staleness again, after something they are
 * told of changed: a taint, a rebuild begun or given up. O(those consumers).
 */
function tellConsumers(state: BuildState, refs: readonly string[], eventId: number, at: number): BuildState {
  const downstream = refs.flatMap((ref) => currentConsumers(state, state.partitions.get(ref)!.build_id));
  return downstream.length > 0 ? refreshStale(state, downstream, putCounted(eventId, at)) : state;
}

/** A partition write that also re-counts the active wants on it (its staleness may change what they need). */
function putCounted(eventId: number, at: number): (state: BuildState, p: PartitionRecord) => BuildState {
  return (state, p) => recountWants(state, putPartition(state, p), [p.ref], eventId, at);
}

function joinedRuns(state: BuildState, refs: readonly string[]): string[] {
  const ids = new Set<string>();
  for (const ref of refs) {
    const p = state.partitions.get(ref);
    if (p?.status !== 'building') continue;
    const run = state.job_runs.get(p.job_run_id);
    if (run && ACTIVE_JOB_RUN_STATUSES.has(run.status)) ids.add(run.job_run_id);
  }
  return [...ids];
}

/**
 * A run queued as the retry of `retriedId` (its `retry_of`) is that run's `retried_by`: the first such run, so of a
 * batch retried in halves the half queued first, which has its first output. O(log n): one lookup, one put. A run
 * that is not (or no longer, once pruned) in the state, or the run itself, changes nothing.
 */
function recordRetry(state: BuildState, retriedId: string, retryId: string): BuildState {
  if (retriedId === '' || retriedId === retryId) return state;
  const retried = state.job_runs.get(retriedId);
  if (!retried || retried.retried_by !== '') return state;
  return putJobRun(state, withJobRun(retried, { retried_by: retryId }));
}

function updateRun(state: BuildState, id: string, fn: (r: JobRunRecord) => JobRunRecord): BuildState {
  const run = state.job_runs.get(id);
  return run ? putJobRun(state, fn(run)) : state;
}

/** A partition's status by its current build (live, or tainted), else `otherwise`. */
function asItsBuildOr(otherwise: PartitionStatus): (p: PartitionRecord | undefined) => PartitionStatus {
  return (p) => (p?.build_id ? (p.build_tainted ? 'tainted' : 'live') : otherwise);
}

/** A status for every partition moved, or one by what each partition is. */
type PartitionStatusOf = PartitionStatus | ((p: PartitionRecord | undefined) => PartitionStatus);

function endRun(
  state: BuildState,
  id: string,
  status: JobRunStatus,
  detail: Partial<JobRunRecord>,
  partitionStatus: PartitionStatusOf,
  eventId: number,
  at: number,
  endedAt = 0,
): BuildState {
  const run = state.job_runs.get(id);
  if (!stillRunning(run)) return state;
  const ended_at = runEndedAt(endedAt, run.started_at ?? run.queued_at, at);
  const next = putJobRun(state, withJobRun(run, { ...detail, status, ended_at }));
  // Only the outputs this run is still responsible for move; a newer run owns the rest.
  const owned = run.config.outputs.filter((ref) => next.partitions.get(ref)?.job_run_id === id);
  // Outputs left waiting (missing inputs) that no active want asks for any more are not waited for.
  return settleAbandoned(setPartitions(state, next, owned, partitionStatus, id, eventId, at), owned, eventId, at);
}

/** An outcome for a run that already ended (a kill racing a cancel), or one unknown, changes nothing. */
function stillRunning(run: JobRunRecord | undefined): run is JobRunRecord {
  return run !== undefined && ACTIVE_JOB_RUN_STATUSES.has(run.status);
}

/** Moves partitions to a status and re-derives the wants that ask for them. */
function setPartitions(
  before: BuildState,
  state: BuildState,
  refs: readonly string[],
  statusOf: PartitionStatusOf,
  runId: string,
  eventId: number,
  at: number,
  pending: PendingWants = new Map(),
): BuildState {
  let next = state;
  const statuses: PartitionStatus[] = [];
  const failed = state.job_runs.get(runId)?.status === 'failed';
  for (const ref of refs) {
    const old = next.partitions.get(ref);
    const status = typeof statusOf === 'function' ? statusOf(old) : statusOf;
    statuses.push(status);
    next = putPartition(next, {
      ref,
      status,
      job_run_id: runId,
      changed_event_id: old && old.status === status ? old.changed_event_id : eventId,
      created_at: old ? old.created_at : at,
      updated_at: at,
      build_id: old?.build_id ?? '',
      built_event_id: old?.built_event_id ?? 0,
      stale_reasons: old?.stale_reasons ?? [],
      // Live is a new build (its own mark false) or the old one by a run that recorded none: no taint to carry.
      build_tainted: status !== 'live' && old?.build_tainted === true,
      // Its run failed for good and it kept its build (a failure to be retried leaves it building).
      rebuild_failed_event_id: failed && (status === 'live' || status === 'tainted') ? eventId : 0,
    });
  }
  next = recountWants(before, next, refs, eventId, at, pending);
  // What consumers are told of an input changed: it is tainted, or it is being built again, or no longer is. Not
  // when it goes live: its new build comes in the same event (`built`), which tells them; told here, they would see
  // the old build live for a moment, fresh, and a want rebuilding what is stale would end on it.
  // A rebuild canceled (a status by the partition's build) goes back live on its old build, which no `built` tells of.
  const told = (s: PartitionStatus | undefined) => (s === 'tainted' || s === 'building' ? s : '');
  const changed = statusOf === 'live' ? [] : refs.filter((ref, i) => told(before.partitions.get(ref)?.status) !== told(statuses[i]));
  return tellConsumers(next, changed, eventId, at);
}

/**
 * Want records changed by an event but not yet put in the state (their status not yet re-derived), by id: each is put
 * once, with its status, where it was put at each change before (three puts of a want a queued run, each a path
 * copied in `wants` and a new state). A held want's status is the state's, so its place in the indexes by status and
 * ref is right until it is put; nothing between reads its other fields from the state (see `putPending`).
 */
type PendingWants = Map<string, WantRecord>;

/**
 * After partitions moved between `before` (the state before the event) and `state`, moves each active
 * want's counts from the partition's old category to its new one, then re-derives those wants.
 */
function recountWants(before: BuildState, state: BuildState, refs: readonly string[], eventId: number, at: number, pending: PendingWants = new Map()): BuildState {
  let next = state;
  const unique = refs.length < 2 ? refs : [...new Set(refs)];
  for (const ref of unique) {
    const was = before.partitions.get(ref);
    const now = next.partitions.get(ref);
    next.active_wants_by_ref.get(ref)?.forEachValue((wantId) => {
      const want = pending.get(wantId) ?? next.wants.get(wantId);
      if (!want) return;
      const from = partitionCategory(before, was, want);
      const to = partitionCategory(next, now, want);
      const counts = moveCount(want.counts, from, to);
      // The counts are the want's progress (a backfill's view): moving them is an update of the want.
      if (counts !== want.counts) pending.set(wantId, withWant(want, { counts, updated_at: at }));
      // A windowed want's partition that settles leaves its window; one that unsettles (a taint) is open again.
      if (want.window > 0 && settled(from) !== settled(to)) {
        const key = openKey(wantId, ref);
        next = withState(next, { window_open: settled(to) ? next.window_open.delete(key) : next.window_open.set(key, true) });
      }
    });
  }
  for (const ref of unique) {
    // The wants on the ref as they were before these refreshes: a refresh that ends one takes it off the ref.
    const on = next.active_wants_by_ref.get(ref);
    on?.forEachValue((wantId) => {
      next = refreshWant(next, wantId, eventId, at, pending);
    });
  }
  // Whatever a refresh above did not reach (none should be left: each is active on one of the refs).
  for (const wantId of [...pending.keys()]) next = refreshWant(next, wantId, eventId, at, pending);
  return next;
}

/**
 * Re-derives a want's status and puts it, with its pending changes; a want that turns terminal re-derives its parent,
 * up to the root.
 */
function refreshWant(state: BuildState, wantId: string, eventId: number, at: number, pending?: PendingWants): BuildState {
  let next = state;
  let id = wantId;
  while (id) {
    const held = pending?.get(id);
    if (held) pending!.delete(id);
    const want = held ?? next.wants.get(id);
    if (!want) break;
    const status = deriveWantStatus(next, want);
    if (status === want.status) {
      if (held) next = putWant(next, held);
      break;
    }
    next = putWant(next, withWant(want, { status, updated_at: at }));
    if (TERMINAL_WANT_STATUSES.has(status)) {
      // What it abandons may be re-counted for its consumers' wants (tellConsumers), which read want records from
      // the state: every change held is put first.
      if (pending) next = putPending(next, pending);
      next = settleAbandoned(next, want.partitions, eventId, at);
    }
    id = want.parent_want_id;
  }
  return next;
}

/** Puts the wants held with their changes as they are (their status re-derived later, by their refresh). */
function putPending(state: BuildState, pending: PendingWants): BuildState {
  let next = state;
  for (const want of pending.values()) next = putWant(next, want);
  pending.clear();
  return next;
}

/**
 * Once no active want asks for a partition, a build of it that is only waiting (a retry backoff, missing
 * inputs) has no reason to go on: the partition is recorded canceled instead of staying `building` forever.
 * Runs still queued or running are left to the orchestrator, which cancels and kills them by event.
 */
function settleAbandoned(state: BuildState, refs: readonly string[], eventId: number, at: number): BuildState {
  let next = state;
  const moved: string[] = [];
  for (const ref of refs) {
    const p = next.partitions.get(ref);
    if (p?.status !== 'building' || next.active_wants_by_ref.has(ref)) continue;
    const run = next.job_runs.get(p.job_run_id);
    if (run && ACTIVE_JOB_RUN_STATUSES.has(run.status)) continue;
    next = putPartition(next, withPartition(p, { status: 'canceled', changed_event_id: eventId, updated_at: at }));
    moved.push(ref);
  }
  // Its consumers were told it is being rebuilt; it no longer is.
  return tellConsumers(next, moved, eventId, at);
}

/**
 * One more record of `kind` made: its seq (and the orchestrator's next id) comes from this count, never from how
 * many records the state holds, since compaction removes old ones and an id must never be given twice.
 */
function created(s: BuildState, kind: keyof BuildState['created']): BuildState {
  // A literal of the five counts: a spread with a computed key takes V8's slow path, once a want, run and build.
  const c = s.created;
  return withState(s, {
    created: {
      wants: c.wants + (kind === 'wants' ? 1 : 0),
      job_runs: c.job_runs + (kind === 'job_runs' ? 1 : 0),
      builds: c.builds + (kind === 'builds' ? 1 : 0),
      taints: c.taints + (kind === 'taints' ? 1 : 0),
      backfills: c.backfills + (kind === 'backfills' ? 1 : 0),
    },
  });
}
