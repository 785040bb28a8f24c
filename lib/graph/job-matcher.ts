import type { GraphDefinition, JobDefinition } from './graph-definition.js';
import { GraphError } from './graph-error.js';
import { compileOutputPattern, matchOutputPattern, type OutputPattern } from './output-pattern.js';
import { groupDigits } from '../group-digits.js';

export interface JobMatch {
  job: JobDefinition;
  /** Named groups of the (first) matching output regex; groups that did not take part are absent. */
  groups: Record<string, string>;
}

interface CompiledJob {
  job: JobDefinition;
  patterns: OutputPattern[];
}

/**
 * Finds the one job whose outputs regex matches a whole ref. Built once per graph: the regexes are compiled in the
 * constructor, a lookup only runs them. Pure (no caching of refs: callers that look up the same refs repeatedly keep
 * their own per-ref cache, see JobResolver).
 */
export class JobMatcher {
  private readonly compiled: CompiledJob[];

  constructor(readonly graph: GraphDefinition) {
    this.compiled = graph.jobs.map((job) => ({ job, patterns: job.outputs.map(compileOutputPattern) }));
  }

  /** Throws GraphError `unknown_ref` or `ambiguous_ref`. */
  match(ref: string): JobMatch {
    let found: { job: JobDefinition; groups: Record<string, string>; pattern: string } | undefined;
    for (const { job, patterns } of this.compiled) {
      for (const pattern of patterns) {
        const groups = matchOutputPattern(pattern, ref);
        if (groups === null) continue;
        if (found !== undefined) {
          throw new GraphError(
            'ambiguous_ref',
            `Ref "${ref}" is produced by two jobs: "${found.job.label}" (output ${JSON.stringify(found.pattern)}) and ` +
              `"${job.label}" (output ${JSON.stringify(pattern.source)}). Each ref must match the outputs of exactly ` +
              'one job; make these output regexes in platform.json disjoint.',
            { ref, jobs: [found.job.label, job.label] },
          );
        }
        found = { job, groups, pattern: pattern.source };
        break; // other outputs of the same job may match too; that is not ambiguous
      }
    }
    if (found === undefined) throw this.unknown(ref);
    return { job: found.job, groups: found.groups };
  }

  /** Like match, but undefined instead of `unknown_ref` (still throws `ambiguous_ref`). */
  tryMatch(ref: string): JobMatch | undefined {
    try {
      return this.match(ref);
    } catch (err) {
      if (err instanceof GraphError && err.code === 'unknown_ref') return undefined;
      throw err;
    }
  }

  private unknown(ref: string): GraphError {
    const patterns = this.compiled.flatMap(({ job, patterns }) => patterns.map((p) => `${job.label}: ${p.source}`));
    const known =
      patterns.length === 0
        ? 'The graph has no jobs yet (is platform.json missing or empty?).'
        : `Known outputs: ${patterns.slice(0, 5).join('; ')}${patterns.length > 5 ? `; and ${groupDigits(patterns.length - 5)} more` : ''}.`;
    return new GraphError(
      'unknown_ref',
      `No job produces ref "${ref}": no job's outputs regex matches the whole ref. ${known} ` +
        'Check the ref for typos, or add a job whose outputs match it to platform.json.',
      { ref },
    );
  }
}

const matchers = new WeakMap<GraphDefinition, JobMatcher>();

/** The (cached) matcher of a graph object. */
export function jobMatcherFor(graph: GraphDefinition): JobMatcher {
  let m = matchers.get(graph);
  if (m === undefined) {
    m = new JobMatcher(graph);
    matchers.set(graph, m);
  }
  return m;
}

/** Pure lookup of the one job producing `ref`. Throws GraphError `unknown_ref` / `ambiguous_ref`. */
export function matchJob(graph: GraphDefinition, ref: string): JobMatch {
  return jobMatcherFor(graph).match(ref);
}
