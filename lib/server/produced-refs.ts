/** Refuses a write that names refs no job produces: found now, as a 400, not later as a failed build. */
import { isGraphError } from '../graph/graph-error.js';
import type { Platform } from '../platform.js';
import { HttpError } from './http-error.js';

/** How many unproduced refs a refusal names (a range of ten thousand is not repeated back). */
const NAMED = 5;

export async function checkProduced(platform: Platform, refs: readonly string[]): Promise<void> {
  const problem = await platform.refreshGraphAfterTurn();
  if (problem) throw new HttpError(400, `${problem.message} (the server goes on with the last valid graph; fix the file and retry)`);
  const named: string[] = [];
  let first = '';
  let unproduced = 0;
  for (const ref of refs) {
    try {
      platform.resolver.jobFor(ref);
    } catch (err) {
      if (!isGraphError(err)) throw err;
      first ||= err.message;
      if (++unproduced <= NAMED) named.push(JSON.stringify(ref));
    }
  }
  if (unproduced === 1) throw new HttpError(400, first);
  if (unproduced > 1) {
    // The refs, then the first one's message once: it lists the outputs the graph knows, the same for each.
    const more = unproduced > NAMED ? ` and ${unproduced - NAMED} more` : '';
    throw new HttpError(400, `${unproduced} of the ${refs.length} refs have no job: ${named.join(', ')}${more}. The first: ${first}`);
  }
}
