/**
 * The scheduling of a step's wants (the candidates, or every active want): for each ref, what it waits for, a want
 * derived for its missing inputs, a run queued (or gathered for a batch), the retry of its failed run when due, or a
 * run failed at once when it cannot be built. Also a want's ttl and its window's release.
 */
import { listItems } from '../state/append-list.js';
import type { BuildState, PartitionRecord, WantRecord } from '../state/build-state.js';
import { ACTIVE_JOB_RUN_STATUSES, ACTIVE_WANT_STATUSES, TERMINAL_WANT_STATUSES, wantClockStart } from '../state/build-state.js';
import { mustRebuild, partitionCategory } from '../state/want-status.js';
import { isSchedulable, openCount, schedulableRefs, settled } from '../state/want-window.js';
import { cancelWant } from './cancel-want.js';
import { mergeCandidates, touchedCandidates, type Candidates } from './candidates.js';
import { failUnresolvable, foundInputs, queueRun } from './queue-run.js';
import { queueBatches, queueReady } from './ready-batches.js';
import { retryRun } from './run-outcomes.js';
import type { StepDraft } from './step-draft.js';
import { deriveWant } from './want-creation.js';
import { askedAbove, cycleError, cycleThrough } from './dependency-cycle.js';

export function scheduleWants(d: StepDraft): void {
  const { candidates, waiters } = d.input;
  const pairs = candidates
    ? mergeCandidates(mergeCandidates(new Map(), candidates), touchedCandidates(d.state, d.events, waiters ?? new Map()))
    : undefined;
  const listed = d.state;
  for (const want of [...activeWants(listed, pairs)]) {
    // Read again only once an event of this step may have changed it (most sweep steps emit none).
    const current = d.state === listed ? want : d.state.wants.get(want.want_id);
    if (!current || TERMINAL_WANT_STATUSES.has(current.status)) continue;
    if (expire(d, current)) continue;
    const missingInputs = new Set<string>();
    // Built only when an input turns out missing: most steps never need it.
    let covered: Set<string> | undefined;
    const isCovered = (ref: string) => (covered ??= childRefs(d, current)).has(ref);
    for (const ref of pairs?.get(current.want_id) ?? schedulableRefs(d.state, current)) {
      if (isSchedulable(d.state, current, ref)) scheduleRef(d, current, ref, missingInputs, isCovered);
    }
    if (missingInputs.size > 0) deriveWant(d, current, [...missingInputs], 'derived');
    release(d, current.want_id);
  }
  queueBatches(d);
}

