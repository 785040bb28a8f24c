/**
 * What an embedding app may leave out of a write, filled as the JSON API fills it (server/request-parsing.ts): a
 * want of `{ partitions }` alone is a want with no comment, timestamp, ttl or sla, as `POST /api/wants` takes it.
 * Anything else given is passed on as given, for the planner's checks to refuse.
 */
import type { CreateBackfillRequest, CreateTaintRequest, CreateWantRequest } from './command.js';
import { isRequestObject } from './request-checks.js';

type WithDefaults<R, Required extends keyof R> = Pick<R, Required> & Partial<Omit<R, Required>>;

/** `createWant`'s request: only `partitions` is needed. */
export type WantInput = WithDefaults<CreateWantRequest, 'partitions'>;
/** `createBackfill`'s request: only `partitions` is needed (policy 'missing', no cap of its own). */
export type BackfillInput = WithDefaults<CreateBackfillRequest, 'partitions'>;
/** `createTaint`'s request: only `partitions` is needed (no reason, not downstream). */
export type TaintInput = WithDefaults<CreateTaintRequest, 'partitions'>;

/**
 * `r` with each field of `defaults` it leaves out filled. Undefined or null is left out, as the JSON API reads null
 * (an app that hands on a JSON body gets the same want); but `partitions`, which nothing fills, is refused as null.
 */
function filled<R>(r: object, defaults: Partial<R>): R {
  const out: Record<string, unknown> = { ...r };
  for (const [key, value] of Object.entries(out)) if (value === null && key !== 'partitions') delete out[key];
  for (const [key, value] of Object.entries(defaults)) if (out[key] === undefined) out[key] = value;
  return out as R;
}

export function wantWithDefaults(r: WantInput): CreateWantRequest {
  return isRequestObject(r) ? filled<CreateWantRequest>(r, { comment: '', data_timestamp: 0, ttl_seconds: 0, sla_seconds: 0 }) : (r as CreateWantRequest);
}

export function backfillWithDefaults(r: BackfillInput): CreateBackfillRequest {
  const defaults: Partial<CreateBackfillRequest> = { pattern: '', policy: 'missing', priority: 0, max_concurrent_job_runs: 0, comment: '' };
  return isRequestObject(r) ? filled<CreateBackfillRequest>(r, defaults) : (r as CreateBackfillRequest);
}

export function taintWithDefaults(r: TaintInput): CreateTaintRequest {
  return isRequestObject(r) ? filled<CreateTaintRequest>(r, { reason: '', downstream: false }) : (r as CreateTaintRequest);
}
