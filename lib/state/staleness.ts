/**
 * Staleness: why a live partition's current build is out of date. Each build records the builds of its inputs it
 * consumed and the fingerprint of the job definition that made it, so the reasons are a function of the state:
 * an input rebuilt since, an input that is itself stale or tainted or being rebuilt, a job definition that changed.
 *
 * Kept incrementally by `reduce`: when a partition's build, taint or staleness changes, only the partitions
 * whose current build consumed it are looked at again, and only those whose staleness flipped pass it on, so a
 * rebuild costs O(downstream), never a scan of all partitions. `staleFromScratch` recomputes everything; the
 * property tests hold the two equal.
 */
import { withPartition, type BuildState, type PartitionRecord } from './build-state.js';
import { buildIsTainted, buildLineage, consumerKey } from './build-state.js';
import { canonicalFingerprint, fingerprintAccepted } from './accepted-fingerprints.js';

/** The reasons for `ref`, given whether each input is stale (the recorded flag, or a from-scratch answer). */
export function staleReasons(state: BuildState, ref: string, inputIsStale: (ref: string) => boolean): string[] {
  const p = state.partitions.get(ref);
  if (!p?.build_id) return [];
  const record = state.builds.get(p.build_id);
  if (!record) return [];
  const build = buildLineage(state, record);
  const reasons: string[] = [];
  for (const input of build.inputs) {
    const ip = state.partitions.get(input.partition_ref);
    if (!ip) continue;
    // Names the build consumed, not the current one: the reason must not change with every later rebuild, which
    // would then have to revisit consumers of builds long replaced.
    if (ip.build_id !== input.build_id) reasons.push(`input ${input.partition_ref} was rebuilt since ${input.build_id}`);
    // Tainted until a new build replaces it: while it is rebuilt, and after that rebuild failed.
    else if (buildIsTainted(ip)) reasons.push(`input ${input.partition_ref} is tainted`);
    // What was consumed is about to be replaced: a want that rebuilds what is stale must not see it fresh meanwhile.
    else if (ip.status === 'building') reasons.push(`input ${input.partition_ref} is being rebuilt`);
    else if (inputIsStale(input.partition_ref)) reasons.push(`input ${input.partition_ref} is stale`);
  }
  const current = state.job_fingerprints.get(build.job_label);
  if (build.job_fingerprint && current && !fingerprintAccepted(current, build.job_fingerprint)) {
    reasons.push(`job ${build.job_label} changed since this build (fingerprint ${build.job_fingerprint} -> ${canonicalFingerprint(current)})`);
  }
  return reasons;
}

export function isStale(p: PartitionRecord | undefined): boolean {
  return (p?.stale_reasons.length ?? 0) > 0;
}

/** Refs whose current build consumed build `buildId` (of any partition). */
export function currentConsumers(state: BuildState, buildId: string): string[] {
  return consumersPage(state, buildId, 0, Number.MAX_SAFE_INTEGER).refs;
}

/**
 * A page of `currentConsumers` and how many there are in all: the fold keeps only current builds in `consumers`
 * (reduce.ts `built`), so a build's consumers are the key range [buildId\0, buildId\x01). O(log n + page).
 */
export function consumersPage(state: BuildState, buildId: string, offset: number, limit: number): { refs: string[]; total: number } {
  if (!buildId) return { refs: [], total: 0 };
  const prefix = consumerKey(buildId, '');
  const start = state.consumers.rank(prefix);
  const total = state.consumers.rank(`${buildId}\u0001`) - start;
  const take = Math.max(0, Math.min(limit, total - offset));
  const refs = take > 0 ? state.consumers.slice(start + offset, take).map(([key]) => key.slice(prefix.length)) : [];
  return { refs, total };
}

/**
 * Re-derives the reasons of `refs` and, transitively, of the consumers of every partition whose staleness flipped.
 * `put` writes a partition whose reasons changed (the fold also re-counts the wants on it).
 */
export function refreshStale(
  state: BuildState,
  refs: Iterable<string>,
  put: (state: BuildState, p: PartitionRecord) => BuildState,
): BuildState {
  let next = state;
  // No "seen" set: a partition is looked at again each time one of its inputs flips, so in a diamond the later
  // flip still reaches its reasons. It terminates: lineage is acyclic and only flips push work.
  const work = [...new Set(refs)];
  // Only a corrupt log (lineage with a cycle) could keep this going: bounded so that replay never hangs on one.
  let budget = 16 * (work.length + 16);
  while (work.length > 0 && budget-- > 0) {
    const ref = work.pop()!;
    const p = next.partitions.get(ref);
    if (!p) continue;
    const reasons = staleReasons(next, ref, (r) => isStale(next.partitions.get(r)));
    if (sameReasons(reasons, p.stale_reasons)) continue;
    const flipped = (reasons.length > 0) !== (p.stale_reasons.length > 0);
    next = put(next, withPartition(p, { stale_reasons: reasons }));
    if (flipped) work.push(...currentConsumers(next, p.build_id));
  }
  return next;
}

/** Every partition's reasons computed afresh, inputs first (lineage is acyclic: a build consumes older builds). */
export function staleFromScratch(state: BuildState): Map<string, string[]> {
  const memo = new Map<string, string[]>();
  const visit = (ref: string): string[] => {
    const known = memo.get(ref);
    if (known) return known;
    memo.set(ref, []); // a cycle cannot happen; this only guards against a corrupt log
    const reasons = staleReasons(state, ref, (r) => visit(r).length > 0);
    memo.set(ref, reasons);
    return reasons;
  };
  for (const ref of state.partitions.keys()) visit(ref);
  return memo;
}

function sameReasons(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((r, i) => r === b[i]);
}
