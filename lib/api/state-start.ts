/** Where a server's state came from at start, in words: server.log's `State:` line and `platform status` say it alike. */
import type { StateStart } from './server-status.js';
import { groupDigits } from '../group-digits.js';

/**
 * `from the snapshot at event 1,200, then 3 events of the log replayed`, or `12 events of the log replayed (no
 * snapshot used: damaged)`: a start that could not use its snapshot says why, as that is why it took longer.
 */
export function stateStartWords(start: StateStart): string {
  const from = start.source === 'snapshot' ? 'the snapshot' : start.source === 'compaction_base' ? 'the compaction base' : undefined;
  const replayed = `${groupDigits(start.events_replayed)} event${start.events_replayed === 1 ? '' : 's'} of the log replayed`;
  // A daemon of before the field says no reason.
  const why = start.snapshot_unused ?? undefined;
  const unused = why === undefined ? 'no snapshot used' : `no snapshot used: ${why === 'missing' ? 'there is none' : why}`;
  // After an upgrade: the image of the version before, its records read and its indexes built again.
  if (start.source === 'snapshot' && start.snapshot_other_version === true) {
    return `from the snapshot's records (written by another version of platform) at event ${groupDigits(start.at_event)}, then ${replayed}`;
  }
  if (start.source === 'snapshot') return `from ${from}${deltaWords(start)} at event ${groupDigits(start.at_event)}, then ${replayed}`;
  return from ? `from ${from} at event ${groupDigits(start.at_event)}, then ${replayed} (${unused})` : `${replayed} (${unused})`;
}

/** ` and its delta` (the state at the delta's event), or ` (its delta not used: damaged)`; nothing without one. */
function deltaWords(start: StateStart): string {
  // A daemon of before the field has none.
  const delta = start.snapshot_delta ?? null;
  if (delta === null) return '';
  if (delta.at_event !== null) return ` (at event ${groupDigits(delta.image_at_event)}) and its delta`;
  return ` (its delta not used: ${delta.unused ?? 'no reason given'})`;
}
