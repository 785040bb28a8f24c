/**
 * A daemon on the Redis executor killed (SIGKILL) after it handed a run to the queue but before it recorded the
 * run's start: the window between `queue.add` and the step that writes `job_run_started`. Run as
 * `node crash-before-redis-start-recorded.js <workspace> <redis url> <ref>...`: it opens the workspace with a Redis
 * executor deaf to its starts and ends (so the log keeps the runs queued), wants the refs, waits until a worker
 * has finished the first run (r-1) in the queue, then kills itself.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { NEVER } from 'rxjs';
import { parseGraph } from '../../lib/graph/parse-graph.js';
import { Platform } from '../../lib/platform.js';
import { RedisExecutor } from '../../lib/executor/redis/redis-executor.js';
import { DEFAULT_QUEUE, bullConnection, queueJobId } from '../../lib/executor/redis/redis-names.js';
import type { Executor } from '../../lib/executor/executor-port.js';

const [dir, redisUrl, ...refs] = process.argv.slice(2);
let root = '';
const deaf = (workspaceRoot: string): Executor => {
  root = workspaceRoot;
  const real = new RedisExecutor({ redisUrl: redisUrl!, workspaceRoot });
  return {
    outcomes$: NEVER,
    started$: NEVER,
    start: (launch) => void real.start(launch),
    cancel: (id, reason) => real.cancel(id, reason),
    reattach: (launch, pid) => real.reattach(launch, pid),
    runningCount: () => real.runningCount(),
    shutdown: (reason, options) => real.shutdown(reason, options),
  };
};
const platform = await Platform.open(dir!, {
  graph: parseGraph(JSON.parse(readFileSync(join(dir!, 'platform.json'), 'utf8')), 'platform.json'),
  executor: deaf,
  tickMs: 60_000,
});
const r = await platform.createWant({ partitions: refs, comment: '', data_timestamp: 0, ttl_seconds: 0, sla_seconds: 0 });
if (!r.ok) throw new Error(`createWant refused: ${r.error}`);
const queue = new Queue(DEFAULT_QUEUE, { connection: bullConnection(redisUrl!) });
const until = Date.now() + 20_000;
while ((await queue.getJobState(queueJobId(root, 'r-1'))) !== 'completed' && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));
process.kill(process.pid, 'SIGKILL');