function scheduleRef(d: StepDraft, want: WantRecord, ref: string, missingInputs: Set<string>, isCovered: (ref: string) => boolean): void {
  const p = d.state.partitions.get(ref);
  if (p?.status === 'building') {
    const last = d.state.job_runs.get(p.job_run_id);
    if (!last || ACTIVE_JOB_RUN_STATUSES.has(last.status)) return;
    if (last.status === 'failed' && last.retry_at > 0) {
      if (d.input.now >= last.retry_at) retryRun(d, last, want);
      else d.wakes.push([last.retry_at, want.want_id, ref]);
    } else if (last.status === 'dep_missed') {
      const notLive = last.missing.filter((m) => d.state.partitions.get(m)?.status !== 'live');
      for (const m of notLive) {
        const leftAsIs = inputLeftAsIs(want, m, d.state.partitions.get(m));
        if (leftAsIs) return failUnresolvable(d, ref, { job_label: last.job_label, error: leftAsIs }, want);
      }
      const cycle = closesCycle(d, want, ref, notLive);
      if (cycle) return failUnresolvable(d, ref, { job_label: last.job_label, error: cycleError(cycle) }, want);
      for (const m of notLive) d.waits.push([m, want.want_id, ref]);
      if (notLive.length === 0) queueRun(d, last, want, last.attempt, '', foundInputs(last));
      // Like any missing input: asked for by this want itself, never left to whoever else wants it now.
      const unasked = notLive.filter((m) => !isCovered(m) && !askedAbove(d.state, want, m));
      if (unasked.length > 0) deriveWant(d, want, unasked, 'dep_missed');
    }
    return;
  }
  if (!needsBuild(d.state, want, ref)) return;
  const task = d.input.tasks.get(ref);
  if (!task) {
    // Its config is still coming (its arrival brings it back), or it was touched by this step's own events after
    // the configs were looked up: then the next step asks for it (the orchestrator tells which from `unresolved`).
    d.unresolved.push([want.want_id, ref]);
    return;
  }
  if (!task.ok) {
    failUnresolvable(d, ref, task, want);
    return;
  }
  let ready = true;
  const backfillStart = backfillStartOf(d, want);
  for (const dep of task.config.inputs) {
    if (dep.dep_type !== 'MATERIALIZE') continue;
    const input = d.state.partitions.get(dep.partition_ref);
    // A backfill goes on past a failure: what needed the failed input fails too, with the reason on record,
    // rather than wait for it (or build it again) forever.
    if (backfillStart > 0 && input?.status === 'failed' && input.changed_event_id > backfillStart) {
      const error = `its input '${dep.partition_ref}' failed (job run ${input.job_run_id}), so it cannot be built`;
      failUnresolvable(d, ref, { job_label: task.job_label, error }, want);
      return;
    }
    const leftAsIs = inputLeftAsIs(want, dep.partition_ref, input);
    if (leftAsIs) {
      failUnresolvable(d, ref, { job_label: task.job_label, error: leftAsIs }, want);
      return;
    }
    // Under 'stale' or 'all' a live input may have to be rebuilt first: the want's closure comes up to date.
    if (input?.status === 'live' && !mustRebuild(d.state, want, input)) continue;
    const cycle = closesCycle(d, want, ref, [dep.partition_ref]);
    if (cycle) {
      failUnresolvable(d, ref, { job_label: task.job_label, error: cycleError(cycle) }, want);
      return;
    }
    ready = false;
    d.waits.push([dep.partition_ref, want.want_id, ref]);
    // Even an input another want is building gets a derived want of this one: it joins that build, and
    // the chain from this want to the run stays traceable (and survives the other want's cancel). Not one that
    // this want or a want above it asks for: they build it (and through a cycle, a want a step would be made).
    if (!isCovered(dep.partition_ref) && !askedAbove(d.state, want, dep.partition_ref)) missingInputs.add(dep.partition_ref);
  }
  if (ready) queueReady(d, task, want, ref);
}

/**
 * A want that asked for its partitions within `ttl_seconds` and is still not satisfied is canceled, with its
 * derived wants and the runs only it needs. Derived wants go with their root rather than on their own clock.
 */
function expire(d: StepDraft, want: WantRecord): boolean {
  if (want.ttl_seconds <= 0 || want.parent_want_id) return false;
  const expiry = wantClockStart(want) + want.ttl_seconds * 1000;
  if (d.input.now < expiry) {
    d.wakes.push([expiry, want.want_id, null]);
    return false;
  }
  cancelWant(d, want, `its ttl of ${want.ttl_seconds} s expired before its partitions were built`);
  return true;
}

/**
 * Tops a windowed want's window up: releases its next partitions until as many are open as its window holds.
 * Released partitions that are already settled for it (live, say) are passed over, at most a few windows' worth
 * per step, so even a range that is mostly built costs a step no more than that.
 */
function release(d: StepDraft, wantId: string): void {
  const want = d.state.wants.get(wantId);
  if (!want || want.window === 0 || want.released >= want.partitions.length || TERMINAL_WANT_STATUSES.has(want.status)) return;
  const size = windowSize(d, want);
  let open = openCount(d.state, want.want_id);
  // Topped up once a quarter of the window is free, not at every run that ends: fewer releases, each followed by
  // one look at the whole window.
  if (open > size - Math.max(1, Math.floor(size / 4))) return;
  let next = want.released;
  const limit = Math.min(want.partitions.length, want.released + 4 * size);
  while (open < size && next < limit) {
    const ref = want.partitions[next++]!;
    if (!settled(partitionCategory(d.state, d.state.partitions.get(ref), want))) open++;
  }
  if (next > want.released) d.emit({ type: 'want_released', want_released: { want_id: want.want_id, released: next } });
}

/** The most partitions a windowed want of a batched job keeps open: what a step looks at stays bounded. */
const MAX_BATCHED_WINDOW = 4096;

