/**
 * Reads of builds, lineage and taints. Each is bounded: a partition's history is a range of `build_history`
 * (O(log n + page)), its downstream a range of `consumers`, a lineage tree stops at a depth and a node count.
 */
import type { BuildView, LineageNode, PartitionDetailView, TaintView } from '../api/partitions-change.js';
import type { Page } from '../api/page.js';
import type { BuildRecord, BuildState, TaintRecord } from '../state/build-state.js';
import { buildIsTainted, buildLineage, historyKey } from '../state/build-state.js';
import { consumersPage } from '../state/staleness.js';

const iso = (ms: number): string => new Date(ms).toISOString();



export interface DetailQuery {
  builds_offset: number;
  builds_limit: number;
  downstream_limit: number;
}

/**
 * Most inputs a build's view names, and stale reasons a partition's: a fan-in of fifty thousand inputs made a detail
 * of 6 MB (its current build and each build of its history listing them all).
 */
export const BUILD_INPUTS_SHOWN = 100;

export function buildView(state: BuildState, b: BuildRecord): BuildView {
  const { job_label, inputs } = buildLineage(state, b);
  return {
    build_id: b.build_id,
    job_run_id: b.job_run_id,
    job_label,
    built_at: iso(b.built_at),
    inputs: inputs.slice(0, BUILD_INPUTS_SHOWN).map((i) => ({ partition_ref: i.partition_ref, build_id: i.build_id })),
    inputs_total: inputs.length,
  };
}

/** Undefined for a ref never seen. */
export function partitionDetail(state: BuildState, ref: string, q: DetailQuery): PartitionDetailView | undefined {
  const p = state.partitions.get(ref);
  if (!p) return undefined;
  const current = p.build_id ? state.builds.get(p.build_id) : undefined;
  // The history is the key range [ref\0, ref\x01): rank arithmetic gives its size and a page without a walk.
  const start = state.build_history.rank(historyKey(ref, 0));
  const end = state.build_history.rank(`${ref}\u0001`);
  const total = end - start;
  const builds: BuildView[] = [];
  for (let i = 0; i < q.builds_limit && q.builds_offset + i < total; i++) {
    const entry = state.build_history.at(end - 1 - q.builds_offset - i);
    const b = entry && state.builds.get(entry[1]);
    if (b) builds.push(buildView(state, b));
  }
  const downstream = consumersPage(state, current?.build_id ?? '', 0, q.downstream_limit);
  return {
    partition_ref: p.ref,
    status: p.status,
    stale: p.stale_reasons.length > 0,
    stale_reasons: p.stale_reasons.slice(0, BUILD_INPUTS_SHOWN),
    stale_reasons_total: p.stale_reasons.length,
    build_tainted: buildIsTainted(p),
    rebuild_failed: (p.rebuild_failed_event_id ?? 0) > 0,
    current_build: current ? buildView(state, current) : null,
    builds,
    builds_total: total,
    downstream: downstream.refs,
    downstream_total: downstream.total,
    job_run_id: p.job_run_id,
    created_at: iso(p.created_at),
    updated_at: iso(p.updated_at),
  };
}


/** Most nodes one lineage answer holds. */
export const LINEAGE_MAX_NODES = 500;

/**
 * Downstream, how many of a partition's builds before its current one are searched for what consumed them: the
 * partitions stale because it was rebuilt since (a consumer's current build took one build of each input, so each is
 * under one of them). Bounded so that a partition rebuilt daily for years costs a lineage what 16 builds do; what
 * consumed an older build than those has been rebuilt since, or is stale for a long time already.
 */
export const EARLIER_BUILDS_SEARCHED = 16;

/**
 * The tree of what a partition's current build consumed (upstream, following each build's recorded inputs), or of
 * what consumed it (downstream, following current builds: the consumers of its current build, then those of its
 * builds before, which are stale since it was rebuilt, `rebuilt_since`), to `depth` levels and at most
 * LINEAGE_MAX_NODES nodes. Filled breadth first: every node of a level before any of the next, so a build's own
 * inputs are all shown before their inputs are (depth first, a fan-in's first input and its whole tree took the
 * nodes, its other inputs left out).
 */
