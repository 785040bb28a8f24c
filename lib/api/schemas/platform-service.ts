/**
 * `platform.v1.PlatformService` in the Connect protocol's JSON codec (canonical proto3 JSON: camelCase names, the
 * proto names accepted too; a field at its default is left out, so every field of a reply may be missing).
 * The server parses these with protobufjs from the .proto; these schemas document the wire and check replies.
 */
import { Type } from '@sinclair/typebox';
import { OneOf, PartitionRef } from './common.js';

const OutputRefs = Type.Array(PartitionRef, { minItems: 1, maxItems: 10_000 });

/** JobConfigRequest and GraphAnalyzeRequest: the refs, under the JSON name or the proto name (not both). */
export const OutputRefsRequestSchema = Type.Union(
  [Type.Object({ outputRefs: OutputRefs }, { additionalProperties: false }), Type.Object({ output_refs: OutputRefs }, { additionalProperties: false })],
  { $id: 'OutputRefsRequest' },
);

const JobConfigJsonSchema = Type.Object(
  {
    outputs: Type.Optional(Type.Array(Type.String())),
    inputs: Type.Optional(Type.Array(Type.Object({ depType: Type.Optional(OneOf(['QUERY', 'MATERIALIZE'] as const)), partitionRef: Type.Optional(Type.String()) }))),
    args: Type.Optional(Type.Array(Type.String())),
    env: Type.Optional(Type.Record(Type.String(), Type.String())),
  },
  { $id: 'JobConfigJson' },
);

export const JobConfigResponseSchema = Type.Object({ configs: Type.Optional(Type.Array(JobConfigJsonSchema)) }, { $id: 'JobConfigResponse' });

export const GraphAnalyzeResponseSchema = Type.Object(
  {
    graph: Type.Optional(
      Type.Object({
        outputs: Type.Optional(Type.Array(Type.String())),
        nodes: Type.Optional(Type.Array(Type.Object({ jobLabel: Type.Optional(Type.String()), config: Type.Optional(JobConfigJsonSchema) }))),
      }),
    ),
  },
  { $id: 'GraphAnalyzeResponse' },
);
