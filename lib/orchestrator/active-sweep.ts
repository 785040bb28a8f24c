/**
 * The safety net and the start-up pass, in slices: a cursor over the active wants in creation order. A tick looks
 * at the next slice (wrapping around at the end), so anything a narrow step missed is looked at again within
 * active / slice ticks, and no tick costs more than a slice however many wants wait. A pass (start-up, a graph
 * edit, a step that failed) walks every active want from the first, a slice a step, back to back, so commands and
 * job-run news are taken between slices instead of waiting behind one long step.
 */
import { ACTIVE_WANT_STATUSES, type BuildState } from '../state/build-state.js';

/**
 * Wants a pass's step looks at. Passes are rare (start-up, a graph edit, a failed step) and want to be over soon:
 * a slice of waiting wants costs a step ~5-10 ms here (each want decoded from the state's image and planned).
 */
export const SWEEP_SLICE = 500;

/**
 * Wants a tick's step looks at: the safety net runs every tick of an idle daemon, so its slice is what a read
 * waits behind. 500 held the loop ~10 ms every tick with 100,000 waiting wants, the p99 of every read; 100 holds it
 * ~2 ms, and a lap over 100,000 active wants takes ~8 minutes (10,000: 50 s).
 */
export const TICK_SWEEP_SLICE = 100;

export interface SweepCursor {
  /** The creation seq the next slice starts at. */
  readonly next: number;
  /** A pass is under way: slices follow back to back until it reaches the end. */
  readonly passing: boolean;
}

export const SWEEP_START: SweepCursor = { next: 0, passing: false };

/** A pass from the first active want. */
export function startPass(): SweepCursor {
  return { next: 0, passing: true };
}

export interface SweepSlice {
  /** Active want ids in creation order. */
  wantIds: string[];
  cursor: SweepCursor;
}

/**
 * The next `limit` active wants from the cursor (a pass's slice, or a tick's smaller one) (each status index is walked from the cursor's seq, so the cost is
 * the slice, not the active wants). At the end a pass is over and the cursor starts again from the first.
 */
export function sweepSlice(
  state: Pick<BuildState, 'wants_by_status'>,
  cursor: SweepCursor,
  limit = cursor.passing ? SWEEP_SLICE : TICK_SWEEP_SLICE,
): SweepSlice {
  const found: Array<[number, string]> = [];
  let more = false;
  for (const status of ACTIVE_WANT_STATUSES) {
    let taken = 0;
    for (const entry of state.wants_by_status[status].entriesFrom(cursor.next)) {
      if (taken++ >= limit) {
        more = true;
        break;
      }
      found.push(entry);
    }
  }
  found.sort((a, b) => a[0] - b[0]);
  const slice = found.slice(0, limit);
  const atEnd = !more && found.length <= limit;
  const next = atEnd ? 0 : slice[slice.length - 1]![0] + 1;
  return { wantIds: slice.map(([, id]) => id), cursor: { next, passing: cursor.passing && !atEnd } };
}
