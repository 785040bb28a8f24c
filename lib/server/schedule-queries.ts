/** The schedules as the API shows them: the graph's definitions with what the log recorded of their ticks. */
import type { Page } from '../api/page.js';
import type { ScheduleView } from '../api/schedules.js';
import type { ScheduleDefinition } from '../graph/schedule-definition.js';
import { nextTick, tickRefs } from '../graph/schedule-time.js';
import type { BuildState } from '../state/build-state.js';
import type { PageQuery } from './queries.js';

const iso = (ms: number | undefined): string | null => (ms === undefined ? null : new Date(ms).toISOString());

export function scheduleView(state: BuildState, s: ScheduleDefinition, now: number): ScheduleView {
  const last = state.schedules.get(s.name);
  const next = nextTick(s, now);
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
