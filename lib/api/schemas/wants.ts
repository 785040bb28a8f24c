/** `/api/wants`: what a client sends to want partitions, and the want as the API shows it. */
import { Type, type Static } from '@sinclair/typebox';
import { REBUILD_POLICIES } from '../../events/build-event.js';
import { WANT_STATUSES, PARTITION_STATUSES } from '../../state/build-state.js';
import type { CreateWantBody, CreateWantReply } from '../create-want.js';
import type { WantView } from '../views.js';
import { WANT_TREE_DEFAULT, WANT_TREE_MAX, type WantTreeNode, type WantTreeReply } from '../want-tree.js';
import { IsoTime, Nullable, OneOf, PartitionRef, WholeNumber, type SameType } from './common.js';
import { ListQuery, PageOf } from './pages.js';

import { MAX_PARTITIONS_PER_WANT } from '../create-want.js';
export { MAX_PARTITIONS_PER_WANT };
export const MAX_COMMENT_LENGTH = 10_000;
/** Priorities fit the log's int32 with room to spare; ordering is all they are for. */
export const MAX_PRIORITY = 1_000_000;

export const WantStatusSchema = OneOf(WANT_STATUSES, { $id: 'WantStatus' });
export const PartitionStatusSchema = OneOf(PARTITION_STATUSES, { $id: 'PartitionStatus' });
export const RebuildPolicySchema = OneOf(REBUILD_POLICIES, {
  description: 'What to rebuild: missing (default: what is absent), stale (also what is stale or tainted), all (everything), absent (only what was never built nor attempted).',
});

export const Comment = Type.String({ maxLength: MAX_COMMENT_LENGTH });
export const Priority = WholeNumber(-MAX_PRIORITY, MAX_PRIORITY, 'Higher runs first when runs wait for capacity; default 0.');
/**
 * A want's times must stay times: a data timestamp before the year 9900 plus at most 100 years of ttl or sla is
 * still a date `toISOString` writes with four digits (an unbounded one was recorded, then failed every read).
 */
export const MAX_DATA_TIMESTAMP_MS = Date.UTC(9900, 0, 1) - 1;
export const MAX_WANT_SECONDS = 100 * 366 * 86_400;
const Seconds = WholeNumber(0, MAX_WANT_SECONDS, 'Whole seconds (at most 100 years), 0 (default) for none.');

export const CreateWantBodySchema = Type.Object(
  {
    partitions: Type.Array(PartitionRef, { minItems: 1, maxItems: MAX_PARTITIONS_PER_WANT, description: 'Duplicates are dropped, order kept.' }),
    comment: Type.Optional(Nullable(Comment)),
    data_timestamp: Type.Optional(
      Type.Union([Type.String({ maxLength: 64 }), WholeNumber(0, MAX_DATA_TIMESTAMP_MS), Type.Null()], {
        description: 'ISO 8601 time or epoch milliseconds, from 1970 to before the year 9900: ttl and sla count from it.',
        'x-expects': 'an ISO 8601 time (e.g. 2026-01-05T00:00:00Z) or epoch milliseconds, from 1970 to before the year 9900',
      }),
    ),
    ttl_seconds: Type.Optional(Nullable(Seconds)),
    sla_seconds: Type.Optional(Nullable(Seconds)),
    rebuild: Type.Optional(Nullable(RebuildPolicySchema)),
    priority: Type.Optional(Nullable(Priority)),
  },
  { $id: 'CreateWantBody', additionalProperties: false },
);
// The interface is what a client may send, the schema also takes null for "absent".
true satisfies SameType<Required<CreateWantBody>, { [K in keyof CreateWantBody]-?: Exclude<Static<typeof CreateWantBodySchema>[K], null> }>;


