/**
 * What a write must be before it becomes an event, checked where every write passes (the planner), whoever sent it:
 * the JSON API has checked a body's shape already, the embedding API hands typed objects that TypeScript cannot
 * vouch for at run time (a NaN, a policy cast from a string). A problem is a sentence for a 400; none is undefined.
 * What the log's codec would refuse mid-step (and fail the step) is refused here, before anything is emitted.
 */
import { REBUILD_POLICIES } from '../events/build-event.js';
import { ILL_FORMED_TEXT, isWellFormed } from '../api/well-formed.js';
import { MAX_EXPANSION } from '../graph/partition-pattern.js';
import { MAX_REF_LENGTH } from '../api/schemas/common.js';
import { BIDI_CONTROL, BIDI_RANGES, CONTROL_CHARACTER, CONTROL_RANGES, quoted } from '../control-characters.js';
import { MAX_BACKFILL_CAP } from '../api/schemas/backfills.js';
import { MAX_COMMENT_LENGTH, MAX_DATA_TIMESTAMP_MS, MAX_PARTITIONS_PER_WANT, MAX_PRIORITY, MAX_WANT_SECONDS } from '../api/schemas/wants.js';
import { BACKFILL_POLICIES, type CreateBackfillRequest, type CreateTaintRequest, type CreateWantRequest } from './command.js';

/**
 * What is wrong with a ref's shape, or undefined when nothing is (whether a job produces it is the graph's
 * question). `where` names it in the message: `partitions[2]`. Shared by the JSON API and the Connect service.
 */
