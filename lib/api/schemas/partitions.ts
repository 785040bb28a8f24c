/** `/api/partitions`: partitions, their builds and lineage. */
import { Type, type Static } from '@sinclair/typebox';
import type { PartitionView } from '../views.js';
import type { BuildView, LineageNode, LineageReply, PartitionDetailView } from '../partitions-change.js';
import { PARTITION_LOOKUP_MAX, type PartitionLookupBody, type PartitionLookupReply } from '../partition-lookup.js';
import { IsoTime, MAX_REF_LENGTH, Nullable, OneOf, PartitionRef, WholeNumber, type SameType } from './common.js';
import { ListQuery, MAX_PAGE, PageOf } from './pages.js';
import { PartitionStatusSchema } from './wants.js';

export const PartitionViewSchema = Type.Object(
  {
    partition_ref: Type.String(),
    status: PartitionStatusSchema,
    job_run_id: Type.String(),
    created_at: IsoTime,
    updated_at: IsoTime,
    build_id: Nullable(Type.String()),
    stale: Type.Boolean(),
  },
  { $id: 'PartitionView', additionalProperties: false },
);
true satisfies SameType<Static<typeof PartitionViewSchema>, PartitionView>;

export const PartitionPageSchema = PageOf(PartitionViewSchema, 'PartitionPage');

export const PartitionListQuerySchema = ListQuery({
  status: Type.Optional(PartitionStatusSchema),
  prefix: Type.Optional(Type.String({ maxLength: MAX_REF_LENGTH, description: 'Only refs that start with it.' })),
});

export const PartitionLookupBodySchema = Type.Object(
  {
    refs: Type.Array(PartitionRef, { minItems: 1, maxItems: PARTITION_LOOKUP_MAX, description: `The refs to read, at most ${PARTITION_LOOKUP_MAX}.` }),
  },
  { $id: 'PartitionLookupBody', additionalProperties: false },
);
true satisfies SameType<Static<typeof PartitionLookupBodySchema>, PartitionLookupBody>;

export const PartitionLookupReplySchema = Type.Object(
  {
    data: Type.Array(PartitionViewSchema, { description: 'The partitions of the refs seen, in the order asked, each once.' }),
    unknown: Type.Array(Type.String(), { description: 'The refs asked for that no partition has been seen for, in the order asked.' }),
  },
  { $id: 'PartitionLookupReply', additionalProperties: false },
);
true satisfies SameType<Static<typeof PartitionLookupReplySchema>, PartitionLookupReply>;

export const BuildViewSchema = Type.Object(
  {
    build_id: Type.String(),
    job_run_id: Type.String(),
    job_label: Type.String(),
    built_at: IsoTime,
    inputs: Type.Array(Type.Object({ partition_ref: Type.String(), build_id: Type.String() }, { additionalProperties: false }), {
      description: 'The builds of its inputs it consumed: the first 100; `inputs_total` counts them all.',
    }),
    inputs_total: Type.Integer({ minimum: 0 }),
  },
  { $id: 'BuildView', additionalProperties: false },
);
true satisfies SameType<Static<typeof BuildViewSchema>, BuildView>;

export const PartitionDetailSchema = Type.Object(
  {
    partition_ref: Type.String(),
    status: PartitionStatusSchema,
    stale: Type.Boolean(),
    stale_reasons: Type.Array(Type.String(), { description: 'The first 100; `stale_reasons_total` counts them all.' }),
    stale_reasons_total: Type.Integer({ minimum: 0 }),
    build_tainted: Type.Boolean({ description: 'Its current build was tainted and nothing has replaced it yet (also while rebuilt, and after a rebuild failed).' }),
    rebuild_failed: Type.Boolean({
      description: "Its latest run was a rebuild that failed for good: its build is kept (status 'live' or 'tainted', job_run_id the failed run) and the wants that needed the rebuild failed. False again once a run, a taint or a build comes.",
    }),
    current_build: Nullable(BuildViewSchema),
    builds: Type.Array(BuildViewSchema, { description: 'Newest first.' }),
    builds_total: Type.Integer({ minimum: 0 }),
    downstream: Type.Array(Type.String()),
    downstream_total: Type.Integer({ minimum: 0 }),
    job_run_id: Type.String(),
    created_at: IsoTime,
    updated_at: IsoTime,
  },
  { $id: 'PartitionDetail', additionalProperties: false },
);
true satisfies SameType<Static<typeof PartitionDetailSchema>, PartitionDetailView>;

export const PartitionDetailQuerySchema = Type.Object({
  builds_offset: Type.Optional(WholeNumber(0, Number.MAX_SAFE_INTEGER)),
  builds_limit: Type.Optional(WholeNumber(1, MAX_PAGE, 'Default 20.')),
  downstream_limit: Type.Optional(WholeNumber(1, MAX_PAGE, 'Default 100.')),
});

export const LineageDirectionSchema = OneOf(['upstream', 'downstream'] as const);

export const LineageQuerySchema = Type.Object({
  direction: Type.Optional(LineageDirectionSchema),
  depth: Type.Optional(WholeNumber(1, 50, 'Default 3.')),
});

/** A tree: `children` refer back to this schema (a named component of the document). */
export const LineageNodeSchema = Type.Recursive(
  (Self) =>
    Type.Object(
      {
        partition_ref: Type.String(),
        build_id: Nullable(Type.String()),
        status: Type.Union([PartitionStatusSchema, Type.Literal('absent')]),
        stale: Type.Boolean(),
        rebuilt_since: Type.Boolean({
          description:
            "Upstream: the input was rebuilt since its consumer's build took this one. Downstream: this consumer took an earlier build of its parent than the parent's current one (it is stale since).",
        }),
        children: Type.Array(Self),
        children_total: Type.Integer({
          description:
            "How many inputs (upstream) or consumers (downstream: of its current build and of the 16 builds before it) it has; children lists them unless truncated.",
          minimum: 0,
        }),
        truncated: Type.Boolean({ description: 'Children left out: the depth, or the answer\'s max_nodes, ran out here.' }),
      },
      { additionalProperties: false },
    ),
  { $id: 'LineageNode' },
);
true satisfies SameType<Static<typeof LineageNodeSchema>, LineageNode>;

export const LineageReplySchema = Type.Object(
  {
    direction: LineageDirectionSchema,
    depth: Type.Integer({ minimum: 1 }),
    max_nodes: Type.Integer({ minimum: 1 }),
    root: LineageNodeSchema,
  },
  { $id: 'LineageReply', additionalProperties: false },
);
true satisfies SameType<Static<typeof LineageReplySchema>, LineageReply>;