export function lineage(state: BuildState, ref: string, direction: 'upstream' | 'downstream', depth: number): LineageNode | undefined {
  const root = state.partitions.get(ref);
  if (!root) return undefined;
  let budget = LINEAGE_MAX_NODES;
  // `rebuilt_since`: upstream, the input was rebuilt since its consumer's build took it; downstream, the consumer took
  // an earlier build of its parent than the parent's current one.
  const node = (partition_ref: string, build_id: string | null, rebuilt_since: boolean): LineageNode => {
    budget--;
    const p = state.partitions.get(partition_ref);
    return {
      partition_ref,
      build_id,
      status: p?.status ?? 'absent',
      stale: (p?.stale_reasons.length ?? 0) > 0,
      rebuilt_since,
      children: [],
      children_total: 0,
      truncated: false,
    };
  };
  type Next = { refs: Array<[ref: string, build: string | null, rebuiltSince: boolean]>; total: number };
  /** The first `limit` of a node's inputs (or consumers), and how many it has. */
  const next = (n: LineageNode, build_id: string, limit: number): Next => {
    if (direction === 'upstream') {
      const b = state.builds.get(build_id);
      const inputs = b ? buildLineage(state, b).inputs : [];
      const refs = inputs.slice(0, limit).map((i): Next['refs'][number] => {
        const p = state.partitions.get(i.partition_ref);
        return [i.partition_ref, i.build_id, p !== undefined && p.build_id !== i.build_id];
      });
      return { refs, total: inputs.length };
    }
    const out: Next = { refs: [], total: 0 };
    const take = (id: string, earlier: boolean): void => {
      const page = consumersPage(state, id, 0, limit - out.refs.length);
      for (const c of page.refs) out.refs.push([c, state.partitions.get(c)?.build_id || null, earlier]);
      out.total += page.total;
    };
    take(build_id, false);
    for (const id of earlierBuilds(state, n.partition_ref, build_id, EARLIER_BUILDS_SEARCHED)) take(id, true);
    return out;
  };
  const top = node(ref, root.build_id || null, false);
  let level: LineageNode[] = [top];
  for (let at = 0; level.length > 0; at++) {
    const below: LineageNode[] = [];
    for (const n of level) {
      if (n.build_id === null) continue;
      const { refs, total } = next(n, n.build_id, at >= depth ? 0 : budget);
      n.children_total = total;
      for (const [childRef, childBuild, rebuiltSince] of refs) {
        const child = node(childRef, childBuild, rebuiltSince);
        n.children.push(child);
        below.push(child);
      }
      // The depth or the node budget ran out here.
      n.truncated = n.children.length < total;
    }
    level = below;
  }
  return top;
}

/** The ids of `ref`'s builds before `current`, newest first, at most `max` (its history: `build_history`'s range). */
function earlierBuilds(state: BuildState, ref: string, current: string, max: number): string[] {
  const start = state.build_history.rank(historyKey(ref, 0));
  const out: string[] = [];
  for (let i = state.build_history.rank(`${ref}\u0001`) - 1; i >= start && out.length < max; i--) {
    const id = state.build_history.at(i)?.[1];
    if (id !== undefined && id !== current) out.push(id);
  }
  return out;
}


/**
 * The detail (`page` given: a page of its refs), or a list item (the first `TAINT_LIST_REFS` refs); both with how
 * many of all its refs are still tainted, which the fold keeps.
 */
export function taintView(t: TaintRecord, page?: { offset: number; limit: number }): TaintView {
  return {
    taint_id: t.taint_id,
    reason: t.reason,
    downstream: t.downstream,
    created_at: iso(t.created_at),
    partitions: page ? t.partitions.slice(page.offset, page.offset + page.limit) : t.partitions.slice(0, TAINT_LIST_REFS),
    partitions_total: t.partitions.length,
    // Tainted until a new build replaces it: also while it is rebuilt, and after a rebuild that failed or was canceled.
    // Kept by the fold as partitions flip, so no read walks the refs, in a list or not.
    still_tainted: t.still_tainted,
  };
}

/** Taints in creation order (`reverse`: newest first), each with its first refs. */
export function listTaints(state: BuildState, q: { offset: number; limit: number; reverse: boolean }): Page<TaintView> {
  const entries = q.reverse ? state.taint_order.sliceReverse(q.offset, q.limit) : state.taint_order.slice(q.offset, q.limit);
  const data: TaintView[] = [];
  for (const [, id] of entries) {
    const t = state.taints.get(id);
    if (t) data.push(taintView(t));
  }
  return { data, total: state.taint_order.size, offset: q.offset, limit: q.limit };
}

/** How many refs a taint shows in a list item (the detail shows all). */
export const TAINT_LIST_REFS = 20;
