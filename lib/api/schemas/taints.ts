/** `/api/taints`: marks built partitions for rebuild. */
import { Type, type Static } from '@sinclair/typebox';
import { TAINT_PARTITIONS_DEFAULT, TAINT_PARTITIONS_MAX, type CreateTaintBody, type TaintReply, type TaintView } from '../partitions-change.js';
import { IsoTime, Nullable, PartitionRef, WholeNumber, type SameType } from './common.js';
import { PageOf } from './pages.js';
import { Comment, MAX_PARTITIONS_PER_WANT } from './wants.js';

export const CreateTaintBodySchema = Type.Object(
  {
    partitions: Type.Array(PartitionRef, { minItems: 1, maxItems: MAX_PARTITIONS_PER_WANT }),
    reason: Type.Optional(Nullable(Comment)),
    downstream: Type.Optional(Nullable(Type.Boolean({ description: 'Taint too every partition whose current build (transitively) consumed a tainted build.' }))),
  },
  { $id: 'CreateTaintBody', additionalProperties: false },
);
true satisfies SameType<Required<CreateTaintBody>, { [K in keyof CreateTaintBody]-?: Exclude<Static<typeof CreateTaintBodySchema>[K], null> }>;

export const TaintReplySchema = Type.Object(
  {
    taint_id: Type.String(),
    partitions: Type.Array(Type.String(), { description: `The refs tainted, downstream ones included: the first ${TAINT_PARTITIONS_DEFAULT} (GET /api/taints/:id pages them all).` }),
    partitions_total: Type.Integer({ minimum: 0 }),
  },
  { $id: 'TaintReply', additionalProperties: false },
);
true satisfies SameType<Static<typeof TaintReplySchema>, TaintReply>;

export const TaintViewSchema = Type.Object(
  {
    taint_id: Type.String(),
    reason: Type.String(),
    downstream: Type.Boolean(),
    created_at: IsoTime,
    partitions: Type.Array(Type.String(), { description: 'The detail: a page of them (partitions_offset, partitions_limit); lists: the first 20.' }),
    partitions_total: Type.Integer({ minimum: 0 }),
    still_tainted: Type.Integer({ minimum: 0, description: 'Of its partitions, how many are still tainted (not rebuilt since).' }),
  },
  { $id: 'TaintView', additionalProperties: false },
);
true satisfies SameType<Static<typeof TaintViewSchema>, TaintView>;

export const TaintPageSchema = PageOf(TaintViewSchema, 'TaintPage');

export const TaintDetailQuerySchema = Type.Object({
  partitions_offset: Type.Optional(WholeNumber(0, Number.MAX_SAFE_INTEGER, 'Skip this many of its partitions.')),
  partitions_limit: Type.Optional(WholeNumber(1, TAINT_PARTITIONS_MAX, `How many of its partitions; default ${TAINT_PARTITIONS_DEFAULT}.`)),
});
