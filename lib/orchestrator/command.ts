/** What HTTP handlers (and embedders) ask of the orchestrator, and what it answers. */
import type { TaintReply } from '../api/partitions-change.js';
import type { RebuildPolicy } from '../events/build-event.js';
import type { BuildState } from '../state/build-state.js';

export interface CreateWantRequest {
  partitions: string[];
  comment: string;
  /** Epoch ms; 0 when not given. */
  data_timestamp: number;
  ttl_seconds: number;
  sla_seconds: number;
  /** Default 'missing'. */
  rebuild?: RebuildPolicy;
  /** Default 0; higher first when runs wait for capacity. */
  priority?: number;
}

/** What a backfill rebuilds in its range: what never was built, also what failed or is tainted, or everything. */
export type BackfillPolicy = 'missing' | 'failed' | 'all';
export const BACKFILL_POLICIES: readonly BackfillPolicy[] = ['missing', 'failed', 'all'];

export interface CreateBackfillRequest {
  partitions: string[];
  /** The brace pattern they were expanded from; '' when listed. */
  pattern: string;
  policy: BackfillPolicy;
  priority: number;
  /** 0 = no cap of its own (the graph's limits still hold). */
  max_concurrent_job_runs: number;
  comment: string;
}

export interface CreateTaintRequest {
  partitions: string[];
  reason: string;
  /** Taint too every partition whose current build (transitively) consumed a tainted build. */
  downstream: boolean;
}

export type Command =
  | { kind: 'create_want'; request: CreateWantRequest }
  | { kind: 'cancel_want'; want_id: string; reason: string }
  | { kind: 'create_taint'; request: CreateTaintRequest }
  | { kind: 'create_backfill'; request: CreateBackfillRequest }
  /**
   * `requested_at`: when it was asked for (epoch ms, the loop's clock; default: the step's time). The ticks due by
   * then were due while the schedule ran: the step decides them (made or skipped as missed) before it pauses.
   */
  | { kind: 'pause_schedule'; name: string; reason: string; requested_at?: number }
  | { kind: 'resume_schedule'; name: string };

/** A taint's reply: its id and every ref it tainted (downstream ones included). */
export type { TaintReply };

/** A backfill's reply: its id and how many partitions its range holds. */
export interface BackfillReply {
  backfill_id: string;
  partitions: number;
}

/** A pause's or resume's reply: which schedule, and whether this request changed it (false: it already was so). */
export interface ScheduleReply {
  name: string;
  changed: boolean;
  /** Ticks this request recorded as skipped (a resume: those due while paused), a lower bound when `skipped_at_least`. */
  skipped: number;
  skipped_at_least: boolean;
}

export type CommandResult =
  | { ok: true; status: 200 | 201; want_id: string; taint?: TaintReply; backfill?: BackfillReply; schedule?: ScheduleReply; state: BuildState }
  | { ok: false; status: 400 | 404 | 409; error: string; want_id?: string };

/** A decision of the planner before the step's events are durable; the loop adds the state once they are. */
export type CommandDecision =
  | { ok: true; status: 200 | 201; want_id: string; taint?: TaintReply; backfill?: BackfillReply; schedule?: ScheduleReply }
  | { ok: false; status: 400 | 404 | 409; error: string; want_id?: string };
