/**
 * `platform worker` and a Redis that does not answer: it says so once, with what to do, and again when it answers
 * (not once a second); a SIGTERM stops it promptly when it holds no run, after its runs when it holds some (bounded
 * wait for Redis once they ended, saying what Redis was not told), and a second signal stops it within seconds,
 * canceling them. Before, its stop waited for Redis for ever and a second signal did nothing: only kill -9 ended it.
 */
import { isPidAlive, makeWorkspace, poll, sleep } from './helpers/jobs-fixture.js';
import { startRedis } from './helpers/redis-server.js';
import { holdingOnW1, redisTests, startWorker } from './helpers/redis-fixture.js';

const redisTest = redisTests();

const count = (text: string, re: RegExp) => text.split('\n').filter((l) => re.test(l)).length;

redisTest('a worker that cannot reach Redis says so once with what to do, and when it answers; SIGTERM with no run stops it at once', async (t) => {
  const redis = await startRedis(t);
  await redis.stop();
  const w = startWorker(t, makeWorkspace(t), redis.url, 'wx');
  await w.waitForStdout(/cannot reach Redis/);
  await sleep(3000);
  t.is(count(w.stdout(), /ECONNREFUSED/), 1, `said once: ${w.stdout()}`);
  t.regex(w.stdout(), /cannot reach Redis at redis:\/\/127\.0\.0\.1:\d+\/?: connect ECONNREFUSED .*is redis-server running there/);
  await redis.restart();
  await w.waitForStdout(/takes runs/, 10_000);
  t.is(count(w.stdout(), /answers again/), 1, w.stdout());
  // Away again: said again, once.
  await redis.stop();
  await sleep(3000);
  t.is(count(w.stdout(), /cannot reach Redis/), 2, w.stdout());
  const sent = Date.now();
  w.child.kill('SIGTERM');
  const { code } = await w.exited;
  const took = Date.now() - sent;
  t.is(code, 0);
  t.true(took < 4000, `stopped ${took} ms after SIGTERM`);
  t.regex(w.stdout(), /stopping while Redis at .* does not answer \(.*ECONNREFUSED.*\): no run of this worker was left to tell it of/);
});

redisTest('a worker stopped with a run while Redis is away waits for the run, then stops, saying Redis was not told its end', async (t) => {
  const { redis, w1, run, job } = await holdingOnW1(t, [], { cancelRunsOnClose: false });
  await redis.stop();
  w1.child.kill('SIGTERM');
  await w1.waitForStdout(/stopping \(SIGTERM\): the running run finishes first/);
  // Its 1 s lease unconfirmed, the worker stops the run itself; then it waits 5 s at most for Redis.
  const { code } = await Promise.race([w1.exited, sleep(15_000).then(() => ({ code: 'still running' }))]);
  t.is(code, 1, `not a clean stop: Redis was not told a run's end; ${w1.stdout()}`);
  t.false(isPidAlive(job), 'the job is gone');
  t.regex(w1.stdout(), new RegExp(`does not answer .*: it was not told the end of ${run} \\(canceled\\); the daemon records such a run lost`));
  await redis.restart();
});

redisTest('a second SIGTERM stops a worker with a run within seconds, canceling it, Redis answering or not', async (t) => {
  const { redis, w1, job } = await holdingOnW1(t, ['--lease', '60s'], { cancelRunsOnClose: false });
  redis.freeze(true);
  t.teardown(() => redis.freeze(false));
  w1.child.kill('SIGTERM');
  await w1.waitForStdout(/finishes first/);
  await sleep(1000);
  t.true(isPidAlive(job), 'the run goes on after one SIGTERM');
  const sent = Date.now();
  w1.child.kill('SIGTERM');
  const { code } = await Promise.race([w1.exited, sleep(10_000).then(() => ({ code: 'still running' }))]);
  const took = Date.now() - sent;
  t.is(code, 1, `Redis (frozen) was not told the canceled run's end; ${w1.stdout()}`);
  t.true(took < 6000, `stopped ${took} ms after the second SIGTERM`);
  t.regex(w1.stdout(), /stopping now \(SIGTERM again\): canceling the running runs/);
  t.true(await poll(() => !isPidAlive(job), 2000), 'the job is gone');
  redis.freeze(false);
});
