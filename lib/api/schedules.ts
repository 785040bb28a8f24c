/** `GET /api/schedules`: the schedules of platform.json, with their last and next tick. */
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
  /** The next tick, and the refs it will want. */
  next_tick: string | null;
  next_partitions: string[];
}
