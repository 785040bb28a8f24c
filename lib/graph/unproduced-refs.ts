/** Refs no job of the graph produces: found before a write is taken, as a refusal, not later as a failed build. */
import { isGraphError } from './graph-error.js';
import type { JobResolver } from './job-resolver.js';
import { groupDigits } from '../group-digits.js';

/** How many unproduced refs a refusal names (a range of ten thousand is not repeated back). */
const NAMED = 5;

/** The refusal's message, or undefined when a job produces each ref. */
export function unproducedProblem(resolver: JobResolver, refs: readonly string[]): string | undefined {
  const named: string[] = [];
  let first = '';
  let unproduced = 0;
  for (const ref of refs) {
    try {
      resolver.jobFor(ref);
    } catch (err) {
      if (!isGraphError(err)) throw err;
      first ||= err.message;
      if (++unproduced <= NAMED) named.push(JSON.stringify(ref));
    }
  }
  if (unproduced === 1) return first;
  if (unproduced === 0) return undefined;
  // The refs, then the first one's message once: it lists the outputs the graph knows, the same for each.
  const more = unproduced > NAMED ? ` and ${groupDigits(unproduced - NAMED)} more` : '';
  return `${groupDigits(unproduced)} of the ${groupDigits(refs.length)} refs have no job: ${named.join(', ')}${more}. The first: ${first}`;
}
