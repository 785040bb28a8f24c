/**
 * A large want (a backfill of ten thousand dates, say) is scheduled a window at a time: its partitions are
 * released into scheduling from the first, and only the released ones that are not settled yet (live, failed,
 * skipped: see want-status.ts) are "open". A step looks at a want's open partitions, never at its whole range, so
 * what a step costs follows the window, and a backfill's queued runs never outnumber what its cap lets start soon.
 *
 * The open set is an index of the state (`window_open`), kept by the fold as partitions move: O(1) per move.
 */
import { withState, type BuildState, type WantRecord } from './build-state.js';
import type { PartitionCategory } from './want-status.js';

/** The window of a want without a cap: enough to keep any machine's runs busy, small enough to scan each step. */
export const UNCAPPED_WINDOW = 256;

/** How many partitions of a want may be open at once; 0 when the want is small enough to need no window. */
export function windowFor(partitionCount: number, maxConcurrentJobRuns: number): number {
  // Twice the cap: a run ready to start as each one ends, and the inputs of the next few being asked for.
  const size = maxConcurrentJobRuns > 0 ? Math.min(UNCAPPED_WINDOW, 2 * maxConcurrentJobRuns) : UNCAPPED_WINDOW;
  return partitionCount > size ? size : 0;
}

export const openKey = (wantId: string, ref: string): string => `${wantId}\0${ref}`;

/** Settled for a want: nothing more will be done for the partition on its behalf. */
export function settled(category: PartitionCategory): boolean {
  return category === 'live' || category === 'failed' || category === 'skipped';
}

/** The open partitions of a windowed want, in ref order: a range of the index, at most about its window. */
export function openRefs(state: Pick<BuildState, 'window_open'>, wantId: string): string[] {
  const prefix = openKey(wantId, '');
  const refs: string[] = [];
  for (const [key] of state.window_open.entriesFrom(prefix)) {
    if (!key.startsWith(prefix)) break;
    refs.push(key.slice(prefix.length));
  }
  return refs;
}

/** How many partitions of a windowed want are open: two ranks of the index, O(log n), nothing walked. */
export function openCount(state: Pick<BuildState, 'window_open'>, wantId: string): number {
  // Every open key of the want lies between its prefix and the same with the next code unit after the separator.
  return state.window_open.rank(`${wantId}\u0001`) - state.window_open.rank(openKey(wantId, ''));
}

/** The partitions a step schedules for a want: all of a small want's, a windowed want's open ones. */
export function schedulableRefs(state: Pick<BuildState, 'window_open'>, want: WantRecord): readonly string[] {
  return want.window > 0 ? openRefs(state, want.want_id) : want.partitions;
}

/** Whether a step may schedule `ref` for the want now (a windowed want's ref must be open). */
export function isSchedulable(state: Pick<BuildState, 'window_open'>, want: WantRecord, ref: string): boolean {
  return want.window === 0 || state.window_open.has(openKey(want.want_id, ref));
}

/** Drops a want's open partitions (it ended): O(its window). */
export function closeWindow(state: BuildState, wantId: string): BuildState {
  let open = state.window_open;
  for (const ref of openRefs(state, wantId)) open = open.delete(openKey(wantId, ref));
  return open === state.window_open ? state : withState(state, { window_open: open });
}
