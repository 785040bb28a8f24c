/** Turns query strings and JSON bodies into typed requests, or an HttpError that says what to fix. */
import type { CreateWantBody } from '../api/create-want.js';
import type { PageOrder } from '../api/page.js';
import { REBUILD_POLICIES, type RebuildPolicy } from '../events/build-event.js';
import type { CreateBackfillBody } from '../api/backfills.js';
import { BACKFILL_POLICIES, type BackfillPolicy, type CreateBackfillRequest, type CreateTaintRequest, type CreateWantRequest } from '../orchestrator/command.js';
import { MAX_EXPANSION, PatternError, expandPattern } from '../graph/partition-pattern.js';
import type { PageQuery } from './queries.js';
import { HttpError } from './http-error.js';

export const MAX_REF_LENGTH = 1024;
export const MAX_PARTITIONS_PER_WANT = 10_000;
export const MAX_COMMENT_LENGTH = 10_000;
export const DEFAULT_PAGE = 100;
export const MAX_PAGE = 1000;

type Query = Record<string, unknown>;

export function intParam(query: Query, name: string, fallback: number, min: number, max: number): number {
  const raw = query[name];
  if (raw === undefined || raw === '') return fallback;
  if (typeof raw !== 'string' || !/^\d+$/.test(raw)) {
    throw new HttpError(400, `Query parameter '${name}' must be a whole number from ${min} to ${max}, got ${JSON.stringify(raw)}.`);
  }
  const n = Number(raw);
  if (n < min || n > max) throw new HttpError(400, `Query parameter '${name}' must be from ${min} to ${max}, got ${n}.`);
  return n;
}

export function enumParam<T extends string>(query: Query, name: string, allowed: readonly T[]): T | undefined {
  const raw = query[name];
  if (raw === undefined || raw === '') return undefined;
  if (typeof raw !== 'string' || !(allowed as readonly string[]).includes(raw)) {
    throw new HttpError(400, `Query parameter '${name}' must be one of ${allowed.join(', ')}; got ${JSON.stringify(raw)}.`);
  }
  return raw as T;
}

export function stringParam(query: Query, name: string, maxLength: number): string | undefined {
  const raw = query[name];
  if (raw === undefined) return undefined;
  if (typeof raw !== 'string' || raw.length > maxLength) {
    throw new HttpError(400, `Query parameter '${name}' must be one string of at most ${maxLength} characters.`);
  }
  return raw;
}

export function pageQuery(query: Query): PageQuery {
  return {
    offset: intParam(query, 'offset', 0, 0, Number.MAX_SAFE_INTEGER),
    limit: intParam(query, 'limit', DEFAULT_PAGE, 1, MAX_PAGE),
    reverse: enumParam<PageOrder>(query, 'order', ['asc', 'desc']) === 'desc',
  };
}

// Every field of the API's CreateWantBody, and only those: a field added there fails the compile here.
const WANT_FIELD_SET: Record<keyof CreateWantBody, true> = {
  partitions: true,
  comment: true,
  data_timestamp: true,
  ttl_seconds: true,
  sla_seconds: true,
  rebuild: true,
  priority: true,
};
const WANT_FIELDS: ReadonlySet<string> = new Set(Object.keys(WANT_FIELD_SET));
const TAINT_FIELDS = new Set(['partitions', 'reason', 'downstream']);
const BACKFILL_FIELD_SET: Record<keyof CreateBackfillBody, true> = {
  pattern: true,
  partitions: true,
  policy: true,
  priority: true,
  max_concurrent_job_runs: true,
  comment: true,
};
const BACKFILL_FIELDS: ReadonlySet<string> = new Set(Object.keys(BACKFILL_FIELD_SET));
/** A backfill's cap fits any machine; a bigger one is a typo. */
export const MAX_BACKFILL_CAP = 10_000;

/**
 * What is wrong with a ref's shape, or undefined when nothing is (whether a job produces it is the graph's
 * question). `where` names it in the message: `partitions[2]`. Shared by the JSON API and the Connect service.
 */
