/**
 * A platform whose executor starts runs but never tells of their starts or ends, so the log keeps them queued: what a
 * daemon killed between a run's start and the step that records it leaves. The crash helpers open one, want refs,
 * wait for their moment, then kill themselves.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { NEVER } from 'rxjs';
import { parseGraph } from '../../lib/graph/parse-graph.js';
import { Platform } from '../../lib/platform.js';
import type { Executor } from '../../lib/executor/executor-port.js';

/** `real`, deaf: the orchestrator hears nothing of what it starts. */
function deaf(real: Executor): Executor {
  return {
    outcomes$: NEVER,
    started$: NEVER,
    // Nor from what start returns (an executor that knows its start at once, as the Redis one does, says it there).
    start: (launch) => void real.start(launch),
    cancel: (id, reason) => real.cancel(id, reason),
    reattach: (launch, pid, startedAt) => real.reattach(launch, pid, startedAt),
    runningCount: () => real.runningCount(),
    shutdown: (reason, options) => real.shutdown(reason, options),
  };
}

/** Opens `dir` (its platform.json) with `executorOf`'s executor deaf, and wants `refs`. */
export async function openDeafAndWant(dir: string, executorOf: (workspaceRoot: string) => Executor, refs: string[]): Promise<Platform> {
  const platform = await Platform.open(dir, {
    graph: parseGraph(JSON.parse(readFileSync(join(dir, 'platform.json'), 'utf8')), 'platform.json'),
    executor: (root) => deaf(executorOf(root)),
    tickMs: 60_000,
  });
  const r = await platform.createWant({ partitions: refs, comment: '', data_timestamp: 0, ttl_seconds: 0, sla_seconds: 0 });
  if (!r.ok) throw new Error(`createWant refused: ${r.error}`);
  return platform;
}
