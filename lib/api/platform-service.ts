/**
 * `platform.v1.PlatformService` messages in canonical proto3 JSON field names (camelCase). The `Proto*` shapes
 * have every field: what the server builds. On the wire proto3 JSON leaves out a field at its default (an empty
 * list or map, '', the first enum value), so a reader gets the `*Json` shapes, where every field may be missing.
 */
import type { DepType } from '../events/build-event.js';

/**
 * What one request may cost. 20,000 partitions: two levels of the largest request (10,000 refs and an input each).
 * 50,000 inputs: the inputs are most of an answer, ~55 bytes each in proto3 JSON, so an answer stays under about
 * 3.5 MB; its encoding is the one step not cut into slices, and protobufjs's JSON writer takes ~100 ms for 50,000.
 * Partitions are the refs asked for and the MATERIALIZE inputs reached from them; inputs count QUERY ones too.
 * Measured at the limits: a graph of one ref and 19,999 inputs answers 2.75 MB in 0.85 s. Past either limit the
 * request is refused (`resource_exhausted`) at the point it is known.
 */
export const RPC_GRAPH_BUDGET: { readonly maxPartitions: number; readonly maxInputs: number } = {
  maxPartitions: 20_000,
  maxInputs: 50_000,
};

export interface ProtoDataDep {
  depType: DepType;
  partitionRef: string;
}

export interface ProtoJobConfig {
  outputs: string[];
  inputs: ProtoDataDep[];
  args: string[];
  env: Record<string, string>;
}

export interface ProtoTask {
  jobLabel: string;
  config: ProtoJobConfig;
}

export interface ProtoJobGraph {
  outputs: string[];
  nodes: ProtoTask[];
}

export interface ProtoGraphAnalyzeResponse {
  graph: ProtoJobGraph;
}

export interface ProtoJobConfigResponse {
  configs: ProtoJobConfig[];
}

/** A message as read off the wire: each field may be missing, down through lists and nested messages (not maps). */
export type ProtoJson<T> = { [K in keyof T]?: FieldJson<T[K]> };
type FieldJson<V> =
  V extends ReadonlyArray<infer E> ? Array<FieldJson<E>> : V extends object ? (string extends keyof V ? V : ProtoJson<V>) : V;

export type DataDepJson = ProtoJson<ProtoDataDep>;
export type JobConfigJson = ProtoJson<ProtoJobConfig>;
export type TaskJson = ProtoJson<ProtoTask>;
export type JobGraphJson = ProtoJson<ProtoJobGraph>;
export type GraphAnalyzeResponseJson = ProtoJson<ProtoGraphAnalyzeResponse>;
export type JobConfigResponseJson = ProtoJson<ProtoJobConfigResponse>;
