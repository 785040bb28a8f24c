/**
 * Turns query strings and JSON bodies into typed requests: the schemas of lib/api/schemas check them
 * (validate.ts words the 400), and what a schema cannot say is checked here (a time that does not parse, a
 * pattern's expansion, one of pattern and partitions).
 */
import { calendarMisfit } from '../api/calendar-time.js';
import { CreateBackfillBodySchema } from '../api/schemas/backfills.js';
import { CreateTaintBodySchema } from '../api/schemas/taints.js';
import { CreateWantBodySchema, MAX_DATA_TIMESTAMP_MS } from '../api/schemas/wants.js';
import { DEFAULT_PAGE, PageQuerySchema } from '../api/schemas/pages.js';
import type { CreateBackfillRequest, CreateTaintRequest, CreateWantRequest } from '../orchestrator/command.js';
import { MAX_EXPANSION, PatternError, expandPattern } from '../graph/partition-pattern.js';
import type { PageQuery } from './queries.js';
import { HttpError } from './http-error.js';
import { validateBody, validateQuery } from './validate.js';
import { refProblem } from '../orchestrator/request-checks.js';

type Query = Record<string, unknown>;

/** `?offset=&limit=&order=` with their defaults. */
export function pageQuery(query: Query): PageQuery {
  return toPageQuery(validateQuery(PageQuerySchema, query));
}

export function toPageQuery(page: { offset?: number; limit?: number; order?: 'asc' | 'desc' }): PageQuery {
  return { offset: page.offset ?? 0, limit: page.limit ?? DEFAULT_PAGE, reverse: page.order === 'desc' };
}


/** A ref of a JSON request, checked for shape: the ref, or a 400. */
export function checkRef(ref: unknown, where: string): string {
  const problem = refProblem(ref, where);
  if (problem !== undefined) throw new HttpError(400, problem);
  return ref as string;
}

export function parseCreateTaint(body: unknown): CreateTaintRequest {
  const b = validateBody(CreateTaintBodySchema, body, {
    what: 'a taint',
    example: '{"partitions": ["raw/orders/date=2026-01-05"], "reason": "late rows", "downstream": true}',
  });
  return { partitions: [...new Set(b.partitions)], reason: b.reason ?? '', downstream: b.downstream ?? false };
}

export function parseCreateWant(body: unknown): CreateWantRequest {
  const b = validateBody(CreateWantBodySchema, body, { what: 'a want', example: '{"partitions": ["daily/revenue/date=2026-01-05"]}' });
  return {
    partitions: [...new Set(b.partitions)],
    comment: b.comment ?? '',
    data_timestamp: parseTimestamp(b.data_timestamp),
    ttl_seconds: b.ttl_seconds ?? 0,
    sla_seconds: b.sla_seconds ?? 0,
    rebuild: b.rebuild ?? 'missing',
    priority: b.priority ?? 0,
  };
}

/**
 * A backfill: its range as a brace pattern (expanded here, up to 100,000 refs) or a list, what to rebuild in it,
 * its priority and cap.
 */
export function parseCreateBackfill(body: unknown): CreateBackfillRequest {
  const example = '{"pattern": "daily/revenue/date={2026-01-01..2026-03-31}", "policy": "missing", "max_concurrent_job_runs": 2}';
  const b = validateBody(CreateBackfillBodySchema, body, { what: 'a backfill', example });
  // Either is optional in the schema; exactly one is a rule JSON Schema would word as an unreadable oneOf error.
  if ((b.pattern === undefined) === (b.partitions === undefined)) {
    throw new HttpError(400, `Give exactly one of 'pattern' (a brace pattern) and 'partitions' (a list of refs), like ${example}.`);
  }
  let partitions: string[];
  let pattern = '';
  if (b.pattern !== undefined) {
    pattern = b.pattern;
    if (pattern.trim() === '') throw new HttpError(400, `Field 'pattern' is empty: give a brace pattern, like ${example}.`);
    try {
      partitions = expandPattern(pattern, MAX_EXPANSION);
    } catch (err) {
      if (err instanceof PatternError) throw new HttpError(400, `Field 'pattern': ${err.message}`);
      throw err;
    }
    partitions.forEach((ref, i) => checkRef(ref, `the pattern's ref ${i + 1}`));
  } else {
    partitions = [...new Set(b.partitions)];
  }
  return {
    partitions,
    pattern,
    policy: b.policy ?? 'missing',
    priority: b.priority ?? 0,
    max_concurrent_job_runs: b.max_concurrent_job_runs ?? 0,
    comment: b.comment ?? '',
  };
}

/** The schema takes a string or epoch milliseconds; a string must also be a time Date.parse reads. */
function parseTimestamp(value: string | number | null | undefined): number {
  if (value === undefined || value === null || value === '') return 0;
  if (typeof value === 'number') return value;
  const ms = Date.parse(value);
  const misfit = calendarMisfit(value);
  if (misfit) throw new HttpError(400, `Field 'data_timestamp' names no time there is: ${misfit} (got ${JSON.stringify(value)}).`);
  if (!Number.isNaN(ms) && ms >= 0 && ms <= MAX_DATA_TIMESTAMP_MS) return ms;
  throw new HttpError(
    400,
    `Field 'data_timestamp' must be an ISO 8601 time (e.g. 2026-01-05T00:00:00Z) or epoch milliseconds, from 1970 to before the year 9900, got ${JSON.stringify(value)}.`,
  );
}


