/**
 * A remote run that ends while Redis does not answer is recorded as ending when its job ended, not when Redis came
 * back and took its end: the daemon took the queue job's finishedOn, set as the worker could tell Redis, so a 1 s
 * job under a Redis away for seconds was recorded as long as the outage (4 s jobs read 8.7 s). A real worker, a real
 * redis-server stopped and started again.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { bash, makeWorkspace, openPlatform, poll, runsFor, sleep, waitFor, waitForWant, want } from './helpers/jobs-fixture.js';
import { startRedis } from './helpers/redis-server.js';
import { redisExecutor, redisTests, startWorker } from './helpers/redis-fixture.js';

const graph = { jobs: [{ label: 'short', outputs: ['short/(?<n>\\d+)'], exec: bash('sleep 1; touch done') }] };
const redisTest = redisTests();

redisTest('a remote run that ended while Redis was away ends when its job did, not when Redis came back', async (t) => {
  const redis = await startRedis(t);
  const dir = makeWorkspace(t);
  // A lease longer than the outage: the run is not given up for lost.
  const w1 = startWorker(t, dir, redis.url, 'w1', ['--lease', '30s']);
  await w1.waitForStdout(/takes runs/);
  const platform = await openPlatform(t, dir, graph, { executor: redisExecutor(redis.url) });
  const w = await want(platform, ['short/1']);
  await waitFor(platform, (s) => runsFor(s, 'short/1')[0]?.worker === 'w1', 'short/1 taken by w1', 15_000);
  await redis.stop();
  t.true(await poll(() => existsSync(join(dir, 'done')), 20_000), 'the job ended');
  await w1.waitForStdout(/r-1: succeeded/, 10_000);
  await sleep(2_000);
  const back = Date.now();
  await redis.restart();
  const s = await waitForWant(platform, w, ['successful'], 30_000);
  const run = runsFor(s, 'short/1')[0]!;
  t.true(run.ended_at! < back, `ended ${run.ended_at! - back} ms after Redis came back`);
  t.true(run.ended_at! > run.started_at!, 'after it started');
});