/**
 * How many partitions a windowed want keeps open: its window (twice its cap, in runs), times the batch of the job that
 * builds its next partitions, so that its runs are whole batches (a backfill of a job batched by 100 under a cap of 4
 * ran batches of 8: 1,250 runs for 10,000 partitions). The planner's alone: the log records what was released.
 */
function windowSize(d: StepDraft, want: WantRecord): number {
  const ref = want.partitions[want.released];
  const label = ref === undefined ? undefined : d.input.policy.producerOf?.(ref);
  const batch = label === undefined ? 1 : (d.input.policy.jobs.get(label)?.batch?.max_partitions ?? 1);
  return batch > 1 ? Math.max(want.window, Math.min(MAX_BATCHED_WINDOW, want.window * batch)) : want.window;
}

/**
 * The dependency cycle `ref` would wait in through one of `inputs` (dependency-cycle.ts), looked for only where one
 * can close: at an input that the want or a want above it asks for itself (else it is derived, and looked at there).
 */
function closesCycle(d: StepDraft, want: WantRecord, ref: string, inputs: readonly string[]): string[] | undefined {
  for (const m of inputs) {
    if (m !== ref && !askedAbove(d.state, want, m)) continue;
    const cycle = cycleThrough(d.state, (x) => d.input.tasks.get(x) ?? d.input.knownTasks?.(x), ref, m);
    if (cycle) return cycle;
  }
  return undefined;
}

/** Refs the want already asks for, itself or through its active derived wants. */
function childRefs(d: StepDraft, want: WantRecord): Set<string> {
  const refs = new Set<string>(want.partitions);
  for (const id of listItems(want.child_want_ids)) {
    const child = d.state.wants.get(id);
    if (child && !TERMINAL_WANT_STATUSES.has(child.status)) for (const ref of child.partitions) refs.add(ref);
  }
  return refs;
}

/** The event id that created the backfill a want serves (itself or its root); 0 when it serves none. */
function backfillStartOf(d: StepDraft, want: WantRecord): number {
  const root = want.parent_want_id ? d.state.wants.get(want.root_want_id) : want;
  return root?.backfill_id ? root.created_event_id : 0;
}

/**
 * Why `want` cannot build what needs `ref`: under rebuild 'absent' (a backfill's policy 'missing') an input that failed
 * or is tainted is left as it is, by the want and by any want derived for it. Such a derived want would be settled at
 * once, and derived again at the next look at this one: a want every tick, for ever. '' when the input may be built.
 */
function inputLeftAsIs(want: WantRecord, ref: string, input: PartitionRecord | undefined): string {
  if (want.rebuild !== 'absent' || (input?.status !== 'failed' && input?.status !== 'tainted')) return '';
  const how = input.status === 'failed' ? `failed (job run ${input.job_run_id})` : 'is tainted';
  return (
    `its input '${ref}' ${how}, and this want builds only what was never built nor attempted ` +
    `(rebuild 'absent', a backfill's policy 'missing'): build '${ref}' first, or ask with rebuild 'missing' (a backfill: policy 'failed')`
  );
}

/** Active wants in creation order: the candidates among them, or all (each status index walked over its own). */
export function* activeWants(state: BuildState, candidates?: Candidates): Generator<WantRecord> {
  if (candidates) {
    // Read once: a want comes decoded from the state's image on every read.
    const wants: WantRecord[] = [];
    for (const id of candidates.keys()) {
      const w = state.wants.get(id);
      if (w && !TERMINAL_WANT_STATUSES.has(w.status)) wants.push(w);
    }
    yield* wants.sort((a, b) => a.seq - b.seq);
    return;
  }
  const ids: Array<[number, string]> = [];
  for (const status of ACTIVE_WANT_STATUSES) {
    for (const entry of state.wants_by_status[status]) ids.push(entry);
  }
  ids.sort((a, b) => a[0] - b[0]);
  for (const [, id] of ids) {
    const want = state.wants.get(id);
    if (want) yield want;
  }
}

/** True when nothing has built the ref for this want and nothing is about to, and its policy wants it built. */
export function needsBuild(state: BuildState, want: WantRecord, ref: string): boolean {
  const p = state.partitions.get(ref);
  return p?.status !== 'building' && partitionCategory(state, p, want) === 'none';
}
