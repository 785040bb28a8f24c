/** The JSON shapes of the HTTP API (snake_case, ISO 8601 times), rendered from state records. */
import type { BuildEvent, JobConfig } from '../events/build-event.js';
import type {
  BuildState,
  JobRunRecord,
  JobRunStatus,
  PartitionRecord,
  PartitionStatus,
  WantRecord,
  WantStatus,
} from './build-state.js';

const iso = (ms: number): string => new Date(ms).toISOString();
const isoOrNull = (ms: number | null): string | null => (ms === null ? null : iso(ms));

export interface WantView {
  want_id: string;
  partitions: string[];
  status: WantStatus;
  created_at: string;
  updated_at: string;
  comment: string;
  data_timestamp: string | null;
  ttl_seconds: number;
  sla_seconds: number;
  /** When the want is due: created_at + sla_seconds; null without an SLA. */
  sla_deadline: string | null;
  /** When an unsatisfied want is canceled: created_at + ttl_seconds; null without a TTL. */
  expires_at: string | null;
  source: string;
  parent_want_id: string | null;
  root_want_id: string;
  child_want_ids: string[];
  job_run_ids: string[];
  partition_status: Record<string, PartitionStatus | 'absent'>;
  cancel_reason: string | null;
}

export function wantView(state: BuildState, w: WantRecord): WantView {
  const partition_status: Record<string, PartitionStatus | 'absent'> = {};
  for (const ref of w.partitions) partition_status[ref] = state.partitions.get(ref)?.status ?? 'absent';
  return {
    want_id: w.want_id,
    partitions: [...w.partitions],
    status: w.status,
    created_at: iso(w.created_at),
    updated_at: iso(w.updated_at),
    comment: w.comment,
    data_timestamp: w.data_timestamp ? iso(w.data_timestamp) : null,
    ttl_seconds: w.ttl_seconds,
    sla_seconds: w.sla_seconds,
    sla_deadline: w.sla_seconds ? iso(w.created_at + w.sla_seconds * 1000) : null,
    expires_at: w.ttl_seconds && !w.parent_want_id ? iso(w.created_at + w.ttl_seconds * 1000) : null,
    source: w.source,
    parent_want_id: w.parent_want_id || null,
    root_want_id: w.root_want_id,
    child_want_ids: [...w.child_want_ids],
    job_run_ids: [...w.job_run_ids],
    partition_status,
    cancel_reason: w.cancel_reason || null,
  };
}

export interface PartitionView {
  partition_ref: string;
  status: PartitionStatus;
  job_run_id: string;
  created_at: string;
  updated_at: string;
}

export function partitionView(p: PartitionRecord): PartitionView {
  return {
    partition_ref: p.ref,
    status: p.status,
    job_run_id: p.job_run_id,
    created_at: iso(p.created_at),
    updated_at: iso(p.updated_at),
  };
}

export interface JobRunView {
  job_run_id: string;
  job_label: string;
  status: JobRunStatus;
  outputs: string[];
  config: JobConfig;
  want_ids: string[];
  attempt: number;
  /** The program the run was started with; the config's args follow it. */
  exec: string[];
  timeout_seconds: number;
  pid: number | null;
  exit_code: number | null;
  signal: string | null;
  reason: string | null;
  missing: string[];
  retry_at: string | null;
  queued_at: string;
  started_at: string | null;
  ended_at: string | null;
  duration_ms: number | null;
}

export function jobRunView(r: JobRunRecord): JobRunView {
  return {
    job_run_id: r.job_run_id,
    job_label: r.job_label,
    status: r.status,
    outputs: [...r.config.outputs],
    config: r.config,
    want_ids: [...r.want_ids],
    attempt: r.attempt,
    exec: [...r.exec],
    timeout_seconds: r.timeout_seconds,
    pid: r.pid || null,
    exit_code: r.exit_code,
    signal: r.signal || null,
    reason: r.reason || null,
    missing: [...r.missing],
    retry_at: r.retry_at ? iso(r.retry_at) : null,
    queued_at: iso(r.queued_at),
    started_at: isoOrNull(r.started_at),
    ended_at: isoOrNull(r.ended_at),
    duration_ms: r.started_at !== null && r.ended_at !== null ? r.ended_at - r.started_at : null,
  };
}

/** An event as JSON: the envelope with an ISO time, the oneof case in `type` and its payload under that name. */
// Distributed over the union, so each event type keeps its own payload field.
export type EventView = BuildEvent extends infer E ? (E extends BuildEvent ? Omit<E, 'timestamp'> & { timestamp: string } : never) : never;

export function eventView(e: BuildEvent): EventView {
  return { ...e, timestamp: iso(e.timestamp) } as EventView;
}
