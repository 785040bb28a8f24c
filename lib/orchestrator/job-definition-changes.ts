/**
 * Job definitions that changed since what they built was recorded: edited in the graph, or renamed (their outputs
 * now another job's) with an edit. Looked at in housekeeping steps (full scans, ticks).
 */
import { jobPartitionKey, type BuildState } from '../state/build-state.js';
import type { StepDraft } from './step-draft.js';
import type { JobPolicy, SchedulingPolicy } from './step-input.js';
import { acceptedFingerprints, fingerprintAccepted, fingerprintsNamed } from '../state/accepted-fingerprints.js';

/**
 * Jobs whose definition changed since it was recorded (the graph was edited): one event for all, so what they
 * built turns stale now, not when they next run. A job never run has nothing recorded and nothing to make stale.
 */
export function recordJobDefinitions(d: StepDraft): void {
  const jobs: Array<{ job_label: string; fingerprint: string }> = [];
  const graphJobs = d.input.policy.jobs;
  for (const [job_label, policy] of graphJobs) {
    const recorded = d.state.job_fingerprints.get(job_label);
    // A log of before session 31 holds the legacy fingerprint alone: recorded again as `canonical|legacy`, which
    // keeps what it built live and takes the runs to come, recorded under the canonical one.
    if (policy.fingerprint && recorded !== undefined && !fingerprintAccepted(recorded, policy.fingerprint)) {
      jobs.push({ job_label, fingerprint: acceptedFingerprints(policy.fingerprint, policy.legacy_fingerprint) });
    }
  }
  // A label gone from the graph whose outputs another job now has was renamed: what it built is held to that job's
  // definition, so a rename with an edit (or an edit after it) makes it stale, and a rename alone does not.
  for (const [job_label, recorded] of d.state.job_fingerprints) {
    if (graphJobs.has(job_label)) continue;
    const successor = renamedTo(job_label, d.state, d.input.policy);
    // Only a successor's definition not yet held to makes it stale: once held to both parts of a split, the part
    // left after the other's partitions were rebuilt does not make them fresh again (a restart would see the same).
    const held = new Set(fingerprintsNamed(recorded));
    if (successor && successor.parts.some((f) => !held.has(f))) jobs.push({ job_label, fingerprint: successor.fingerprint });
  }
  if (jobs.length > 0) d.emit({ type: 'job_definitions_changed', job_definitions_changed: { jobs } });
}

/** Per graph (its policy), the fingerprint each label gone from it is held to, and how many partitions it had then. */
const successorMemo = new WeakMap<SchedulingPolicy, Map<string, { partitions: number; successor: Successor | undefined }>>();

/** What a label gone from the graph is held to: the value to record, and the canonical fingerprints it names. */
interface Successor {
  fingerprint: string;
  parts: string[];
}

/**
 * The fingerprint what a label gone from the graph built is held to now: that of the job that now produces its
 * partitions (a rename). Split between jobs of different definitions, the successors' fingerprints joined (`a+b`), so
 * that a part edited is not hidden behind a part renamed as it was (conservative: all of it turns stale). None when
 * no job produces what it built, or it built nothing still current. O(its current partitions), once a graph and
 * again when their number changed (counted by rank, O(log n)).
 */
function renamedTo(label: string, state: BuildState, policy: SchedulingPolicy): Successor | undefined {
  if (!policy.producerOf) return undefined;
  let memo = successorMemo.get(policy);
  if (!memo) successorMemo.set(policy, (memo = new Map()));
  const prefix = jobPartitionKey(label, '');
  const partitions = state.partitions_by_job.rank(`${label}\u0001`) - state.partitions_by_job.rank(prefix);
  let known = memo.get(label);
  if (!known || known.partitions !== partitions) {
    const successors = new Map<string, JobPolicy>();
    for (const [key] of state.partitions_by_job.entriesFrom(prefix)) {
      if (!key.startsWith(prefix)) break;
      const producer = policy.producerOf(key.slice(prefix.length));
      const job = producer === undefined ? undefined : policy.jobs.get(producer);
      if (job?.fingerprint) successors.set(job.fingerprint, job);
    }
    const parts = [...successors.keys()].sort();
    // One successor is held to as a job of the graph is (its legacy fingerprint too); a split takes no alternative.
    const only = parts.length === 1 ? successors.get(parts[0]!)! : undefined;
    const fingerprint = only ? acceptedFingerprints(only.fingerprint, only.legacy_fingerprint) : parts.join('+');
    known = { partitions, successor: parts.length === 0 ? undefined : { fingerprint, parts } };
    memo.set(label, known);
  }
  return known.successor;
}
