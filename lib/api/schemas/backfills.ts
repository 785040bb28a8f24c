/** `/api/backfills`: a range of partitions built as one want with its own cap and priority. */
import { Type, type Static } from '@sinclair/typebox';
import { BACKFILL_POLICIES } from '../../orchestrator/command.js';
import { MAX_EXPANSION } from '../../graph/partition-pattern.js';
import type { BackfillView, CreateBackfillBody, CreateBackfillReply } from '../backfills.js';
import { IsoTime, MAX_REF_LENGTH, Nullable, OneOf, PartitionRef, WholeNumber, type SameType } from './common.js';
import { PageOf } from './pages.js';
import { Comment, Priority, WantStatusSchema } from './wants.js';

/** A backfill's cap fits any machine; a bigger one is a typo. */
export const MAX_BACKFILL_CAP = 10_000;

export const BackfillPolicySchema = OneOf(BACKFILL_POLICIES, {
  description: 'missing (default): what was never built; failed: also what failed or is tainted; all: everything.',
});

export const CreateBackfillBodySchema = Type.Object(
  {
    pattern: Type.Optional(
      Type.String({ maxLength: MAX_REF_LENGTH, description: "A brace pattern, like 'daily/revenue/date={2026-01-01..2026-03-31}'. Exactly one of pattern and partitions." }),
    ),
    partitions: Type.Optional(Type.Array(PartitionRef, { minItems: 1, maxItems: MAX_EXPANSION })),
    policy: Type.Optional(Nullable(BackfillPolicySchema)),
    priority: Type.Optional(Nullable(Priority)),
    max_concurrent_job_runs: Type.Optional(Nullable(WholeNumber(0, MAX_BACKFILL_CAP, 'Most job runs serving it at once; 0 (default): no cap of its own.'))),
    comment: Type.Optional(Nullable(Comment)),
  },
  { $id: 'CreateBackfillBody', additionalProperties: false },
);
true satisfies SameType<Required<CreateBackfillBody>, { [K in keyof CreateBackfillBody]-?: Exclude<Static<typeof CreateBackfillBodySchema>[K], null> }>;

export const CreateBackfillReplySchema = Type.Object(
  { backfill_id: Type.String(), want_id: Type.String(), partitions: Type.Integer({ minimum: 1, description: 'How many partitions its range holds.' }) },
  { $id: 'CreateBackfillReply', additionalProperties: false },
);
true satisfies SameType<Static<typeof CreateBackfillReplySchema>, CreateBackfillReply>;

const Count = Type.Integer({ minimum: 0 });

export const BackfillViewSchema = Type.Object(
  {
    backfill_id: Type.String(),
    want_id: Type.String(),
    status: WantStatusSchema,
    pattern: Type.String(),
    partitions: Count,
    policy: BackfillPolicySchema,
    priority: Type.Integer(),
    max_concurrent_job_runs: Count,
    comment: Type.String(),
    counts: Type.Object(
      { live: Count, failed: Count, skipped: Count, building: Count, waiting: Count, pending: Count, canceled: Count },
      { additionalProperties: false },
    ),
    progress: Type.Number({ minimum: 0, maximum: 1 }),
    running_job_runs: Count,
    created_at: IsoTime,
    updated_at: IsoTime,
    cancel_reason: Nullable(Type.String()),
  },
  { $id: 'BackfillView', additionalProperties: false },
);
true satisfies SameType<Static<typeof BackfillViewSchema>, BackfillView>;

export const BackfillPageSchema = PageOf(BackfillViewSchema, 'BackfillPage');
