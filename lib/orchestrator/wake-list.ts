/**
 * Which wants a deadline is for: a retry falling due wakes the wants on the failed run's outputs, a ttl its want. A deadline step schedules these, not every active want, so a hundred thousand
 * wants with ttls cost a step per due time and the wants due at it, never a scan.
 */
import { OrderedMap, compareNumbers } from '../state/ordered-map.js';
import { addCandidate, mergeCandidates, type Candidates } from './candidates.js';

/** [epoch ms, want id, its ref, or null for the whole want]. */
export type Wake = readonly [number, string, string | null];

export class WakeList {
  private byTime: OrderedMap<number, Candidates> = OrderedMap.empty(compareNumbers);

  add(wakes: readonly Wake[]): void {
    for (const [at, wantId, ref] of wakes) {
      const c = this.byTime.get(at) ?? new Map();
      addCandidate(c, wantId, ref);
      this.byTime = this.byTime.set(at, c);
    }
  }

  /** The wants whose time has come (removed from the list), merged into `into`. */
  takeDue(now: number, into: Candidates): void {
    for (;;) {
      const first = this.byTime.at(0);
      if (!first || first[0] > now) return;
      mergeCandidates(into, first[1]);
      this.byTime = this.byTime.delete(first[0]);
    }
  }

  get size(): number {
    return this.byTime.size;
  }
}
