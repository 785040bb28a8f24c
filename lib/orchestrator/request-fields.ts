/**
 * What the embedding API refuses of a write's fields before it fills the defaults, as the JSON API refuses them and in
 * its words: a field the body does not take (`priorty`, `maxConcurrentJobRuns`: dropped unseen, they made a want of
 * priority 0, a backfill of no cap of its own) or one of the wrong type. The JSON API's schemas (lib/api/schemas) and
 * sentences (api/body-check.ts), not a second list of fields that could drift from them.
 */
import type { TSchema } from '@sinclair/typebox';
import { bodyProblem, type BodyUse } from '../api/body-check.js';
import { CreateBackfillBodySchema } from '../api/schemas/backfills.js';
import { CreateTaintBodySchema } from '../api/schemas/taints.js';
import { CreateWantBodySchema } from '../api/schemas/wants.js';

export type WriteKind = 'want' | 'backfill' | 'taint';

/**
 * `what` as server/request-parsing.ts says it to a JSON client ("Unknown field 'x'; a want takes ..."); the example
 * is never shown for these (the only required field, partitions, is checked before, in the embedding API's words).
 */
const SHAPES: Record<WriteKind, { schema: TSchema; use: BodyUse }> = {
  want: { schema: CreateWantBodySchema, use: { what: 'a want', example: "{partitions: ['daily/revenue/date=2026-01-05']}" } },
  backfill: { schema: CreateBackfillBodySchema, use: { what: 'a backfill', example: "{partitions: ['daily/revenue/date=2026-01-05']}" } },
  taint: { schema: CreateTaintBodySchema, use: { what: 'a taint', example: "{partitions: ['raw/orders/date=2026-01-05']}" } },
};

/**
 * Why `request` (an object, as the caller gave it) has a field the JSON API's body would not take, or undefined. A
 * known field given as undefined or null counts as left out, as the schema and the defaults count it (request-defaults.ts).
 */
export function requestFieldsProblem(kind: WriteKind, request: object): string | undefined {
  const { schema, use } = SHAPES[kind];
  return bodyProblem(schema, request, use);
}
