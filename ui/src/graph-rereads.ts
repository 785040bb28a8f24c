/**
 * Which partitions of a drawn graph a batch of live events may change, so that the graph page reads those again
 * (in one lookup) rather than every node after every batch.
 *
 * A partition's status moves when a run of it is queued (building), ends (live, failed, canceled: the partitions
 * whose current run it is), when it is tainted, and when the want asking for it ends while it only waits (a retry
 * backoff, missing inputs: `building` turns `canceled`). Its staleness moves when an input's does or when an input is
 * rebuilt, tainted or being rebuilt: so whatever a change reaches downstream within the graph is read too. What
 * changes upstream of a ref the graph does not expand (a QUERY input outside the MATERIALIZE closure) is not in the
 * graph: a change outside the graph reads those refs and what they reach. A changed job definition may change the
 * graph itself: that is `'graph'`, analyze and read it all again.
 */
import type { EventView } from '../../lib/api/views.js';

export interface GraphShape {
  /** Every ref of the graph, drawn or not. */
  refs: ReadonlySet<string>;
  /** The refs that consume each ref, within the graph. */
  consumers: ReadonlyMap<string, readonly string[]>;
  /** Refs no task of the graph builds (QUERY inputs it does not expand): what is upstream of them is not in it. */
  open: readonly string[];
}

/** A partition as the page last read it (absent: never seen). */
export interface SeenPartition {
  status: string;
  job_run_id: string;
}

/**
 * The refs to read again after `events`, or `'graph'`. `runs` holds the graph's refs of the runs queued while the page
 * was open (a run's end names only its id, and the page may not have read its queued partitions yet): this adds the
 * runs queued in `events` to it.
 */
export function rereadsOf(
  events: readonly EventView[],
  shape: GraphShape,
  seen: ReadonlyMap<string, SeenPartition>,
  runs: Map<string, readonly string[]>,
): Set<string> | 'graph' {
  const touched = new Set<string>();
  let outside = false;
  const touch = (refs: readonly string[]): void => {
    for (const ref of refs) {
      if (shape.refs.has(ref)) touched.add(ref);
      else outside = true;
    }
  };
  const ofRun = (id: string): void => {
    let known = false;
    for (const ref of runs.get(id) ?? []) {
      touched.add(ref);
      known = true;
    }
    for (const [ref, p] of seen) {
      if (p.job_run_id !== id) continue;
      touched.add(ref);
      known = true;
    }
    // A run of none of the graph's refs ended: a partition outside it moved.
    if (!known) outside = true;
  };
  // A want that ends sets its waiting partitions canceled; which want waits on which is not in the events.
  const waiting = (): void => {
    for (const [ref, p] of seen) if (p.status === 'building') touched.add(ref);
  };
  for (const e of events) {
    switch (e.type) {
      case 'job_run_queued': {
        const mine = e.job_run_queued.config.outputs.filter((ref) => shape.refs.has(ref));
        if (mine.length > 0) runs.set(e.job_run_queued.job_run_id, mine);
        touch(e.job_run_queued.config.outputs);
        break;
      }
      case 'job_run_succeeded':
        touch(e.job_run_succeeded.builds.map((b) => b.partition_ref));
        ofRun(e.job_run_succeeded.job_run_id);
        runs.delete(e.job_run_succeeded.job_run_id);
        break;
      case 'job_run_failed':
      case 'job_run_canceled':
      case 'job_run_dep_missed': {
        const id = e.type === 'job_run_failed' ? e.job_run_failed.job_run_id : e.type === 'job_run_canceled' ? e.job_run_canceled.job_run_id : e.job_run_dep_missed.job_run_id;
        ofRun(id);
        runs.delete(id);
        waiting();
        break;
      }
      case 'want_canceled':
        waiting();
        break;
      case 'partition_tainted':
        touch([e.partition_tainted.partition_ref]);
        break;
      case 'taint_created':
        touch(e.taint_created.partitions);
        break;
      case 'job_definitions_changed':
        return 'graph';
      default:
        break;
    }
  }
  if (outside) for (const ref of shape.open) touched.add(ref);
  return downstreamOf(touched, shape.consumers);
}

/** `refs` and every ref that consumes one of them, transitively, within the graph. */
function downstreamOf(refs: Set<string>, consumers: ReadonlyMap<string, readonly string[]>): Set<string> {
  const todo = [...refs];
  while (todo.length > 0) {
    for (const next of consumers.get(todo.pop()!) ?? []) {
      if (refs.has(next)) continue;
      refs.add(next);
      todo.push(next);
    }
  }
  return refs;
}
