/**
 * A daemon on the Redis executor killed (SIGKILL) after it handed a run to the queue but before it recorded the
 * run's start: the window between `queue.add` and the step that writes `job_run_started`. Run as
 * `node crash-before-redis-start-recorded.js <workspace> <redis url> <ref>...`: it opens the workspace with a Redis
 * executor deaf to its starts and ends (so the log keeps the runs queued), wants the refs, waits until a worker
 * has finished the first run (r-1) in the queue, then kills itself.
 */
import { Queue } from 'bullmq';
import { RedisExecutor } from '../../lib/executor/redis/redis-executor.js';
import { DEFAULT_QUEUE, bullConnection, queueJobId } from '../../lib/executor/redis/redis-names.js';
import { openDeafAndWant } from './deaf-platform.js';

const [dir, redisUrl, ...refs] = process.argv.slice(2);
let root = '';
await openDeafAndWant(
  dir!,
  (workspaceRoot) => {
    root = workspaceRoot;
    return new RedisExecutor({ redisUrl: redisUrl!, workspaceRoot });
  },
  refs,
);
const queue = new Queue(DEFAULT_QUEUE, { connection: bullConnection(redisUrl!) });
const until = Date.now() + 20_000;
while ((await queue.getJobState(queueJobId(root, 'r-1'))) !== 'completed' && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));
process.kill(process.pid, 'SIGKILL');
