/**
 * The build event log's record, as plain data. Mirrors proto/platform/v1/events.proto: `type` names the
 * oneof case and the field of the same name carries its payload, so `{type: 'want_created', want_created}`
 * is also how an event reads in the JSON API.
 */
export type DepType = 'QUERY' | 'MATERIALIZE';

export interface DataDep {
  dep_type: DepType;
  partition_ref: string;
}

export interface JobConfig {
  outputs: string[];
  inputs: DataDep[];
  args: string[];
  env: Record<string, string>;
}

export interface WantCreated {
  want_id: string;
  partitions: string[];
  comment: string;
  /** Epoch ms; 0 when not given. */
  data_timestamp: number;
  ttl_seconds: number;
  sla_seconds: number;
  source: WantSource;
  parent_want_id: string;
  root_want_id: string;
  /** '' (recorded before rebuild policies existed) reads as 'missing'. */
  rebuild: RebuildPolicy | '';
  /** Higher first when runs wait for capacity (default 0); derived wants carry their root's. */
  priority: number;
  /** The backfill this want is; '' for any other want. */
  backfill_id: string;
  /** Most job runs serving this want and its derived wants at once; 0 = no cap of its own. */
  max_concurrent_job_runs: number;
  /** The brace pattern its partitions were expanded from; '' when they were listed. */
  pattern: string;
  /** Epoch ms of the schedule tick that made it (source "schedule:<name>"); 0 for any other want. */
  schedule_tick: number;
}

/**
 * What a want rebuilds: anything not live (the spec's default), also what is stale or tainted, everything, or
 * only what never was built nor attempted (a failed or tainted partition is left as it is).
 */
export type RebuildPolicy = 'missing' | 'stale' | 'all' | 'absent';
export const REBUILD_POLICIES: readonly RebuildPolicy[] = ['missing', 'stale', 'all', 'absent'];

/** Who asked: a user, the orchestrator (inputs of a want; inputs a job said it missed), or a schedule's tick. */
export type WantSource = 'user' | 'derived' | 'dep_missed' | `schedule:${string}`;

export interface WantCanceled {
  want_id: string;
  reason: string;
}

export interface JobRunQueued {
  job_run_id: string;
  job_label: string;
  config: JobConfig;
  want_ids: string[];
  attempt: number;
  /** The program (argv prefix; the config's args follow) as the graph said when the run was queued. */
  exec: string[];
  /** 0 = none. */
  timeout_seconds: number;
  /** The builds of its inputs that were live when it was queued. */
  input_builds: BuildInput[];
  job_fingerprint: string;
  /** A batch run's inputs per output; empty for a run of one ref (all its inputs are its output's). */
  output_inputs: OutputInputs[];
  /**
   * The failed run this run retries (its next attempt); '' when it is no retry. A batch retried in halves: each half
   * names the batch. Absent in logs written before it (decoded as ''): nothing said.
   */
  retry_of: string;
}

export interface OutputInputs {
  output: string;
  inputs: string[];
}

/** A partition's build: an input a run consumed, or an output it made. */
export interface BuildInput {
  partition_ref: string;
  build_id: string;
}

export interface JobRunStarted {
  job_run_id: string;
  pid: number;
  /** Where it runs: 'local' for this machine; a worker's name otherwise ('' in logs from before workers). */
  worker: string;
  /**
   * Epoch ms the job started, when before the daemon heard (a daemon killed before it recorded the start had started
   * it, and the next one adopted it); 0: the event's timestamp.
   */
  started_at: number;
}

/** A run handed to a queue of workers was taken by one: where it runs now, and its pid there. */
export interface JobRunPlaced {
  job_run_id: string;
  worker: string;
  pid: number;
  /**
   * Epoch ms the worker took the run, when before the daemon heard (taken while no daemon ran: the queue's job says
   * when); 0 (and in logs from before it was kept): the event's timestamp.
   */
  started_at: number;
}

export interface JobRunSucceeded {
  job_run_id: string;
  /** The build each output it still owned got: its lineage is this plus the run's `input_builds`. */
  builds: BuildInput[];
  /** Epoch ms the job ended, when before the daemon heard (it ended while no daemon ran); 0: the event's timestamp. */
  ended_at: number;
}

export interface JobRunFailed {
  job_run_id: string;
  /** -1 when the process was ended by a signal or never started. */
  exit_code: number;
  signal: string;
  reason: string;
  /** Epoch ms at which the next attempt may be queued; 0 when the failure is final. */
  retry_at: number;
  /** Epoch ms the job ended, when before the daemon heard (it ended while no daemon ran); 0: the event's timestamp. */
  ended_at: number;
}

export interface JobRunCanceled {
  job_run_id: string;
  reason: string;
}

