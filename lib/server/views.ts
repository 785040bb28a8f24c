/** The API's views (api/views.ts) rendered from state records. */
import { lastItems, listLength } from '../state/append-list.js';
import type { EventView, JobRunView, PartitionView, WantView } from '../api/views.js';
import type { BuildEvent } from '../events/build-event.js';
import type { BuildState, JobRunRecord, PartitionRecord, PartitionStatus, WantRecord } from '../state/build-state.js';
import { slaDeadline, wantClockStart } from '../state/build-state.js';
import { exitCodeOf } from '../state/run-exit-code.js';

/**
 * A time as ISO 8601. Requests are bounded now, but a log written before the bounds may hold a ttl or timestamp
 * beyond what a Date can print: such a time reads as the last instant of year 9999 (never), not as a 500 on every
 * read of the want.
 */
const LAST_ISO_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
const DAY_MS = 86_400_000;
/** The day of the last time printed and its `YYYY-MM-DDT`: a page's times mostly share their day. */
let lastDay = Number.NaN;
let lastDayText = '';
const pad = (n: number, width: number): string => String(n).padStart(width, '0');

/** `Date#toISOString` of a clamped time, its date part kept from the last call (a page prints hundreds of times). */
export function iso(ms: number): string {
  const t = Number.isFinite(ms) ? Math.floor(Math.max(0, Math.min(ms, LAST_ISO_MS))) : LAST_ISO_MS;
  const day = Math.floor(t / DAY_MS);
  if (day !== lastDay) {
    lastDay = day;
    lastDayText = new Date(day * DAY_MS).toISOString().slice(0, 11);
  }
  let rest = t - day * DAY_MS;
  const millis = rest % 1000;
  rest = (rest - millis) / 1000;
  const seconds = rest % 60;
  rest = (rest - seconds) / 60;
  const minutes = rest % 60;
  const hours = (rest - minutes) / 60;
  return `${lastDayText}${pad(hours, 2)}:${pad(minutes, 2)}:${pad(seconds, 2)}.${pad(millis, 3)}Z`;
}
const isoOrNull = (ms: number | null): string | null => (ms === null ? null : iso(ms));

/** Most refs a want's `rebuilt` shows; its derived wants are walked until then. */
const REBUILT_SHOWN = 1000;

function rebuiltFor(state: BuildState, w: WantRecord, shown: number): string[] {
  // Most wants rebuilt nothing: no set, no lookup (its total counts its derived wants' rebuilds too).
  if (w.rebuilt_total === 0) return [];
  const out = new Set<string>(w.rebuilt.length > shown ? w.rebuilt.slice(0, shown) : w.rebuilt);
  const stack = lastItems(w.child_want_ids, REBUILT_SHOWN);
  let visited = 1;
  while (stack.length > 0 && out.size < shown && visited++ < REBUILT_SHOWN) {
    const want = state.wants.get(stack.pop()!);
    if (!want || want.rebuilt_total === 0) continue;
    for (const ref of want.rebuilt) out.add(ref);
    for (const child of lastItems(want.child_want_ids, REBUILT_SHOWN)) stack.push(child);
  }
  return [...out].slice(0, shown);
}

/** Most partitions (and job runs, and derived wants) a want's detail lists: a backfill's range is read through /api/backfills. */
export const WANT_LIST_SHOWN = 10_000;
/**
 * As many of each in an item of a list of wants: a page of a thousand wants of ten thousand partitions each was
 * half a gigabyte. The detail (`GET /api/wants/:id`) lists up to WANT_LIST_SHOWN.
 */
export const WANT_ITEM_SHOWN = 20;

/** A want's detail, or with `shown` an item of a list (its lists cut to `shown`; the totals count them all). */
export function wantView(state: BuildState, w: WantRecord, shown = WANT_LIST_SHOWN): WantView {
  const partitions = w.partitions.length > shown ? w.partitions.slice(0, shown) : w.partitions.slice();
  const partition_status: Record<string, PartitionStatus | 'absent'> = {};
  for (const ref of partitions) partition_status[ref] = state.partitions.get(ref)?.status ?? 'absent';
  return {
    want_id: w.want_id,
    partitions,
    partitions_total: w.partitions.length,
    status: w.status,
    created_at: iso(w.created_at),
    updated_at: iso(w.updated_at),
    comment: w.comment,
    data_timestamp: w.data_timestamp ? iso(w.data_timestamp) : null,
    ttl_seconds: w.ttl_seconds,
    sla_seconds: w.sla_seconds,
    sla_deadline: w.sla_seconds ? iso(slaDeadline(w)) : null,
    expires_at: w.ttl_seconds && !w.parent_want_id ? iso(wantClockStart(w) + w.ttl_seconds * 1000) : null,
    source: w.source,
    parent_want_id: w.parent_want_id || null,
    root_want_id: w.root_want_id,
    child_want_ids: lastItems(w.child_want_ids, shown),
    child_wants_total: listLength(w.child_want_ids),
    job_run_ids: lastItems(w.job_run_ids, shown),
    job_runs_total: listLength(w.job_run_ids),
    partition_status,
    cancel_reason: w.cancel_reason || null,
    rebuild: w.rebuild,
    sla_missed: w.sla_missed,
    rebuilt: rebuiltFor(state, w, Math.min(shown, REBUILT_SHOWN)),
    rebuilt_total: w.rebuilt_total,
    priority: w.priority,
    backfill_id: w.backfill_id || null,
    max_concurrent_job_runs: w.max_concurrent_job_runs,
    pattern: w.pattern,
    schedule_tick: w.schedule_tick > 0 ? iso(w.schedule_tick) : null,
  };
}