export function refProblem(ref: unknown, where: string): string | undefined {
  if (typeof ref !== 'string') return `${where} must be a string, got ${typeName(ref)}.`;
  if (ref.trim() === '') return `${where} is empty; a partition ref looks like 'daily/revenue/date=2026-01-05'.`;
  if (ref.length > MAX_REF_LENGTH) return `${where} is ${ref.length} characters long; the limit is ${MAX_REF_LENGTH}.`;
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(ref)) return `${where} (${JSON.stringify(ref)}) contains a control character.`;
  return undefined;
}

/** A ref of a JSON request, checked for shape: the ref, or a 400. */
export function checkRef(ref: unknown, where: string): string {
  const problem = refProblem(ref, where);
  if (problem !== undefined) throw new HttpError(400, problem);
  return ref as string;
}

/** A JSON object body with only `allowed` fields, or a 400 that shows what a good one looks like. */
function objectBody(body: unknown, allowed: ReadonlySet<string>, what: string, example: string): Record<string, unknown> {
  if (body === undefined) throw new HttpError(400, `Expected a JSON body (Content-Type: application/json) like ${example}.`);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new HttpError(400, `The body must be a JSON object, got ${typeName(body)}.`);
  }
  const b = body as { [K in keyof CreateWantBody]?: unknown };
  for (const key of Object.keys(b)) {
    if (!allowed.has(key)) throw new HttpError(400, `Unknown field '${key}'; ${what} takes ${[...allowed].join(', ')}.`);
  }
  return b;
}

/** The body's `partitions`: a non-empty array of well-formed refs, duplicates dropped. */
function partitionsField(b: Record<string, unknown>, what: string, max = MAX_PARTITIONS_PER_WANT): string[] {
  if (!Array.isArray(b.partitions) || b.partitions.length === 0) {
    throw new HttpError(400, "Field 'partitions' must be a non-empty array of partition refs.");
  }
  if (b.partitions.length > max) {
    throw new HttpError(400, `${what} may name at most ${max} partitions; got ${b.partitions.length}. Split it.`);
  }
  return [...new Set(b.partitions.map((ref, i) => checkRef(ref, `partitions[${i}]`)))];
}

/** An optional free-text field ('' when absent). */
function textField(b: Record<string, unknown>, name: string): string {
  const value = b[name] ?? '';
  if (typeof value !== 'string' || value.length > MAX_COMMENT_LENGTH) {
    throw new HttpError(400, `Field '${name}' must be a string of at most ${MAX_COMMENT_LENGTH} characters.`);
  }
  return value;
}

export function parseCreateTaint(body: unknown): CreateTaintRequest {
  const b = objectBody(body, TAINT_FIELDS, 'a taint', '{"partitions": ["raw/orders/date=2026-01-05"], "reason": "late rows", "downstream": true}');
  const partitions = partitionsField(b, 'A taint');
  const reason = textField(b, 'reason');
  const downstream = b.downstream ?? false;
  if (typeof downstream !== 'boolean') throw new HttpError(400, `Field 'downstream' must be true or false, got ${JSON.stringify(downstream)}.`);
  return { partitions, reason, downstream };
}

export function parseCreateWant(body: unknown): CreateWantRequest {
  const b = objectBody(body, WANT_FIELDS, 'a want', '{"partitions": ["daily/revenue/date=2026-01-05"]}');
  const partitions = partitionsField(b, 'A want');
  const comment = textField(b, 'comment');
  return {
    partitions,
    comment,
    data_timestamp: parseTimestamp(b.data_timestamp),
    ttl_seconds: seconds(b.ttl_seconds, 'ttl_seconds'),
    sla_seconds: seconds(b.sla_seconds, 'sla_seconds'),
    rebuild: rebuildPolicy(b.rebuild),
    priority: priorityField(b.priority),
  };
}

/**
 * A backfill: its range as a brace pattern (expanded here, up to 100,000 refs) or a list, what to rebuild in it,
 * its priority and cap.
 */
