/**
 * `platform.v1.PlatformService` messages in canonical proto3 JSON field names (camelCase). The `Proto*` shapes
 * have every field: what the server builds. On the wire proto3 JSON leaves out a field at its default (an empty
 * list or map, '', the first enum value), so a reader gets the `*Json` shapes, where every field may be missing.
 */
import type { DepType } from '../events/build-event.js';

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
