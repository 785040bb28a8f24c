/**
 * A schedule's refs must be refs the graph builds. Checked when platform.json is loaded, on the refs of one sample
 * tick, so a typo in a template is an error of the file, seen at once (and refused by a reload, which keeps the last
 * good graph), rather than a want that fails at the next tick, which may be tomorrow at 03:00.
 */
import type { GraphDefinition } from './graph-definition.js';
import { GraphError } from './graph-error.js';
import { JobMatcher } from './job-matcher.js';
import { nextTick, tickRefs } from './schedule-time.js';

/** Where the sample tick is looked for: a fixed instant, so that loading a file never depends on the clock. */
const SAMPLE_FROM = Date.UTC(2026, 0, 1);

export function checkScheduleRefs(graph: GraphDefinition, fail: (path: string, message: string) => never): void {
  if (graph.schedules.length === 0) return;
  const matcher = new JobMatcher(graph);
  graph.schedules.forEach((s, i) => {
    const tick = nextTick(s, SAMPLE_FROM) ?? SAMPLE_FROM;
    tickRefs(s, tick).forEach((ref, k) => {
      try {
        matcher.match(ref);
      } catch (err) {
        if (!(err instanceof GraphError)) throw err;
        fail(
          `schedules[${i}] (schedule "${s.name}").partitions[${k}]`,
          `${JSON.stringify(s.partitions[k])} wants refs such as "${ref}" (its tick ${new Date(tick).toISOString()}), ` +
            `which ${err.code === 'ambiguous_ref' ? 'more than one job produces' : 'no job produces'}: ${err.message}`,
        );
      }
    });
  });
}
