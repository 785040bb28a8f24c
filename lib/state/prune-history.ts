/**
 * What a compaction lets go of the state: history that ended before `cutoff` (the time of the first event the log
 * keeps) and that nothing current needs. Kept: every active want and every want tree with a want still active or
 * changed since the cutoff (a tree goes whole, so no kept want names a child that is gone); every run those wants
 * name, every partition's latest run, every run still queued or running or ended since the cutoff; every build since
 * the cutoff and every partition's current build, with the lineage of each (the builds its run consumed, their runs,
 * and so on: the lineage of current builds stays whole); taints, schedules, fingerprints and the id counters.
 *
 * Pure, and done on records: the indexes are rebuilt from what is kept (`fromSnapshot`), the same way a start from
 * the compaction base rebuilds them, so the state in memory after a prune and the state after a restart are equal.
 * A generator: it yields every few thousand records, so the store can run it between turns of the event loop
 * instead of holding it for the whole state (a second at 50,000 wants).
 */
import { listItems } from './append-list.js';
import { ACTIVE_JOB_RUN_STATUSES, TERMINAL_WANT_STATUSES, outputInputBuilds, type BuildState } from './build-state.js';
import { snapshotOf, stateFromSnapshot } from './snapshot.js';

export interface PruneCounts {
  wants: number;
  job_runs: number;
  builds: number;
}

export interface PruneResult {
  state: BuildState;
  pruned: PruneCounts;
  /** The runs dropped (their log directories are the caller's to remove). */
  prunedJobRunIds: string[];
}

const RECORDS_PER_SLICE = 20_000;

/** With `countOnly` (a dry run) it stops at the counts: the state it returns is `state`, its indexes not rebuilt. */
export function* pruneSteps(state: BuildState, cutoff: number, countOnly = false): Generator<void, PruneResult, void> {
  let n = 0;
  const tick = () => ++n % RECORDS_PER_SLICE === 0;
  const snap = yield* snapshotOf(state);
  const rootOf = (w: { root_want_id: string; want_id: string }) => w.root_want_id || w.want_id;
  const liveRoots = new Set<string>();
  for (const w of snap.wants) {
    if (!TERMINAL_WANT_STATUSES.has(w.status) || w.updated_at >= cutoff) liveRoots.add(rootOf(w));
    if (tick()) yield;
  }
  const wants = snap.wants.filter((w) => liveRoots.has(rootOf(w)));
  yield;

  const runs = new Map(snap.job_runs.map((r) => [r.job_run_id, r] as const));
  const builds = new Map(snap.builds.map((b) => [b.build_id, b] as const));
  const keepRuns = new Set<string>();
  for (const w of wants) for (const id of listItems(w.job_run_ids)) keepRuns.add(id);
  for (const r of snap.job_runs) {
    if (ACTIVE_JOB_RUN_STATUSES.has(r.status) || (r.ended_at ?? r.queued_at) >= cutoff) keepRuns.add(r.job_run_id);
    if (tick()) yield;
  }

  const keepBuilds = new Set<string>();
  const pending: string[] = [];
  for (const p of snap.partitions) {
    if (p.job_run_id) keepRuns.add(p.job_run_id);
    if (p.build_id) pending.push(p.build_id);
    if (tick()) yield;
  }
  for (const b of snap.builds) if (b.built_at >= cutoff) pending.push(b.build_id);
  // The lineage closure: a kept build keeps its run, and the builds that run consumed for it.
  for (let id = pending.pop(); id !== undefined; id = pending.pop()) {
    if (keepBuilds.has(id)) continue;
    const b = builds.get(id);
    if (!b) continue;
    keepBuilds.add(id);
    keepRuns.add(b.job_run_id);
    const run = runs.get(b.job_run_id);
    if (run) for (const input of outputInputBuilds(run, b.partition_ref)) pending.push(input.build_id);
    if (tick()) yield;
  }

  const keptRuns = snap.job_runs.filter((r) => keepRuns.has(r.job_run_id));
  const prunedJobRunIds = snap.job_runs.filter((r) => !keepRuns.has(r.job_run_id)).map((r) => r.job_run_id);
  const kept = { ...snap, wants, job_runs: keptRuns, builds: snap.builds.filter((b) => keepBuilds.has(b.build_id)) };
  const pruned = {
    wants: snap.wants.length - kept.wants.length,
    job_runs: prunedJobRunIds.length,
    builds: snap.builds.length - kept.builds.length,
  };
  if (countOnly || pruned.wants + pruned.job_runs + pruned.builds === 0) return { state, pruned, prunedJobRunIds };
  yield;
  return { state: yield* stateFromSnapshot(kept), pruned, prunedJobRunIds };
}
