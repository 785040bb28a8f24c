/**
 * What the fold keeps of each schedule (build-state.ts `ScheduleRecord`), event by event: since when it counts its
 * ticks, its latest tick and want, the ticks it skipped, whether it is paused, and the statuses of its latest ticks'
 * wants. Every change costs O(log n) in the number of schedules plus O(SCHEDULE_RECENT_TICKS): no read or write
 * walks a schedule's history.
 */
import type { ScheduleSince, ScheduleTicksSkipped } from '../events/build-event.js';
import {
  SCHEDULE_RECENT_TICKS,
  SCHEDULE_SOURCE_PREFIX,
  newScheduleRecord,
  withSchedule,
  withState,
  type BuildState,
  type ScheduleRecord,
  type WantRecord,
} from './build-state.js';

function put(s: BuildState, name: string, change: (r: ScheduleRecord) => ScheduleRecord): BuildState {
  const known = s.schedules.get(name) ?? newScheduleRecord(name);
  const next = change(known);
  return next === known ? s : withState(s, { schedules: s.schedules.set(name, next) });
}

/** `schedules_changed`: each counts its ticks from its `since`; what else the log knows of it stays. */
export function recordSchedulesChanged(s: BuildState, changed: readonly ScheduleSince[]): BuildState {
  let next = s;
  for (const { name, cron, timezone, since } of changed) next = put(next, name, (r) => withSchedule(r, { cron, timezone, since }));
  return next;
}

/** The name of the schedule whose tick made the want, if one did. */
export function scheduleOf(want: Pick<WantRecord, 'schedule_tick' | 'source'>): string | undefined {
  return want.schedule_tick > 0 && want.source.startsWith(SCHEDULE_SOURCE_PREFIX) ? want.source.slice(SCHEDULE_SOURCE_PREFIX.length) : undefined;
}

/**
 * A schedule's want: its tick becomes the schedule's latest (unless a later one is on record already), and the want
 * joins its recent ticks, the oldest one leaving beyond SCHEDULE_RECENT_TICKS.
 */
export function recordScheduleTick(s: BuildState, name: string, want: WantRecord): BuildState {
  return put(s, name, (r) => {
    if (r.tick >= want.schedule_tick) return r;
    const recent = [...r.recent, { want_id: want.want_id, status: want.status }];
    return withSchedule(r, { tick: want.schedule_tick, want_id: want.want_id, recent: recent.length > SCHEDULE_RECENT_TICKS ? recent.slice(-SCHEDULE_RECENT_TICKS) : recent });
  });
}

/** A schedule's want changed status: its entry among the schedule's recent ticks follows (if it is still there). */
export function recordScheduleWantStatus(s: BuildState, name: string, want: WantRecord): BuildState {
  const r = s.schedules.get(name);
  const i = r ? r.recent.findIndex((x) => x.want_id === want.want_id) : -1;
  if (!r || i < 0 || r.recent[i]!.status === want.status) return s;
  const recent = r.recent.map((x, k) => (k === i ? { want_id: x.want_id, status: want.status } : x));
  return withState(s, { schedules: s.schedules.set(name, withSchedule(r, { recent })) });
}

/** `schedule_ticks_skipped`: counted, and no tick up to the latest skipped is made any more. */
export function recordTicksSkipped(s: BuildState, e: ScheduleTicksSkipped): BuildState {
  return put(s, e.name, (r) =>
    withSchedule(r, {
      skipped: Math.min(Number.MAX_SAFE_INTEGER, r.skipped + e.count),
      skipped_at_least: r.skipped_at_least || e.count_at_least,
      skipped_tick: Math.max(r.skipped_tick, e.latest_tick),
    }),
  );
}

/**
 * `schedule_paused`: from `at` (when the pause was asked for) on it makes no wants. Paused again, it keeps the time it
 * was first paused at.
 */
export function recordPaused(s: BuildState, name: string, reason: string, at: number): BuildState {
  return put(s, name, (r) => (r.paused ? r : withSchedule(r, { paused: true, paused_at: at, paused_reason: reason })));
}

/** `schedule_resumed`: it makes wants again (the ticks due while it was paused are skipped by their own event). */
export function recordResumed(s: BuildState, name: string): BuildState {
  return put(s, name, (r) => (r.paused ? withSchedule(r, { paused: false, paused_at: 0, paused_reason: '' }) : r));
}
