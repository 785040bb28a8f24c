/** `GET /api/wants/:id/tree`: a want and the wants derived from it, as one bounded read. */
import type { WantStatus } from '../state/build-state.js';

/** How many of a tree's wants a read lists when it asks for no `limit`, and the most it may ask for. */
export const WANT_TREE_DEFAULT = 200;
export const WANT_TREE_MAX = 1000;
/** The partitions a node names; `partitions_total` counts them all. */
export const WANT_TREE_PARTITIONS_SHOWN = 3;

export interface WantTreeNode {
  want_id: string;
  /** Null for the want the tree was asked of, whatever its own parent. */
  parent_want_id: string | null;
  /** 0 for the want asked of, 1 for the wants derived from it, and so on. */
  depth: number;
  status: WantStatus;
  source: string;
  partitions: string[];
  partitions_total: number;
  job_runs_total: number;
  /** Its derived wants, listed here or not. */
  children_total: number;
}

export interface WantTreeReply {
  want_id: string;
  /** Breadth first: the want, then the wants derived from it level by level, each after its parent. */
  nodes: WantTreeNode[];
  /** Wants of the tree past `limit` were left out. */
  truncated: boolean;
  limit: number;
}
