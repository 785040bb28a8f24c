/** Pages of build state as views. Each costs O(log n + page) through the state's indexes, never a scan of history. */
import { listArray, listLength, listSlice } from '../state/append-list.js';
import type { Page } from '../api/page.js';
import type { PartitionLookupReply } from '../api/partition-lookup.js';
import type { JobRunView, PartitionView, WantView } from '../api/views.js';
import type { BuildState, JobRunStatus, PartitionStatus, WantRecord, WantStatus } from '../state/build-state.js';
import type { OrderedMap } from '../state/ordered-map.js';
import { RUN_ITEM_SHOWN, WANT_ITEM_SHOWN, jobRunView, partitionView, wantView } from './views.js';

export interface PageQuery {
  offset: number;
  limit: number;
  /** Newest first. */
  reverse: boolean;
}

function pageOf<K, V, T>(index: OrderedMap<K, V>, q: PageQuery, render: (entry: [K, V]) => T | undefined): Page<T> {
  const entries = q.reverse ? index.sliceReverse(q.offset, q.limit) : index.slice(q.offset, q.limit);
  const data: T[] = [];
  for (const entry of entries) {
    const item = render(entry);
    if (item !== undefined) data.push(item);
  }
  return { data, total: index.size, offset: q.offset, limit: q.limit };
}

export function listWants(state: BuildState, q: PageQuery & { status?: WantStatus }): Page<WantView> {
  const index = q.status ? state.wants_by_status[q.status] : state.want_order;
  return pageOf(index, q, ([, id]) => {
    const w = state.wants.get(id);
    return w && wantView(state, w, WANT_ITEM_SHOWN);
  });
}

/**
 * Job runs, oldest first. Of one want (`want`): its runs in the order it got them, a page of its list (with a
 * status, the runs of that want in it: a look at each of the want's runs, never at the log's).
 */
export function listJobRuns(state: BuildState, q: PageQuery & { status?: JobRunStatus; want?: WantRecord }): Page<JobRunView> {
  const view = (id: string): JobRunView | undefined => {
    const r = state.job_runs.get(id);
    return r && jobRunView(state, r, RUN_ITEM_SHOWN);
  };
  if (q.want) {
    const status = q.status;
    // Without a status a page is a slice of the want's list (its cost, not the list's); with one, each run is looked at.
    const ids = status ? listArray(q.want.job_run_ids).filter((id) => state.job_runs.get(id)?.status === status) : undefined;
    const total = ids ? ids.length : listLength(q.want.job_run_ids);
    const [lo, hi] = pageBounds(0, total, q);
    const page = ids ? ids.slice(lo, hi) : listSlice(q.want.job_run_ids, lo, hi);
    if (q.reverse) page.reverse();
    const data = page.map(view).filter((r): r is JobRunView => r !== undefined);
    return { data, total, offset: q.offset, limit: q.limit };
  }
  const index = q.status ? state.job_runs_by_status[q.status] : state.job_run_order;
  return pageOf(index, q, ([, id]) => view(id));
}

/**
 * Partitions sorted by ref. With a prefix the page is a range scan from the prefix's first key; `total` is then
 * the count in that range, found by rank arithmetic rather than by walking it.
 */
export function listPartitions(
  state: BuildState,
  q: PageQuery & { status?: PartitionStatus; prefix?: string },
): Page<PartitionView> {
  const index: OrderedMap<string, unknown> = q.status ? state.partitions_by_status[q.status] : state.partitions;
  const prefix = q.prefix ?? '';
  const start = prefix ? index.rank(prefix) : 0;
  const end = prefix ? index.rank(prefixEnd(prefix)) : index.size;
  const total = end - start;
  const [lo, hi] = pageBounds(start, end, q);
  const entries = index.slice(lo, hi - lo);
  if (q.reverse) entries.reverse();
  const data: PartitionView[] = [];
  for (const [ref] of entries) {
    const p = state.partitions.get(ref);
    if (p) data.push(partitionView(p));
  }
  return { data, total, offset: q.offset, limit: q.limit };
}

/** The partitions of `refs`, each once in the order given, and the refs never seen: a lookup each, O(k log n). */
export function lookupPartitions(state: BuildState, refs: readonly string[]): PartitionLookupReply {
  const data: PartitionView[] = [];
  const unknown: string[] = [];
  const asked = new Set<string>();
  for (const ref of refs) {
    if (asked.has(ref)) continue;
    asked.add(ref);
    const p = state.partitions.get(ref);
    if (p) data.push(partitionView(p));
    else unknown.push(ref);
  }
  return { data, unknown };
}

/** Where a page of the entries `start..end-1` lies (`lo..hi-1`; empty past the end), newest first or oldest first. */
function pageBounds(start: number, end: number, q: PageQuery): [number, number] {
  const hi = q.reverse ? end - q.offset : Math.min(end, start + q.offset + q.limit);
  const lo = q.reverse ? Math.max(start, hi - q.limit) : start + q.offset;
  return [lo, Math.max(lo, hi)];
}

/** The smallest string greater than every string that starts with `prefix`. */
function prefixEnd(prefix: string): string {
  return prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
}
