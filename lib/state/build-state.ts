import type { JobConfig, WantSource } from '../events/build-event.js';
import { OrderedMap, compareNumbers, compareStrings } from './ordered-map.js';
import type { PartitionCounts } from './want-status.js';

export type WantStatus =
  | 'idle'
  | 'building'
  | 'upstream_building'
  | 'successful'
  | 'failed'
  | 'upstream_failed'
  | 'canceled';

/** `canceled`: the build of the partition was canceled (no active want needed it). `tainted`: marked for rebuild. */
export type PartitionStatus = 'building' | 'live' | 'failed' | 'canceled' | 'tainted';

export type JobRunStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'dep_missed' | 'canceled';

export const WANT_STATUSES: readonly WantStatus[] = [
  'idle', 'building', 'upstream_building', 'successful', 'failed', 'upstream_failed', 'canceled',
];
export const PARTITION_STATUSES: readonly PartitionStatus[] = ['building', 'live', 'failed', 'canceled', 'tainted'];
export const JOB_RUN_STATUSES: readonly JobRunStatus[] = [
  'queued', 'running', 'succeeded', 'failed', 'dep_missed', 'canceled',
];

export const TERMINAL_WANT_STATUSES: ReadonlySet<WantStatus> = new Set([
  'successful', 'failed', 'upstream_failed', 'canceled',
]);
export const ACTIVE_JOB_RUN_STATUSES: ReadonlySet<JobRunStatus> = new Set(['queued', 'running']);
export const ACTIVE_WANT_STATUSES: readonly WantStatus[] = WANT_STATUSES.filter((s) => !TERMINAL_WANT_STATUSES.has(s));

export interface WantRecord {
  readonly want_id: string;
  /** Creation order, 1-based; lists sort by it. */
  readonly seq: number;
  /** Id of the event that created the want: failures older than this are not the want's failures. */
  readonly created_event_id: number;
  readonly partitions: readonly string[];
  readonly comment: string;
  readonly data_timestamp: number;
  readonly ttl_seconds: number;
  readonly sla_seconds: number;
  readonly source: WantSource;
  readonly parent_want_id: string;
  readonly root_want_id: string;
  readonly status: WantStatus;
  readonly created_at: number;
  readonly updated_at: number;
  readonly child_want_ids: readonly string[];
  readonly job_run_ids: readonly string[];
  readonly cancel_reason: string;
  /** Its partitions by where they stand (see want-status.ts); kept by reduce as partitions move. */
  readonly counts: PartitionCounts;
}

export interface PartitionRecord {
  readonly ref: string;
  readonly status: PartitionStatus;
  /** The latest job run that built (or is building) the partition. */
  readonly job_run_id: string;
  /** Event id of the last status change. */
  readonly changed_event_id: number;
  readonly created_at: number;
  readonly updated_at: number;
}

export interface JobRunRecord {
  readonly job_run_id: string;
  readonly seq: number;
  readonly job_label: string;
  readonly config: JobConfig;
  readonly want_ids: readonly string[];
  readonly attempt: number;
  readonly exec: readonly string[];
  readonly timeout_seconds: number;
  readonly status: JobRunStatus;
  readonly pid: number;
  readonly exit_code: number | null;
  readonly signal: string;
  readonly reason: string;
  /** Epoch ms when the next attempt may be queued; 0 when none will be. */
  readonly retry_at: number;
  readonly missing: readonly string[];
  readonly queued_at: number;
  readonly started_at: number | null;
  readonly ended_at: number | null;
}

/** A status index: creation seq -> id, so a page of one status costs the page. */
export type StatusIndex<S extends string> = Readonly<Record<S, OrderedMap<number, string>>>;

export interface BuildState {
  readonly last_event_id: number;
  readonly wants: OrderedMap<string, WantRecord>;
  readonly want_order: OrderedMap<number, string>;
  readonly wants_by_status: StatusIndex<WantStatus>;
  /** ref -> ids of the non-terminal wants that ask for it (joins, cancel and status propagation). */
  readonly active_wants_by_ref: OrderedMap<string, readonly string[]>;
  /** Sorted by ref, so a prefix query is a range scan. */
  readonly partitions: OrderedMap<string, PartitionRecord>;
  readonly partitions_by_status: Readonly<Record<PartitionStatus, OrderedMap<string, true>>>;
  readonly job_runs: OrderedMap<string, JobRunRecord>;
  readonly job_run_order: OrderedMap<number, string>;
  readonly job_runs_by_status: StatusIndex<JobRunStatus>;
}

function statusIndex<S extends string>(statuses: readonly S[]): StatusIndex<S> {
  const index = {} as Record<S, OrderedMap<number, string>>;
  for (const s of statuses) index[s] = OrderedMap.empty<number, string>(compareNumbers);
  return index;
}

export function initialState(): BuildState {
  const partitionsByStatus = {} as Record<PartitionStatus, OrderedMap<string, true>>;
  for (const s of PARTITION_STATUSES) partitionsByStatus[s] = OrderedMap.empty<string, true>(compareStrings);
  return {
    last_event_id: 0,
    wants: OrderedMap.empty(compareStrings),
    want_order: OrderedMap.empty(compareNumbers),
    wants_by_status: statusIndex(WANT_STATUSES),
    active_wants_by_ref: OrderedMap.empty(compareStrings),
    partitions: OrderedMap.empty(compareStrings),
    partitions_by_status: partitionsByStatus,
    job_runs: OrderedMap.empty(compareStrings),
    job_run_order: OrderedMap.empty(compareNumbers),
    job_runs_by_status: statusIndex(JOB_RUN_STATUSES),
  };
}
