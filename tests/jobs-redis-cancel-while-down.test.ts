/**
 * A stop that cancels its runs (`platform stop --cancel-runs`, `close({ cancelRuns: true })`) while Redis does not
 * answer cannot tell the workers: the stop waited for Redis for as long as it was away, and then the runs were
 * recorded canceled although they went on to their end on their workers, so the next daemon built them again
 * (the job ran twice, and would have run beside itself had Redis come back sooner). A cancel that did not reach Redis
 * now leaves its run running in the log, said so, the next daemon following it to its end. A real worker, a real
 * redis-server stopped and started again.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { RedisExecutor } from '../lib/executor/redis/redis-executor.js';
import { bash, makeWorkspace, openPlatform, runsFor, sleep, waitFor, waitForWant, want } from './helpers/jobs-fixture.js';
import { startRedis } from './helpers/redis-server.js';
import { redisExecutor, redisTests, startWorker } from './helpers/redis-fixture.js';

const graph = { jobs: [{ label: 'slow', outputs: ['slow/(?<n>\\d+)'], exec: bash('echo "$PLATFORM_JOB_RUN_ID" >> ran.txt; sleep 3; echo done') }] };
const redisTest = redisTests();

redisTest('a stop canceling its runs while Redis is away ends, and leaves them running for the next daemon: none runs twice', async (t) => {
  const redis = await startRedis(t);
  const dir = makeWorkspace(t);
  // A lease longer than the outage: the worker has no reason to stop the run itself.
  const w1 = startWorker(t, dir, redis.url, 'w1', ['--lease', '30s']);
  await w1.waitForStdout(/takes runs/);
  const errors: string[] = [];
  const executor = (workspaceRoot: string) => new RedisExecutor({ redisUrl: redis.url, workspaceRoot, stalledCheckMs: 250, logError: (m) => errors.push(m) });
  const first = await openPlatform(t, dir, graph, { executor, cancelRunsOnClose: false });
  const w = await want(first, ['slow/1']);
  const placed = await waitFor(first, (s) => runsFor(s, 'slow/1')[0]?.worker === 'w1', 'slow/1 taken by w1', 15_000);
  const run = runsFor(placed, 'slow/1')[0]!.job_run_id;
  await redis.stop();
  const asked = Date.now();
  const closing = first.close({ cancelRuns: true });
  const ended = await Promise.race([closing.then(() => true), sleep(20_000).then(() => false)]);
  const took = Date.now() - asked;
  await redis.restart();
  await closing;
  t.true(ended, `the stop ended within 20 s of Redis being away (it took ${took} ms)`);
  t.true(
    errors.some((e) => e.includes(run) && /could not tell Redis at \S+ to cancel/.test(e) && /left running/.test(e)),
    `said: ${errors.join(' | ')}`,
  );

  const second = await openPlatform(t, dir, graph, { executor: redisExecutor(redis.url) });
  const s = await waitForWant(second, w, ['successful'], 30_000);
  t.deepEqual(runsFor(s, 'slow/1').map((r) => [r.job_run_id, r.status, r.worker]), [[run, 'succeeded', 'w1']], 'followed to its end, not built again');
  t.deepEqual(readFileSync(join(dir, 'ran.txt'), 'utf8').trim().split('\n'), [run], 'the job ran once');
});
