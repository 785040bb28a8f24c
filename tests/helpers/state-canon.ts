/** A build state as plain arrays, for deep-equality assertions. */
import {
  JOB_RUN_STATUSES,
  PARTITION_STATUSES,
  WANT_STATUSES,
  type BuildState,
} from '../../lib/state/build-state.js';
import type { OrderedMap } from '../../lib/state/ordered-map.js';
import { namedMaps } from '../../lib/state/state-image.js';

export const entries = <K, V>(m: OrderedMap<K, V>): Array<[K, V]> => [...m.entries()];

/** Everything in a state as plain arrays: records and every index, so deep equality means the same state. */
export function canon(s: BuildState) {
  const byStatus = <S extends string, K, V>(statuses: readonly S[], index: Readonly<Record<S, OrderedMap<K, V>>>) =>
    Object.fromEntries(statuses.map((st) => [st, entries(index[st])]));
  return {
    last_event_id: s.last_event_id,
    wants: entries(s.wants),
    want_order: entries(s.want_order),
    wants_by_status: byStatus(WANT_STATUSES, s.wants_by_status),
    active_wants_by_ref: entries(s.active_wants_by_ref).map(([ref, set]) => [ref, entries(set)]),
    run_wants: entries(s.run_wants).map(([id, set]) => [id, entries(set)]),
    partitions: entries(s.partitions),
    partitions_by_status: byStatus(PARTITION_STATUSES, s.partitions_by_status),
    job_runs: entries(s.job_runs),
    job_run_order: entries(s.job_run_order),
    job_runs_by_status: byStatus(JOB_RUN_STATUSES, s.job_runs_by_status),
    queued_by_priority: entries(s.queued_by_priority),
    window_open: entries(s.window_open),
    backfills: entries(s.backfills),
    backfill_order: entries(s.backfill_order),
    schedules: entries(s.schedules),
    created: s.created,
    sizes: {
      wants: s.wants.size,
      partitions: s.partitions.size,
      job_runs: s.job_runs.size,
      active_refs: s.active_wants_by_ref.size,
    },
  };
}


/**
 * Every map of a state (state-image.ts names each, the status indexes' too) and its scalars, as plain arrays: what a
 * loaded image or delta must equal, map for map (`canon` leaves out builds, history, taints and the like).
 */
export function everyMap(s: BuildState): Record<string, unknown> {
  const out: Record<string, unknown> = { last_event_id: s.last_event_id, wants_sla_missed: s.wants_sla_missed, created: s.created };
  for (const [name, map, spec] of namedMaps(s)) {
    out[name] = spec.kind === 'sets' ? entries(map).map(([k, set]) => [k, entries(set as OrderedMap<unknown, unknown>)]) : entries(map);
  }
  return out;
}
