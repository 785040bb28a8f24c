/** `GET /api/schedules`: the schedules of platform.json, with their last and next tick. */
import type { WantStatus } from './statuses.js';

export interface ScheduleView {
  name: string;
  cron: string;
  timezone: string;
  /** Ref templates: ${date}, ${hour}, ${minute}, ${week}, ${month}, ${year}. */
  partitions: string[];
  offset: string;
  priority: number;
  ttl_seconds: number;
  sla_seconds: number;
  catchup: number;
  /**
   * Since when its ticks count (ISO): when the log first saw it with this cron and time zone; null before the daemon
   * has run with it. Ticks before it are never made, however large `catchup` is.
   */
  since: string | null;
  /** The latest tick made into a want, and that want; null before its first tick. */
  last_tick: string | null;
  last_want_id: string | null;
  /** The status of the latest tick's want now; null before its first tick. */
  last_want_status: WantStatus | null;
  /** Of its latest ticks made into wants (at most 10: `recent_ticks` of them), how many wants failed (or upstream_failed). */
  recent_ticks: number;
  recent_failed: number;
  /** Ticks that fell due and were not made (missed beyond `catchup`, or due while paused), in all. */
  skipped_ticks: number;
  /** A gap had more ticks than are counted one by one (1,000): `skipped_ticks` is then a lower bound. */
  skipped_ticks_at_least: boolean;
  /** The latest tick skipped; null when none was. */
  last_skipped_tick: string | null;
  /**
   * Paused (`platform schedules pause`): it makes no wants until resumed; since when (the time the pause was asked for:
   * the ticks due after it are the pause's), and why (null: no reason given).
   */
  paused: boolean;
  paused_at: string | null;
  paused_reason: string | null;
  /** The next tick, and the refs it will want; null and [] while paused, or when the cron has no later tick. */
  next_tick: string | null;
  next_partitions: string[];
}

/** `POST /api/schedules/:name/pause` `{"reason"?}`. */
export interface PauseScheduleBody {
  reason?: string | null;
}

/** The answer to a pause or a resume: the schedule, and whether this request changed it (false: it already was so). */
export interface ScheduleChangeReply {
  changed: boolean;
  /** Ticks this request recorded as skipped: a resume's, those that fell due while paused (0 for a pause). */
  skipped_ticks: number;
  skipped_ticks_at_least: boolean;
  schedule: ScheduleView;
}
