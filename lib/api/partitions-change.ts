/** Builds, lineage and taints as the HTTP API shows them (see docs/partitions-that-change.md). */
import type { PartitionStatus } from './statuses.js';

export interface BuildView {
  build_id: string;
  job_run_id: string;
  job_label: string;
  built_at: string;
  /** The builds of its inputs it consumed: the first 100; `inputs_total` counts them all. */
  inputs: Array<{ partition_ref: string; build_id: string }>;
  inputs_total: number;
}

export interface PartitionDetailView {
  partition_ref: string;
  status: PartitionStatus;
  stale: boolean;
  /** Why it is stale: the first 100 (one an input at most); `stale_reasons_total` counts them all. */
  stale_reasons: string[];
  stale_reasons_total: number;
  /**
   * Its current build was tainted and no build has replaced it yet: while it is rebuilt, and after that rebuild
   * failed or was canceled (its status then says so, and what consumed it is stale).
   */
  build_tainted: boolean;
  /**
   * Its latest run was a rebuild that failed for good: its build is kept (its status `live` or `tainted`, `job_run_id`
   * the failed run), and the wants that needed the rebuild failed. False again once a run, a taint or a build comes.
   */
  rebuild_failed: boolean;
  /** The build that made it live last; null if it never was. */
  current_build: BuildView | null;
  /** Its builds, newest first: `builds_limit` of them from `builds_offset`. */
  builds: BuildView[];
  builds_total: number;
  /** Refs whose current build consumed this partition's current build (at most `downstream_limit`). */
  downstream: string[];
  downstream_total: number;
  job_run_id: string;
  created_at: string;
  updated_at: string;
}

export interface LineageNode {
  partition_ref: string;
  /** Upstream: the build this node's consumer consumed; downstream and the root: the current build. */
  build_id: string | null;
  status: PartitionStatus | 'absent';
  stale: boolean;
  /**
   * Upstream: the input has been rebuilt since its consumer's build took this one. Downstream: this consumer's build
   * took an earlier build of its parent than the parent's current one (the parent was rebuilt since: it is stale).
   */
  rebuilt_since: boolean;
  children: LineageNode[];
  /**
   * How many inputs (upstream) or consumers (downstream: of its current build, then of the 16 builds before it,
   * EARLIER_BUILDS_SEARCHED) it has: `children` lists them unless `truncated`.
   */
  children_total: number;
  /** Children left out: the depth or the node budget ran out here. */
  truncated: boolean;
}

/** A taint's partitions in its detail come a page at a time: a downstream taint may hold a hundred thousand. */
export const TAINT_PARTITIONS_DEFAULT = 1000;
export const TAINT_PARTITIONS_MAX = 10_000;

export interface TaintView {
  taint_id: string;
  reason: string;
  downstream: boolean;
  created_at: string;
  /** The refs it tainted (at most `partitions_limit` of them in lists). */
  partitions: string[];
  partitions_total: number;
  /** Of those, how many are still tainted (not rebuilt since), in lists too: the fold keeps the count. */
  still_tainted: number;
}

export interface LineageReply {
  direction: 'upstream' | 'downstream';
  depth: number;
  /** Most nodes one answer holds; a node whose children were left out says `truncated`. */
  max_nodes: number;
  root: LineageNode;
}

/** `POST /api/taints`. */
export interface CreateTaintBody {
  partitions: string[];
  reason?: string;
  /** Taint too every partition whose current build (transitively) consumed a tainted build. */
  downstream?: boolean;
}

/** Its reply: the taint and every ref it tainted, downstream ones included. */
export interface TaintReply {
  taint_id: string;
  /** The refs it tainted, downstream ones included (over HTTP the first TAINT_PARTITIONS_DEFAULT). */
  partitions: string[];
  partitions_total: number;
}
