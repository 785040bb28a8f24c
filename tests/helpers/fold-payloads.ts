/** Hand-written transitions: payloads folded with the next ids and a timestamp of T0 + id seconds. */
import type { BuildEvent, EventPayload } from '../../lib/events/build-event.js';
import type { BuildState } from '../../lib/state/build-state.js';
import { reduce } from '../../lib/state/reduce.js';

export const T0 = 1_767_000_000_000;

export function apply(state: BuildState, ...payloads: EventPayload[]): BuildState {
  let s = state;
  for (const p of payloads) {
    const id = s.last_event_id + 1;
    s = reduce(s, { event_id: id, timestamp: T0 + id * 1000, ...p } as BuildEvent);
  }
  return s;
}
