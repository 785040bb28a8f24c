/**
 * Which live events can change what a taint's page shows. Its refs, reason and time never change; its count of
 * refs still tainted does, when one of them gets a new build (a run's success: `builds` names each output built)
 * or is tainted again (a later taint, or `partition_tainted` in logs from before taints had ids). A run queued or
 * failed does not: a tainted build stays tainted until a new build replaces it.
 *
 * Exactly when the page holds all of the taint's refs (a taint of up to 1,000, one page of them). A larger one's
 * refs would have to be read whole to decide (a downstream taint can hold 100,000: megabytes read to keep a count
 * current), so its page takes any build as a change instead, and reads at most every LARGE_TAINT_RELOAD_MS.
 */
import type { TaintView } from '../../lib/api/partitions-change.js';
import type { EventView } from '../../lib/api/views.js';
import { LARGE_TAINT_RELOAD_MS, MIN_RELOAD_MS } from '../../lib/api/dashboard-reads.js';

/** A taint as its page read it, with its refs as a set when the read holds all of them. */
export interface ShownTaint {
  view: TaintView;
  refs: ReadonlySet<string> | undefined;
}

export function shownTaint(view: TaintView): ShownTaint {
  return { view, refs: view.partitions.length >= view.partitions_total ? new Set(view.partitions) : undefined };
}

/** The refs whose taint the event may change; none for any other event. */
function retouched(e: EventView): readonly string[] {
  switch (e.type) {
    case 'job_run_succeeded':
      return e.job_run_succeeded.builds.map((b) => b.partition_ref);
    case 'taint_created':
      return e.taint_created.partitions;
    case 'partition_tainted':
      return [e.partition_tainted.partition_ref];
    default:
      return [];
  }
}

/** Whether the event may change the taint's page, given what it last read (undefined before its first read). */
export function changesTaint(e: EventView, last: ShownTaint | undefined): boolean {
  const refs = retouched(e);
  if (refs.length === 0) return false;
  // Before the first read, and for a taint larger than its page, the refs to compare with are not at hand.
  const mine = last?.refs;
  return mine === undefined || refs.some((r) => mine.has(r));
}

/** A page that reads at any build (it cannot tell which concern it) reads less often. */
export function taintReadGap(last: ShownTaint | undefined): number {
  return last !== undefined && last.refs === undefined ? LARGE_TAINT_RELOAD_MS : MIN_RELOAD_MS;
}