export function partitionView(p: PartitionRecord): PartitionView {
  return {
    partition_ref: p.ref,
    status: p.status,
    job_run_id: p.job_run_id,
    build_id: p.build_id || null,
    stale: p.stale_reasons.length > 0,
    created_at: iso(p.created_at),
    updated_at: iso(p.updated_at),
  };
}

/** Most wants a run's view lists: a run that a hundred thousand wants joined is still one small answer. */
export const RUN_WANTS_SHOWN = 100;

/**
 * Most outputs, inputs, args and missing refs a run's detail lists (a fan-in of fifty thousand inputs was 3 MB a
 * read), and an item of a list of runs; `outputs_total` and `inputs_total` count them all.
 */
export const RUN_LISTS_SHOWN = 1000;
export const RUN_ITEM_SHOWN = 20;

const cut = <T>(list: readonly T[], shown: number): T[] => (list.length > shown ? list.slice(0, shown) : [...list]);

/** How many variables `env` has, counted up to one past `shown` (a wide run's thousands are not walked for a list). */
function countKeys(env: Readonly<Record<string, string>>, shown: number): number {
  let n = 0;
  for (const _ in env) if (++n > shown) break;
  return n;
}

/** The first `shown` variables of `env`, in its order. */
function cutEnv(env: Readonly<Record<string, string>>, shown: number): Record<string, string> {
  const out: Record<string, string> = {};
  let n = 0;
  for (const k in env) {
    if (n++ === shown) break;
    out[k] = env[k]!;
  }
  return out;
}

/**
 * The attempt that retried a failed run, once it was queued: as the fold recorded it (`retried_by`, from the retry's
 * `retry_of`). A run retried in a log or a compaction base written before that was recorded has none on record: for
 * it, and only while it is failed with a retry planned, it is worked out as it was before: the run its first output
 * has now, when that is the next attempt of the same job for one of the same wants. That names only the latest retry
 * (a run whose retry was retried again reads none). O(1): one partition, and at most WANTS_COMPARED of the run's
 * wants. A run of this code that waits for its retry reads none either way (its output's run is still itself).
 */
function retriedBy(state: Pick<BuildState, 'partitions' | 'job_runs' | 'run_wants'>, r: JobRunRecord): string | null {
  if (r.retried_by !== '') return r.retried_by;
  if (r.status !== 'failed' || r.retry_at === 0 || r.config.outputs.length === 0) return null;
  const now = state.partitions.get(r.config.outputs[0]!)?.job_run_id;
  const later = now && now !== r.job_run_id ? state.job_runs.get(now) : undefined;
  if (!later || later.job_label !== r.job_label || later.attempt !== r.attempt + 1) return null;
  const mine = state.run_wants.get(r.job_run_id);
  const theirs = state.run_wants.get(later.job_run_id);
  if (!mine || !theirs) return null;
  return mine.slice(0, WANTS_COMPARED).some(([seq]) => theirs.has(seq)) ? later.job_run_id : null;
}

const WANTS_COMPARED = 20;

export function jobRunView(state: Pick<BuildState, 'run_wants' | 'partitions' | 'job_runs'>, r: JobRunRecord, shown = RUN_LISTS_SHOWN): JobRunView {
  const wants = state.run_wants.get(r.job_run_id);
  const { config } = r;
  const envTotal = countKeys(config.env, shown);
  const whole = config.outputs.length <= shown && config.inputs.length <= shown && config.args.length <= shown && envTotal <= shown;
  return {
    job_run_id: r.job_run_id,
    job_label: r.job_label,
    status: r.status,
    outputs: cut(config.outputs, shown),
    outputs_total: config.outputs.length,
    config: whole ? config : { outputs: cut(config.outputs, shown), inputs: cut(config.inputs, shown), args: cut(config.args, shown), env: cutEnv(config.env, shown) },
    inputs_total: config.inputs.length,
    env_total: envTotal > shown ? Object.keys(config.env).length : envTotal,
    truncated: !whole || r.missing.length > shown,
    want_ids: wants ? wants.slice(0, Math.min(shown, RUN_WANTS_SHOWN)).map(([, id]) => id) : [],
    wants_total: wants?.size ?? 0,
    attempt: r.attempt,
    exec: [...r.exec],
    timeout_seconds: r.timeout_seconds,
    pid: r.pid || null,
    worker: r.worker || null,
    exit_code: exitCodeOf(r.exit_code),
    signal: r.signal || null,
    reason: r.reason || null,
    missing: cut(r.missing, shown),
    retry_at: r.retry_at ? iso(r.retry_at) : null,
    retried_by: retriedBy(state, r),
    queued_at: iso(r.queued_at),
    started_at: isoOrNull(r.started_at),
    ended_at: isoOrNull(r.ended_at),
    duration_ms: r.started_at !== null && r.ended_at !== null ? r.ended_at - r.started_at : null,
    priority: r.priority,
  };
}

export function eventView(e: BuildEvent): EventView {
  return { ...e, timestamp: iso(e.timestamp) } as EventView;
}
