/** A schedule of `platform.json`: a cron that makes a want for templated refs at each tick. */
export interface ScheduleDefinition {
  name: string;
  /** 5 fields (minute first) or 6 (second first), as cron-parser reads them. */
  cron: string;
  /** IANA time zone of the cron and the templates; default UTC. */
  timezone: string;
  /** Templates over the tick time: ${date}, ${hour}, ${minute}, ${week}, ${month}, ${year}. */
  partitions: string[];
  /** Added to the tick time for the templates and the want's data_timestamp ("-1d": yesterday's data). */
  offset_ms: number;
  /** As written, for display ('' when none). */
  offset: string;
  priority: number;
  ttl_seconds: number;
  sla_seconds: number;
  /**
   * Most missed ticks made up for at start (the latest ones); default 1. 0: none, only ticks that fall due while
   * the daemon runs are made. The others are recorded as skipped (schedule-catchup.ts).
   */
  catchup: number;
}
