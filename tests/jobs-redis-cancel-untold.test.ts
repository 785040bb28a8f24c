/**
 * A want canceled while Redis does not answer records its run canceled at once, and the cancel waits for Redis; a
 * daemon stopped before Redis came back dropped it: the log said canceled while the job ran on on its worker, to its
 * end, and nothing would stop a second run of the partition from starting beside it. The cancels a daemon could not
 * tell are now kept for the next daemon, which tells them once Redis answers. A real worker, a real redis-server.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { bash, isPidAlive, killAtTeardown, makeWorkspace, openPlatform, pidsIn, poll, runsFor, waitFor, want } from './helpers/jobs-fixture.js';
import { startRedis } from './helpers/redis-server.js';
import { redisExecutor, redisTests, startWorker } from './helpers/redis-fixture.js';

const graph = { jobs: [{ label: 'long', outputs: ['long/(?<n>\\d+)'], exec: bash('echo $$ >> long.pid; sleep 20; touch done') }] };
const redisTest = redisTests();


redisTest("a want canceled while Redis is away, its daemon stopped before Redis came back: the next daemon stops the run", async (t) => {
  const redis = await startRedis(t);
  const dir = makeWorkspace(t);
  killAtTeardown(t, () => pidsIn(dir, 'long.pid'));
  // A lease longer than the outage: the worker has no reason to stop the run itself.
  const w1 = startWorker(t, dir, redis.url, 'w1', ['--lease', '30s']);
  await w1.waitForStdout(/takes runs/);
  const first = await openPlatform(t, dir, graph, { executor: redisExecutor(redis.url), cancelRunsOnClose: false });
  const w = await want(first, ['long/1']);
  await waitFor(first, (s) => runsFor(s, 'long/1')[0]?.worker === 'w1', 'long/1 taken by w1', 15_000);
  t.true(await poll(() => pidsIn(dir, 'long.pid').length > 0, 20_000), 'the job runs');
  const [pid] = pidsIn(dir, 'long.pid');
  await redis.stop();
  await first.cancelWant(w);
  await waitFor(first, (s) => runsFor(s, 'long/1')[0]?.status === 'canceled', 'the run recorded canceled', 10_000);
  await first.close();
  await redis.restart();
  await openPlatform(t, dir, graph, { executor: redisExecutor(redis.url) });
  t.true(await poll(() => !isPidAlive(pid!), 15_000, 100), 'the run recorded canceled was stopped on its worker');
  t.false(existsSync(join(dir, 'done')), 'the job did not run to its end');
});
