/**
 * A job whose own `env` in platform.json sets PATH has its program looked up on that PATH. When it is not found
 * there, the reason said "not found; check exec in platform.json" locally, and on a worker "check ... the PATH worker
 * w1 runs with", sending the reader to the worker's machine; it now names the PATH the job's env sets. Real runs:
 * the supervised launcher, and a real worker on a real redis-server.
 */
import test from 'ava';
import { makeWorkspace, openPlatform, runsFor, waitForWant, want } from './helpers/jobs-fixture.js';
import { startRedis } from './helpers/redis-server.js';
import { redisExecutor, redisTests, startWorker } from './helpers/redis-fixture.js';

const graph = {
  jobs: [
    { label: 'pathy', outputs: ['pathy/(?<n>\\d+)'], exec: ['sh', '-c', 'true'], env: { PATH: '/platform-test-no-such-dir' } },
    // The same program, found on the PATH the daemon (or worker) runs with: the env's PATH is what made it fail.
    { label: 'plain', outputs: ['plain/(?<n>\\d+)'], exec: ['sh', '-c', 'true'] },
  ],
};
const said = "not found on the PATH the job's env in platform.json sets (\"/platform-test-no-such-dir\"); check env.PATH and exec in platform.json";

test("a local run whose env's PATH does not hold its program: the reason names that PATH", async (t) => {
  const platform = await openPlatform(t, makeWorkspace(t), graph, { executor: 'supervised' });
  await waitForWant(platform, await want(platform, ['plain/1']), ['successful'], 20_000);
  const s = await waitForWant(platform, await want(platform, ['pathy/1']), ['failed'], 20_000);
  t.is(runsFor(s, 'pathy/1')[0]!.reason, `could not start 'sh': ${said}`);
});

const redisTest = redisTests();

redisTest("a run on a worker whose env's PATH does not hold its program: the reason names that PATH, not the worker's", async (t) => {
  const redis = await startRedis(t);
  const dir = makeWorkspace(t);
  const w1 = startWorker(t, dir, redis.url, 'w1');
  await w1.waitForStdout(/takes runs/);
  const platform = await openPlatform(t, dir, graph, { executor: redisExecutor(redis.url) });
  await waitForWant(platform, await want(platform, ['plain/1']), ['successful'], 20_000);
  const s = await waitForWant(platform, await want(platform, ['pathy/1']), ['failed'], 20_000);
  t.is(runsFor(s, 'pathy/1')[0]!.reason, `could not start 'sh' on worker w1: ${said}`);
});