export const WantViewSchema = Type.Object(
  {
    want_id: Type.String(),
    partitions: Type.Array(Type.String(), { description: 'The first 10,000 (in a list of wants, the first 20); `partitions_total` counts them all.' }),
    partitions_total: Type.Integer({ minimum: 0 }),
    status: WantStatusSchema,
    created_at: IsoTime,
    updated_at: IsoTime,
    comment: Type.String(),
    data_timestamp: Nullable(IsoTime),
    ttl_seconds: Type.Integer({ minimum: 0 }),
    sla_seconds: Type.Integer({ minimum: 0 }),
    sla_deadline: Nullable(IsoTime),
    expires_at: Nullable(IsoTime),
    source: Type.String(),
    parent_want_id: Nullable(Type.String()),
    root_want_id: Type.String(),
    child_want_ids: Type.Array(Type.String(), { description: 'The latest 10,000 (in a list, 20); `child_wants_total` counts them all.' }),
    child_wants_total: Type.Integer({ minimum: 0 }),
    job_run_ids: Type.Array(Type.String(), { description: 'The latest 10,000 (in a list, 20); `job_runs_total` counts them all.' }),
    job_runs_total: Type.Integer({ minimum: 0 }),
    partition_status: Type.Record(Type.String(), Type.Union([PartitionStatusSchema, Type.Literal('absent')]), { description: 'The status of each partition listed in `partitions`.' }),
    cancel_reason: Nullable(Type.String()),
    rebuild: RebuildPolicySchema,
    sla_missed: Type.Boolean(),
    rebuilt: Type.Array(Type.String(), { description: 'Partitions it or its derived wants built again: the first 1000 (in a list, 20).' }),
    rebuilt_total: Type.Integer({ minimum: 0, description: 'How many builds replaced one for it and its derived wants, all of them (a partition rebuilt twice counts twice).' }),
    priority: Type.Integer(),
    backfill_id: Nullable(Type.String()),
    max_concurrent_job_runs: Type.Integer({ minimum: 0 }),
    pattern: Type.String(),
    schedule_tick: Nullable(IsoTime),
  },
  { $id: 'WantView', additionalProperties: false },
);
true satisfies SameType<Static<typeof WantViewSchema>, WantView>;

export const WantPageSchema = PageOf(WantViewSchema, 'WantPage');

export const CreateWantReplySchema = Type.Object({ want_id: Type.String(), want: WantViewSchema }, { $id: 'CreateWantReply', additionalProperties: false });
true satisfies SameType<Static<typeof CreateWantReplySchema>, CreateWantReply>;

export const WantListQuerySchema = ListQuery({ status: Type.Optional(WantStatusSchema) });

export const WantTreeQuerySchema = Type.Object({
  limit: Type.Optional(WholeNumber(1, WANT_TREE_MAX, `How many of the tree's wants to list, breadth first; default ${WANT_TREE_DEFAULT}.`)),
});

export const WantTreeNodeSchema = Type.Object(
  {
    want_id: Type.String(),
    parent_want_id: Nullable(Type.String()),
    depth: Type.Integer({ minimum: 0 }),
    status: WantStatusSchema,
    source: Type.String(),
    partitions: Type.Array(Type.String(), { description: 'The first 3; `partitions_total` counts them all.' }),
    partitions_total: Type.Integer({ minimum: 0 }),
    job_runs_total: Type.Integer({ minimum: 0 }),
    children_total: Type.Integer({ minimum: 0, description: 'Its derived wants, listed here or not.' }),
  },
  { $id: 'WantTreeNode', additionalProperties: false },
);
true satisfies SameType<Static<typeof WantTreeNodeSchema>, WantTreeNode>;

export const WantTreeReplySchema = Type.Object(
  {
    want_id: Type.String(),
    nodes: Type.Array(WantTreeNodeSchema, { description: 'Breadth first: the want, then the wants derived from it level by level, each after its parent.' }),
    truncated: Type.Boolean({ description: 'Wants of the tree past `limit` were left out.' }),
    limit: Type.Integer({ minimum: 1 }),
  },
  { $id: 'WantTreeReply', additionalProperties: false },
);
true satisfies SameType<Static<typeof WantTreeReplySchema>, WantTreeReply>;