export function refProblem(ref: unknown, where: string): string | undefined {
  if (typeof ref !== 'string') return `${where} must be a string, got ${typeName(ref)}.`;
  if (ref.trim() === '') return `${where} is empty; a partition ref looks like 'daily/revenue/date=2026-01-05'.`;
  if (ref.length > MAX_REF_LENGTH) return `${where} is ${ref.length} characters long; the limit is ${MAX_REF_LENGTH}.`;
  if (CONTROL_CHARACTER.test(ref)) return `${where} (${quoted(ref)}) contains a control character; a partition ref holds none (${CONTROL_RANGES}).`;
  const bidi = BIDI_CONTROL.exec(ref);
  if (bidi) {
    const code = bidi[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0');
    return `${where} (${quoted(ref)}) contains a bidirectional control (U+${code}, at position ${bidi.index + 1}), which shows a ref in another order than it is; a partition ref holds none (${BIDI_RANGES}).`;
  }
  if (!isWellFormed(ref)) return `${where} ${ILL_FORMED_TEXT}.`;
  return undefined;
}

/** A list of refs: an array of 1..max well-formed refs. */
export function partitionsProblem(partitions: unknown, max: number): string | undefined {
  if (!Array.isArray(partitions)) return `partitions must be an array of partition refs, got ${typeName(partitions)}.`;
  if (partitions.length === 0) return "partitions is empty: name at least one partition, like ['daily/revenue/date=2026-01-05'].";
  if (partitions.length > max) return `partitions has ${partitions.length} refs; the limit is ${max}.`;
  for (let i = 0; i < partitions.length; i++) {
    const problem = refProblem(partitions[i], `partitions[${i}]`);
    if (problem) return problem;
  }
  return undefined;
}

/** Whether `r` is a request object at all (not null, an array or a plain value). */
export function isRequestObject(r: unknown): r is Record<string, unknown> {
  return typeof r === 'object' && r !== null && !Array.isArray(r);
}

/** A request that is no object at all (an embedder's JavaScript calling `createWant()`): nothing else can be read of it. */
export function requestObjectProblem(r: unknown, what: string): string | undefined {
  return isRequestObject(r) ? undefined : `${what} takes a request object ({partitions: [...], ...}), got ${typeName(r)}.`;
}

export function wantRequestProblem(r: CreateWantRequest): string | undefined {
  return (
    requestObjectProblem(r, 'createWant') ??
    partitionsProblem(r.partitions, MAX_PARTITIONS_PER_WANT) ??
    textProblem(r.comment, 'comment') ??
    wholeProblem(r.data_timestamp, 'data_timestamp (epoch milliseconds, 0 for none)', 0, MAX_DATA_TIMESTAMP_MS) ??
    wholeProblem(r.ttl_seconds, 'ttl_seconds', 0, MAX_WANT_SECONDS) ??
    wholeProblem(r.sla_seconds, 'sla_seconds', 0, MAX_WANT_SECONDS) ??
    (r.rebuild === undefined ? undefined : oneOfProblem(r.rebuild, 'rebuild', REBUILD_POLICIES)) ??
    (r.priority === undefined ? undefined : wholeProblem(r.priority, 'priority', -MAX_PRIORITY, MAX_PRIORITY))
  );
}

/**
 * A want whose ttl has run out before it is made: its clock starts at its data timestamp, so with one far enough in
 * the past it would be canceled in the step that makes it (schedules refuse the same when the graph is read). `now`
 * is the step's clock. Pure: the same request at the same time gets the same answer.
 */
export function expiredWantProblem(r: Pick<CreateWantRequest, 'data_timestamp' | 'ttl_seconds'>, now: number): string | undefined {
  if (r.ttl_seconds <= 0 || r.data_timestamp <= 0) return undefined;
  const expiry = r.data_timestamp + r.ttl_seconds * 1000;
  if (expiry > now) return undefined;
  return (
    `The want would be expired when made: its ttl of ${r.ttl_seconds} s counts from its data timestamp ` +
    `${new Date(r.data_timestamp).toISOString()}, so it expired at ${new Date(expiry).toISOString()}, before now ` +
    `(${new Date(now).toISOString()}). Nothing was recorded. Give a later data timestamp (--data-timestamp, data_timestamp), ` +
    'a longer ttl (--ttl, ttl_seconds), or no ttl (0).'
  );
}

export function taintRequestProblem(r: CreateTaintRequest): string | undefined {
  return (
    requestObjectProblem(r, 'createTaint') ??
    partitionsProblem(r.partitions, MAX_PARTITIONS_PER_WANT) ??
    textProblem(r.reason, 'reason') ??
    (typeof r.downstream === 'boolean' ? undefined : `downstream must be true or false, got ${typeName(r.downstream)}.`)
  );
}

export function backfillRequestProblem(r: CreateBackfillRequest): string | undefined {
  return (
    requestObjectProblem(r, 'createBackfill') ??
    partitionsProblem(r.partitions, MAX_EXPANSION) ??
    (typeof r.pattern === 'string' && r.pattern.length <= MAX_REF_LENGTH ? undefined : `pattern must be a string of at most ${MAX_REF_LENGTH} characters ('' when the partitions are listed).`) ??
    oneOfProblem(r.policy, 'policy', BACKFILL_POLICIES) ??
    wholeProblem(r.priority, 'priority', -MAX_PRIORITY, MAX_PRIORITY) ??
    wholeProblem(r.max_concurrent_job_runs, 'max_concurrent_job_runs (0 for no cap of its own)', 0, MAX_BACKFILL_CAP) ??
    textProblem(r.comment, 'comment')
  );
}

function wholeProblem(v: unknown, name: string, min: number, max: number): string | undefined {
  return typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max ? undefined : `${name} must be a whole number from ${min} to ${max}, got ${describe(v)}.`;
}

export function textProblem(v: unknown, name: string): string | undefined {
  if (typeof v !== 'string') return `${name} must be a string, got ${typeName(v)}.`;
  if (!isWellFormed(v)) return `${name} ${ILL_FORMED_TEXT}.`;
  if (v.length > MAX_COMMENT_LENGTH) return `${name} is ${v.length} characters long; the limit is ${MAX_COMMENT_LENGTH}.`;
  // Shown in other people's terminals (tables, `platform events`): an escape there sets their title or clears their
  // screen, a tab or a line break breaks the table. Refused as in refs.
  const control = CONTROL_CHARACTER.exec(v);
  if (control) {
    const code = control[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0');
    return `${name} holds a control character (U+${code}, at position ${control.index + 1}); write it without line breaks, tabs or escapes.`;
  }
  return undefined;
}

function oneOfProblem(v: unknown, name: string, values: readonly string[]): string | undefined {
  return typeof v === 'string' && values.includes(v) ? undefined : `${name} must be one of ${values.join(', ')}, got ${describe(v)}.`;
}

function describe(v: unknown): string {
  return typeof v === 'string' ? JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}...` : v) : typeof v === 'number' ? String(v) : typeName(v);
}

/** How a message names a value's type: 'null', 'an array', 'an object', 'a number'. */
export function typeName(v: unknown): string {
  if (v === null) return 'null';
  // A JavaScript embedder that leaves a field out would otherwise read "got a undefined".
  if (v === undefined) return 'nothing: the field is missing';
  if (Array.isArray(v)) return 'an array';
  return typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}
