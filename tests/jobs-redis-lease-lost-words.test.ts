/**
 * A worker whose run's lease ran out while Redis was away (stopped, its lock expired by the time it is back) stops
 * the run itself and says so; when Redis answers again, BullMQ reports the lock it no longer holds, for each run,
 * as errors of its own ("could not renew lock for job 1f2e...-r-1", "Missing lock for job 1f2e...-r-1.
 * moveToFinished", twice), which the worker printed as "worker error: ..." after its own words: jargon naming a
 * queue job id, not the run, for what it had just said. A real worker, a real redis-server stopped and started again.
 */
import { Redis } from 'ioredis';
import { queueJobId } from '../lib/executor/redis/redis-names.js';
import { isPidAlive, pidsIn, poll, runsFor, sleep, waitFor } from './helpers/jobs-fixture.js';
import { holdingOnW1, redisTests } from './helpers/redis-fixture.js';

const redisTest = redisTests();

redisTest('a run whose lease ran out while Redis was away is said once, in our words, not as BullMQ lock errors', async (t) => {
  const { redis, w1, platform, want: w, run } = await holdingOnW1(t);
  await redis.stop();
  await w1.waitForStdout(new RegExp(`${run}: no word from Redis`), 10_000);
  // Past the lock's 1 s: Redis comes back without it.
  await sleep(1_500);
  await redis.restart();
  await waitFor(platform, (x) => runsFor(x, 'hold/1')[0]?.status === 'canceled', 'the run recorded ended', 20_000);
  await w1.waitForStdout(/answers again/, 10_000);
  // BullMQ's lock errors come as the worker renews its locks and records the run's end: given the time to.
  await sleep(1_500);
  const said = w1.stdout();
  t.notRegex(said, /worker error: (could not renew lock|Missing lock|Lock mismatch)/, said);
  t.notRegex(said, /for job [0-9a-f]{12}-/, 'the run is named, not its queue job');
  t.is(said.split('no word from Redis').length - 1, 1, `its lease is said once: ${said}`);
  await platform.cancelWant(w);
});

redisTest("a run whose lock is gone from Redis while it answers is stopped and said once, naming the run", async (t) => {
  const { redis, dir, w1, platform, want: w, run } = await holdingOnW1(t, ['--lease', '2s']);
  // The lock taken from it (as an operator's DEL, or a lock that expired while this worker's clock stood still).
  const client = new Redis(redis.url);
  t.teardown(() => client.disconnect());
  t.is(await client.del(`bull:platform-runs:${queueJobId(dir, run)}:lock`), 1);
  await w1.waitForStdout(new RegExp(`${run}: Redis no longer holds this worker's lease on the run`), 10_000);
  await waitFor(platform, (x) => runsFor(x, 'hold/1')[0]?.status === 'canceled', 'the run recorded ended', 20_000);
  t.true(await poll(() => !pidsIn(dir, 'hold.pid').slice(0, 1).some((pid) => isPidAlive(pid)), 10_000), 'the run was stopped on the worker');
  await sleep(1_500);
  const said = w1.stdout();
  t.notRegex(said, /worker error:/, said);
  t.is(said.split("no longer holds this worker's lease").length - 1, 1, `said once: ${said}`);
  await platform.cancelWant(w);
});