export function parseCreateBackfill(body: unknown): CreateBackfillRequest {
  const example = '{"pattern": "daily/revenue/date={2026-01-01..2026-03-31}", "policy": "missing", "max_concurrent_job_runs": 2}';
  const b = objectBody(body, BACKFILL_FIELDS, 'a backfill', example);
  if ((b.pattern === undefined) === (b.partitions === undefined)) {
    throw new HttpError(400, `Give exactly one of 'pattern' (a brace pattern) and 'partitions' (a list of refs), like ${example}.`);
  }
  let partitions: string[];
  let pattern = '';
  if (b.pattern !== undefined) {
    if (typeof b.pattern !== 'string' || b.pattern.length > MAX_REF_LENGTH) {
      throw new HttpError(400, `Field 'pattern' must be a string of at most ${MAX_REF_LENGTH} characters, like ${JSON.stringify('h={00..23}')}.`);
    }
    pattern = b.pattern;
    try {
      partitions = expandPattern(pattern, MAX_EXPANSION);
    } catch (err) {
      if (err instanceof PatternError) throw new HttpError(400, `Field 'pattern': ${err.message}`);
      throw err;
    }
    partitions.forEach((ref, i) => checkRef(ref, `the pattern's ref ${i + 1}`));
  } else {
    partitions = partitionsField(b, 'A backfill', MAX_EXPANSION);
  }
  const policy = b.policy ?? 'missing';
  if (typeof policy !== 'string' || !(BACKFILL_POLICIES as readonly string[]).includes(policy)) {
    throw new HttpError(
      400,
      `Field 'policy' must be one of ${BACKFILL_POLICIES.join(', ')} (what was never built; also what failed or is tainted; everything), got ${JSON.stringify(policy)}.`,
    );
  }
  const cap = b.max_concurrent_job_runs ?? 0;
  if (typeof cap !== 'number' || !Number.isInteger(cap) || cap < 0 || cap > MAX_BACKFILL_CAP) {
    throw new HttpError(400, `Field 'max_concurrent_job_runs' must be a whole number from 0 (no cap) to ${MAX_BACKFILL_CAP}, got ${JSON.stringify(cap)}.`);
  }
  return {
    partitions,
    pattern,
    policy: policy as BackfillPolicy,
    priority: priorityField(b.priority),
    max_concurrent_job_runs: cap,
    comment: textField(b, 'comment'),
  };
}

/** Priorities fit the log's int32 with room to spare; ordering is all they are for. */
export const MAX_PRIORITY = 1_000_000;

function priorityField(value: unknown): number {
  if (value === undefined || value === null) return 0;
  if (typeof value !== 'number' || !Number.isInteger(value) || Math.abs(value) > MAX_PRIORITY) {
    throw new HttpError(400, `Field 'priority' must be a whole number from -${MAX_PRIORITY} to ${MAX_PRIORITY} (higher runs first; default 0), got ${JSON.stringify(value)}.`);
  }
  return value;
}

function rebuildPolicy(value: unknown): RebuildPolicy {
  if (value === undefined || value === null) return 'missing';
  if (typeof value !== 'string' || !(REBUILD_POLICIES as readonly string[]).includes(value)) {
    throw new HttpError(
      400,
      `Field 'rebuild' must be one of ${REBUILD_POLICIES.join(', ')} (what is absent; also what is stale or tainted; everything), got ${JSON.stringify(value)}.`,
    );
  }
  return value as RebuildPolicy;
}

function seconds(value: unknown, name: string): number {
  if (value === undefined || value === null) return 0;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new HttpError(400, `Field '${name}' must be a whole number of seconds (0 or more), got ${JSON.stringify(value)}.`);
  }
  return value;
}

function parseTimestamp(value: unknown): number {
  if (value === undefined || value === null || value === '') return 0;
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return value;
  if (typeof value === 'string') {
    const ms = Date.parse(value);
    if (!Number.isNaN(ms) && ms >= 0) return ms;
  }
  throw new HttpError(400, `Field 'data_timestamp' must be an ISO 8601 time (e.g. 2026-01-05T00:00:00Z) or epoch milliseconds, got ${JSON.stringify(value)}.`);
}

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}
