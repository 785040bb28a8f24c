/** The schedules as the API shows them: the graph's definitions with what the log recorded of their ticks. */
import type { Page } from '../api/page.js';
import type { ScheduleView } from '../api/schedules.js';
import type { ScheduleDefinition } from '../graph/schedule-definition.js';
import { nextTick, tickRefs } from '../graph/schedule-time.js';
import type { BuildState, ScheduleRecord, WantStatus } from '../state/build-state.js';
import type { PageQuery } from './queries.js';

const iso = (ms: number | undefined): string | null => (ms === undefined ? null : new Date(ms).toISOString());

/** Wants of a tick that count as its failure. */
const FAILED: ReadonlySet<WantStatus> = new Set(['failed', 'upstream_failed']);

/**
 * The latest tick's want's status, kept in the record (its recent ticks). None only for a record loaded from a
 * compaction base written before the record kept them (format 6 or 7) that no longer held that want (snapshot.ts).
 */
function lastWantStatus(r: ScheduleRecord | undefined): WantStatus | null {
  if (!r?.want_id) return null;
  const kept = r.recent[r.recent.length - 1];
  return kept?.want_id === r.want_id ? kept.status : null;
}

/** The view of one schedule: an O(log n) read of its record, whatever its history. */
export function scheduleView(state: BuildState, s: ScheduleDefinition, now: number): ScheduleView {
  const last = state.schedules.get(s.name);
  const paused = last?.paused ?? false;
  const next = paused ? undefined : nextTick(s, now);
  return {
    name: s.name,
    cron: s.cron,
    timezone: s.timezone,
    partitions: [...s.partitions],
    offset: s.offset,
    priority: s.priority,
    ttl_seconds: s.ttl_seconds,
    sla_seconds: s.sla_seconds,
    catchup: s.catchup,
    since: last?.since ? iso(last.since) : null,
    last_tick: last?.tick ? iso(last.tick) : null,
    last_want_id: last?.want_id || null,
    last_want_status: lastWantStatus(last),
    recent_ticks: last?.recent.length ?? 0,
    recent_failed: last?.recent.filter((x) => FAILED.has(x.status)).length ?? 0,
    skipped_ticks: last?.skipped ?? 0,
    skipped_ticks_at_least: last?.skipped_at_least ?? false,
    last_skipped_tick: last?.skipped_tick ? iso(last.skipped_tick) : null,
    paused,
    paused_at: paused ? iso(last!.paused_at) : null,
    paused_reason: paused && last!.paused_reason !== '' ? last!.paused_reason : null,
    next_tick: iso(next),
    next_partitions: next === undefined ? [] : tickRefs(s, next),
  };
}

/** In the order platform.json lists them. */
export function listSchedules(state: BuildState, schedules: readonly ScheduleDefinition[], q: PageQuery, now: number): Page<ScheduleView> {
  const ordered = q.reverse ? [...schedules].reverse() : schedules;
  return {
    data: ordered.slice(q.offset, q.offset + q.limit).map((s) => scheduleView(state, s, now)),
    total: schedules.length,
    offset: q.offset,
    limit: q.limit,
  };
}
