/**
 * `PlatformOptions.graph` as an embedder gives it. TypeScript asks for a parsed GraphDefinition, but a JavaScript
 * caller hands platform.json's content as it reads it, and the resolver then failed deep inside with "Cannot read
 * properties of undefined (reading 'map')". What is not parsed yet is parsed here, with parse-graph's messages.
 * (parseGraph is not idempotent, so a parsed graph is recognised rather than parsed again.)
 *
 * A graph that has the parsed shape is still checked as platform.json is: TypeScript accepts any object with the
 * fields, and one built by hand went unchecked (max_concurrent_job_runs 0 opened a platform that never ran a job; a
 * bad output pattern threw JavaScript's own SyntaxError). It is checked through parseGraph, written back as
 * platform.json would say it, and then taken as given (its objects are the resolver's).
 */
import type { GraphDefinition, JobDefinition } from './graph-definition.js';
import { parseGraph } from './parse-graph.js';
import type { ScheduleDefinition } from './schedule-definition.js';

const SOURCE = 'PlatformOptions.graph';

export function givenGraph(graph: unknown): GraphDefinition {
  if (!isParsed(graph)) return parseGraph(graph, SOURCE);
  parseGraph(asWritten(graph), SOURCE);
  return graph;
}

/**
 * The parsed graph as platform.json would say it: what parsing adds taken out (a config job's empty inputs, args and
 * env, which parseGraph refuses beside `config`; a schedule's offset_ms, which its `offset` says). Only for the check.
 */
function asWritten(graph: GraphDefinition): unknown {
  const job = (j: JobDefinition): Record<string, unknown> => {
    if (j.config === undefined) return { ...j };
    const { inputs: _inputs, args: _args, env: _env, ...rest } = j;
    return rest;
  };
  const schedule = (s: ScheduleDefinition): Record<string, unknown> => {
    const { offset_ms: _offsetMs, ...rest } = s;
    return rest;
  };
  return { ...graph, jobs: graph.jobs.map(job), schedules: graph.schedules.map(schedule) };
}

/** Every field parseGraph fills in with a default is there, of its type. */
function isParsed(graph: unknown): graph is GraphDefinition {
  if (typeof graph !== 'object' || graph === null) return false;
  const g = graph as Record<string, unknown>;
  if (typeof g.max_concurrent_job_runs !== 'number' || !Array.isArray(g.schedules) || !Array.isArray(g.jobs)) return false;
  const jobsParsed = g.jobs.every((job: unknown) => {
    if (typeof job !== 'object' || job === null) return false;
    const j = job as Record<string, unknown>;
    return (
      Array.isArray(j.outputs) &&
      Array.isArray(j.inputs) &&
      Array.isArray(j.args) &&
      Array.isArray(j.exec) &&
      typeof j.env === 'object' &&
      j.env !== null &&
      typeof j.retries === 'number' &&
      typeof j.timeout_seconds === 'number' &&
      typeof j.max_concurrency === 'number'
    );
  });
  // A schedule as platform.json spells it (no timezone, offset_ms, ...) failed at open: "cannot encode event 2".
  const schedulesParsed = g.schedules.every((schedule: unknown) => {
    if (typeof schedule !== 'object' || schedule === null) return false;
    const s = schedule as Record<string, unknown>;
    return (
      typeof s.timezone === 'string' &&
      typeof s.offset === 'string' &&
      typeof s.offset_ms === 'number' &&
      typeof s.priority === 'number' &&
      typeof s.ttl_seconds === 'number' &&
      typeof s.sla_seconds === 'number' &&
      typeof s.catchup === 'number'
    );
  });
  return jobsParsed && schedulesParsed;
}
