/**
 * What a narrow step schedules: (want, ref) pairs that events touched, so a step's cost follows what changed,
 * not how many partitions are wanted. A want mapped to `null` is scheduled whole (a new want, say).
 */
import { jobRunIdOf } from '../events/job-run-id.js';
import type { EventPayload } from '../events/build-event.js';
import { activeWantsOn, type BuildState } from '../state/build-state.js';

export type Candidates = Map<string, Set<string> | null>;

/** input ref -> want id -> that want's refs waiting for the input. */
export type Waiters = Map<string, Map<string, Set<string>>>;

export function addCandidate(c: Candidates, wantId: string, ref: string | null): void {
  const refs = c.get(wantId);
  if (refs === null) return;
  if (ref === null) c.set(wantId, null);
  else if (refs) refs.add(ref);
  else c.set(wantId, new Set([ref]));
}

export function mergeCandidates(into: Candidates, from: Candidates): Candidates {
  for (const [wantId, refs] of from) {
    if (refs === null) addCandidate(into, wantId, null);
    else for (const ref of refs) addCandidate(into, wantId, ref);
  }
  return into;
}

export function addWait(waiters: Waiters, input: string, wantId: string, ref: string): void {
  let wants = waiters.get(input);
  if (!wants) waiters.set(input, (wants = new Map()));
  let refs = wants.get(wantId);
  if (!refs) wants.set(wantId, (refs = new Set()));
  refs.add(ref);
}

/** The (want, ref) pairs waiting on any of `inputs`. */
export function addWaiting(c: Candidates, waiters: Waiters, inputs: Iterable<string>): void {
  for (const input of inputs) for (const [id, refs] of waiters.get(input) ?? []) for (const ref of refs) addCandidate(c, id, ref);
}

/**
 * The same, and the waits are forgotten: they are candidates now, and a ref that still waits when it is scheduled
 * is registered again. So the map holds what waits now, not everything that ever waited, without a full scan to
 * rebuild it.
 */
export function takeWaiting(c: Candidates, waiters: Waiters, inputs: Iterable<string>): void {
  for (const input of inputs) {
    addWaiting(c, waiters, [input]);
    waiters.delete(input);
  }
}

/**
 * The pairs `events` may have given something to do: new wants (whole), the parent of a canceled want (it may
 * need its inputs asked for again), each active want on an output of a run that ended or was canceled, and the
 * refs that wait on such an output.
 */
export function touchedCandidates(state: BuildState, events: readonly EventPayload[], waiters: Waiters, touchedRefs?: Set<string>): Candidates {
  const c: Candidates = new Map();
  const touchRef = (ref: string) => {
    touchedRefs?.add(ref);
    for (const id of activeWantsOn(state, ref)) addCandidate(c, id, ref);
    addWaiting(c, waiters, [ref]);
  };
  for (const e of events) {
    switch (e.type) {
      case 'want_created':
        addCandidate(c, e.want_created.want_id, null);
        break;
      case 'want_canceled': {
        const parent = state.wants.get(e.want_canceled.want_id)?.parent_want_id;
        if (parent) addCandidate(c, parent, null);
        break;
      }
      case 'partition_tainted':
        touchRef(e.partition_tainted.partition_ref);
        break;
      case 'taint_created':
        // Active wants on a tainted partition rebuild it.
        for (const ref of e.taint_created.partitions) touchRef(ref);
        break;
      case 'want_released':
        // Its newly open partitions are scheduled in the next step, once their configs are at hand.
        addCandidate(c, e.want_released.want_id, null);
        break;
      case 'job_definitions_changed':
      case 'want_sla_missed':
      case 'schedules_changed':
        break;
      case 'job_run_started':
      case 'job_run_placed':
        // A run that starts, or that a worker took, changes no partition.
        break;
      case 'job_run_queued':
        // A queued run gives nobody anything to do: the want that queued it has just looked at its ref, any other
        // want on the ref finds it building, and what waits on its outputs waits on until the run ends (and keeps
        // its wait registered meanwhile).
        break;
      default:
        for (const ref of state.job_runs.get(jobRunIdOf(e) ?? '')?.config.outputs ?? []) touchRef(ref);
    }
  }
  return c;
}

