/**
 * A want's tree of derived wants, breadth first, at most `limit` of them: the cost is the wants listed (each
 * record holds its children's ids), never the tree's size or the history's.
 */
import { listItems, listLength } from '../state/append-list.js';
import { WANT_TREE_PARTITIONS_SHOWN, type WantTreeNode, type WantTreeReply } from '../api/want-tree.js';
import type { BuildState, WantRecord } from '../state/build-state.js';

function node(w: WantRecord, parent: string | null, depth: number): WantTreeNode {
  return {
    want_id: w.want_id,
    parent_want_id: parent,
    depth,
    status: w.status,
    source: w.source,
    partitions: w.partitions.slice(0, WANT_TREE_PARTITIONS_SHOWN),
    partitions_total: w.partitions.length,
    job_runs_total: listLength(w.job_run_ids),
    children_total: listLength(w.child_want_ids),
  };
}

/** Undefined for an unknown want. Children that retention pruned are not listed (they are still counted). */
export function wantTree(state: BuildState, wantId: string, limit: number): WantTreeReply | undefined {
  const root = state.wants.get(wantId);
  if (!root) return undefined;
  const nodes: WantTreeNode[] = [node(root, null, 0)];
  const records: WantRecord[] = [root];
  let truncated = false;
  for (let i = 0; i < records.length && !truncated; i++) {
    const parent = records[i]!;
    for (const childId of listItems(parent.child_want_ids)) {
      const child = state.wants.get(childId);
      if (!child) continue;
      if (nodes.length >= limit) {
        truncated = true;
        break;
      }
      nodes.push(node(child, parent.want_id, nodes[i]!.depth + 1));
      records.push(child);
    }
  }
  return { want_id: wantId, nodes, truncated, limit };
}
