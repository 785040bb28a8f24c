/**
 * `PlatformOptions.graph` as an embedder gives it. TypeScript asks for a parsed GraphDefinition, but a JavaScript
 * caller hands platform.json's content as it reads it, and the resolver then failed deep inside with "Cannot read
 * properties of undefined (reading 'map')". What is not parsed yet is parsed here, with parse-graph's messages.
 * (parseGraph is not idempotent, so a parsed graph is recognised rather than parsed again.)
 */
import type { GraphDefinition } from './graph-definition.js';
import { parseGraph } from './parse-graph.js';

export function givenGraph(graph: unknown): GraphDefinition {
  return isParsed(graph) ? graph : parseGraph(graph, 'PlatformOptions.graph');
}

/** Every field parseGraph fills in with a default is there, of its type. */
function isParsed(graph: unknown): graph is GraphDefinition {
  if (typeof graph !== 'object' || graph === null) return false;
  const g = graph as Record<string, unknown>;
  if (typeof g.max_concurrent_job_runs !== 'number' || !Array.isArray(g.schedules) || !Array.isArray(g.jobs)) return false;
  return g.jobs.every((job: unknown) => {
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
}
