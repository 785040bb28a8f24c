import { availableParallelism } from 'node:os';
import type { DataDep } from '../events/build-event.js';
import type { ScheduleDefinition } from './schedule-definition.js';

/**
 * One job of the graph as `platform.json` declares it, after validation and defaults.
 *
 * `outputs` are regular-expression sources matched against the whole ref (`^(?:src)$`). For a declarative job,
 * `inputs[].partition_ref`, `args` and the values of `env` are templates: `${name}` is replaced by the named group
 * `name` of the output match. A config-program job (`config` present) gets its inputs/args/env from the program, so
 * those three are empty for it.
 */
export interface JobDefinition {
  label: string;
  /** Regex sources; each is matched against the whole ref. Never empty. */
  outputs: string[];
  /** Templates (declarative jobs only). */
  inputs: DataDep[];
  /** Templates (declarative jobs only). */
  args: string[];
  /** Values are templates (declarative jobs only). */
  env: Record<string, string>;
  /** argv prefix of a job run; the JobConfig's args are appended. Never empty. */
  exec: string[];
  /** Config program argv prefix; the refs to configure are appended. */
  config?: string[];
  /** Extra attempts after a failure. Default 0. */
  retries: number;
  /** Wall-clock limit of one job run; 0 = none. */
  timeout_seconds: number;
  /** Most runs of this job at once; 0 = unlimited. */
  max_concurrency: number;
  /** A label for the job's code: changing it makes the partitions the job built stale. */
  version?: string;
  /** Refs of this job ready at the same time are built by one run, up to `max_partitions` of them. */
  batch?: BatchPolicy;
}

export interface BatchPolicy {
  max_partitions: number;
  /** How long a ready ref may wait for others to fill its batch; 0: a batch is what is ready in a step. */
  max_wait_ms: number;
}

export interface GraphDefinition {
  /** Most job runs at once across the graph. Default `os.availableParallelism()`. */
  max_concurrent_job_runs: number;
  jobs: JobDefinition[];
  /** Cron schedules that make wants (default none). */
  schedules: ScheduleDefinition[];
  /** What is kept of the past; absent: everything. */
  retention?: RetentionPolicy;
}

export interface RetentionPolicy {
  /** The log directories of finished job runs are removed this many days after the run ended. */
  job_logs_days?: number;
  /** The event log keeps its newest this many events; the state of older ones lives on in the compaction base. */
  events_keep?: number;
}

export function defaultMaxConcurrentJobRuns(): number {
  return availableParallelism();
}

/** The graph of a workspace without `platform.json`: no jobs. */
export function emptyGraph(): GraphDefinition {
  return { max_concurrent_job_runs: defaultMaxConcurrentJobRuns(), jobs: [], schedules: [] };
}