export interface JobRunDepMissed {
  job_run_id: string;
  missing: string[];
  /** Epoch ms the job ended, when before the daemon heard (it ended while no daemon ran); 0: the event's timestamp. */
  ended_at: number;
}

export interface PartitionTainted {
  partition_ref: string;
  reason: string;
}

export interface TaintCreated {
  taint_id: string;
  /** Every ref tainted, downstream ones included. */
  partitions: string[];
  reason: string;
  downstream: boolean;
}

export interface JobFingerprint {
  job_label: string;
  fingerprint: string;
}

export interface JobDefinitionsChanged {
  jobs: JobFingerprint[];
}

export interface WantSlaMissed {
  want_id: string;
  /** Epoch ms. */
  deadline: number;
}

/** More of a windowed want's partitions released into scheduling: the first `released` of them now are. */
export interface WantReleased {
  want_id: string;
  released: number;
}

/** A schedule as the log saw it: its ticks count from `since` (epoch ms). */
export interface ScheduleSince {
  name: string;
  cron: string;
  timezone: string;
  since: number;
}

/** Schedules new to the log, or whose cron or time zone changed: each counts its ticks from its `since`. */
export interface SchedulesChanged {
  schedules: ScheduleSince[];
}

/**
 * Ticks of a schedule that fell due and were not made into wants: missed beyond its `catchup` (the daemon was down,
 * or saw them late), or due while it was paused. Recorded in the step that passes over them, so a skip is never
 * silent, and the schedule's ticks up to `latest_tick` are never made afterwards.
 */
export interface ScheduleTicksSkipped {
  name: string;
  /** How many ticks; a lower bound when `count_at_least` (a gap of more ticks than are counted one by one). */
  count: number;
  count_at_least: boolean;
  /** Epoch ms of the first and the latest tick skipped. */
  first_tick: number;
  latest_tick: number;
  /** Why: 'catchup' (more were missed than `catchup` makes) or 'paused' (they fell due while it was paused). */
  reason: string;
}

/** A schedule paused by request: it makes no wants until it is resumed. */
export interface SchedulePaused {
  name: string;
  /** Why, as the caller gave it ('' when none). */
  reason: string;
  /**
   * Epoch ms: when the pause was asked for (the loop's clock; the step's time when the command did not say). The
   * ticks due by then were decided before it. The schedule's `paused_at`; 0 in events written before the field, which
   * then fold at the event's timestamp.
   */
  requested_at: number;
}

/** A paused schedule resumed: ticks from now on are made; those that fell due while paused are skipped. */
export interface ScheduleResumed {
  name: string;
}

export type EventPayload =
  | { type: 'want_created'; want_created: WantCreated }
  | { type: 'want_canceled'; want_canceled: WantCanceled }
  | { type: 'job_run_queued'; job_run_queued: JobRunQueued }
  | { type: 'job_run_started'; job_run_started: JobRunStarted }
  | { type: 'job_run_succeeded'; job_run_succeeded: JobRunSucceeded }
  | { type: 'job_run_failed'; job_run_failed: JobRunFailed }
  | { type: 'job_run_canceled'; job_run_canceled: JobRunCanceled }
  | { type: 'job_run_dep_missed'; job_run_dep_missed: JobRunDepMissed }
  | { type: 'partition_tainted'; partition_tainted: PartitionTainted }
  | { type: 'taint_created'; taint_created: TaintCreated }
  | { type: 'job_definitions_changed'; job_definitions_changed: JobDefinitionsChanged }
  | { type: 'want_sla_missed'; want_sla_missed: WantSlaMissed }
  | { type: 'want_released'; want_released: WantReleased }
  | { type: 'schedules_changed'; schedules_changed: SchedulesChanged }
  | { type: 'job_run_placed'; job_run_placed: JobRunPlaced }
  | { type: 'schedule_ticks_skipped'; schedule_ticks_skipped: ScheduleTicksSkipped }
  | { type: 'schedule_paused'; schedule_paused: SchedulePaused }
  | { type: 'schedule_resumed'; schedule_resumed: ScheduleResumed };

export type EventType = EventPayload['type'];

export const EVENT_TYPES: readonly EventType[] = [
  'want_created',
  'want_canceled',
  'job_run_queued',
  'job_run_started',
  'job_run_succeeded',
  'job_run_failed',
  'job_run_canceled',
  'job_run_dep_missed',
  'partition_tainted',
  'taint_created',
  'job_definitions_changed',
  'want_sla_missed',
  'want_released',
  'schedules_changed',
  'job_run_placed',
  'schedule_ticks_skipped',
  'schedule_paused',
  'schedule_resumed',
];

/** An event as the log stores it: the payload plus its id (dense from 1) and epoch-ms timestamp. */
export type BuildEvent = { event_id: number; timestamp: number } & EventPayload;
