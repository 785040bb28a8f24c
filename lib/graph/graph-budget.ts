/**
 * What one graph read may cost: a job graph is whatever the config programs say, so one ref can stand for any
 * number of inputs, and its answer for any number of megabytes (measured: one ref with a fan-in of 50,000 inputs
 * answered 6.6 MB after 4.8 s; twenty of them 124 MB after 164 s, the daemon held throughout). A read over its
 * budget stops as soon as it is known to be over, and is refused as a whole rather than answered in part: a part of
 * a job graph looks like a whole one to a client that does not look for a mark, and the spec's reply messages have
 * no field for one.
 */
import { GraphError } from './graph-error.js';
import { groupDigits } from '../group-digits.js';

export interface GraphBudget {
  /** Most partitions a graph may have: the refs asked for and every MATERIALIZE input reached from them. */
  readonly maxPartitions: number;
  /** Most inputs (QUERY and MATERIALIZE) the configs of one answer may list, summed over them. */
  readonly maxInputs: number;
}

const refsAsked = (count: number): string => (count === 1 ? 'the ref asked for' : `these ${groupDigits(count)} refs`);

const inParts =
  "Ask for the graph in parts: GetJobConfigs gives the ref's own config and inputs, then AnalyzeGraph of those " +
  'inputs, a few at a time.';
const fewerRefs = 'Ask for fewer refs per request (split output_refs over several requests).';

/** The graph of the refs reached more partitions than the budget allows. */
export function tooManyPartitions(what: string, budget: GraphBudget, asked: number): GraphError {
  return new GraphError(
    'too_large',
    `${what} stopped: the graph of ${refsAsked(asked)} has more than ${groupDigits(budget.maxPartitions)} partitions (the limit ` +
      'per request, counting the refs asked for and the MATERIALIZE inputs they need, transitively). ' +
      (asked === 1 ? inParts : fewerRefs),
  );
}

/** The configs of the answer list more inputs than the budget allows; `largest` is the config with the most. */
export function tooManyInputs(
  what: string,
  budget: GraphBudget,
  asked: number,
  largest: { ref: string; job: string; inputs: number },
): GraphError {
  const alone = largest.inputs > budget.maxInputs;
  return new GraphError(
    'too_large',
    `${what} stopped: the configs for ${refsAsked(asked)} list more than ${groupDigits(budget.maxInputs)} inputs (the limit ` +
      `per request; the config of "${largest.ref}", job "${largest.job}", lists ${groupDigits(largest.inputs)}). ` +
      (alone
        ? 'That config alone is more than one answer may hold: this service cannot show it (builds are not limited ' +
          'by it; a job that reads fewer, larger partitions fits).'
        : asked === 1
          ? inParts
          : fewerRefs),
    { ref: largest.ref, jobs: [largest.job] },
  );
}
