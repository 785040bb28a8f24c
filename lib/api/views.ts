/** The JSON shapes of the HTTP API's resources (snake_case, ISO 8601 times); the server renders them from state. */
import type { BuildEvent, JobConfig, RebuildPolicy } from '../events/build-event.js';
import type { JobRunStatus, PartitionStatus, WantStatus } from './statuses.js';

export interface WantView {
  want_id: string;
  /** Its partitions (the first 10,000; `partitions_total` counts them all). */
  partitions: string[];
  partitions_total: number;
  status: WantStatus;
  created_at: string;
  updated_at: string;
  comment: string;
  data_timestamp: string | null;
  ttl_seconds: number;
  sla_seconds: number;
  /** When the want is due: its data timestamp (else created_at) + sla_seconds; null without an SLA. */
  sla_deadline: string | null;
  /** When an unsatisfied want is canceled: its data timestamp (else created_at) + ttl_seconds; null without a TTL. */
  expires_at: string | null;
  source: string;
  parent_want_id: string | null;
  root_want_id: string;
  /** The wants derived from it (the latest 10,000; `child_wants_total` counts them all; /api/wants/:id/tree walks them). */
  child_want_ids: string[];
  child_wants_total: number;
  /** The job runs serving it (the latest 10,000; `job_runs_total` counts them all). */
  job_run_ids: string[];
  job_runs_total: number;
  partition_status: Record<string, PartitionStatus | 'absent'>;
  cancel_reason: string | null;
  /** What it rebuilds: missing (default), stale, all. */
  rebuild: RebuildPolicy;
  /** It was not successful by its sla deadline. */
  sla_missed: boolean;
  /** Partitions that had a build and were built again for it or its derived wants (at most 1000). */
  rebuilt: string[];
  /** How many builds replaced one for it and its derived wants, all of them (a partition rebuilt twice counts twice). */
  rebuilt_total: number;
  /** Higher first when runs wait for capacity; derived wants carry their root's. */
  priority: number;
  /** The backfill this want is (see /api/backfills/:id), or null. */
  backfill_id: string | null;
  /** Most job runs serving it at once; 0 = no cap of its own. */
  max_concurrent_job_runs: number;
  /** The brace pattern its partitions came from; '' when they were listed. */
  pattern: string;
  /** The schedule tick that made it (source `schedule:<name>`), or null. */
  schedule_tick: string | null;
}

export interface PartitionView {
  partition_ref: string;
  status: PartitionStatus;
  job_run_id: string;
  created_at: string;
  updated_at: string;
  /** Its current build; null if it was never live. */
  build_id: string | null;
  stale: boolean;
}

export interface JobRunView {
  job_run_id: string;
  job_label: string;
  status: JobRunStatus;
  /** Its outputs: the first 1,000 (in a list of runs, 20); `outputs_total` counts them all. */
  outputs: string[];
  outputs_total: number;
  /** Its config, its outputs, inputs, args and env cut as `outputs` is (`truncated` then says so). */
  config: JobConfig;
  inputs_total: number;
  /** Its environment variables; `config.env` holds the first 1,000 (in a list of runs, 20). */
  env_total: number;
  /** Some list of it (config's outputs, inputs, args, env, or `missing`) holds only its first entries. */
  truncated: boolean;
  /** The wants it serves, oldest first (the first 100; `wants_total` counts them all). */
  want_ids: string[];
  wants_total: number;
  attempt: number;
  /** The program the run was started with; the config's args follow it. */
  exec: string[];
  timeout_seconds: number;
  pid: number | null;
  /** Where it ran: 'local' (this machine, under a supervisor) or a worker's name; null until it started. */
  worker: string | null;
  exit_code: number | null;
  signal: string | null;
  reason: string | null;
  missing: string[];
  retry_at: string | null;
  /** Once its retry was queued: the later attempt's id (for a batch, the one that took its first output). */
  retried_by: string | null;
  queued_at: string;
  /** Null if it never started (canceled while queued, or while it waited in a queue for a worker). */
  started_at: string | null;
  ended_at: string | null;
  duration_ms: number | null;
  /** The highest priority of the wants it serves (queued runs start in this order). */
  priority: number;
}

/** An event as JSON: the envelope with an ISO time, the oneof case in `type` and its payload under that name. */
// Distributed over the union, so each event type keeps its own payload field.
export type EventView = BuildEvent extends infer E ? (E extends BuildEvent ? Omit<E, 'timestamp'> & { timestamp: string } : never) : never;
