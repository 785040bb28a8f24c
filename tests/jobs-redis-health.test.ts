/**
 * The daemon's word on its Redis executor (`executorHealth()`, which `/api/status`, `status` and `doctor` carry) when
 * Redis hangs: a server that stops answering keeps its connections up, so only a silence tells. It is to be said
 * within about two seconds, with no read needed to set it off; and a daemon whose own event loop was held up is not
 * to blame Redis for an answer that waited in its socket.
 */
import type { ExecutionContext } from 'ava';
import { spawn } from 'node:child_process';
import { makeWorkspace, openPlatform, poll, sleep } from './helpers/jobs-fixture.js';
import { startRedis } from './helpers/redis-server.js';
import { redisExecutor, redisTests } from './helpers/redis-fixture.js';

const graph = { jobs: [{ label: 'quick', outputs: ['quick/(?<n>\\d+)'], exec: ['true'] }] };
const redisTest = redisTests();

/** A platform on its own redis-server, once it says Redis is reachable. */
async function connected(t: ExecutionContext) {
  const redis = await startRedis(t);
  const platform = await openPlatform(t, makeWorkspace(t), graph, { executor: redisExecutor(redis.url) });
  t.teardown(() => redis.freeze(false));
  t.true(await poll(() => platform.executorHealth().reachable, 10_000), 'reachable once connected');
  return { redis, platform };
}

redisTest('a hung Redis is said unreachable within about two seconds, not at the next look; answered again, reachable', async (t) => {
  const { redis, platform } = await connected(t);
  redis.freeze(true);
  // No read meanwhile (a read sets a look off): the word must come of itself. The looks alone (every 5 s, waiting
  // 2 s for their PING) said it up to ~7 s after; the probe says it after 1.5-1.75 s of silence.
  await sleep(3000);
  const hung = platform.executorHealth();
  t.false(hung.reachable, JSON.stringify(hung));
  t.regex(hung.problem ?? '', /Redis at redis:\/\/127\.0\.0\.1:\d+\/? does not answer/);
  redis.freeze(false);
  t.true(await poll(() => platform.executorHealth().reachable, 10_000), 'reachable again once it answers');
});

redisTest("a daemon whose own event loop was held up past the probe's wait does not say Redis does not answer", async (t) => {
  const { redis, platform } = await connected(t);
  // A PING sent (the probe sends one every 250 ms) while Redis is stopped, answered while this process is busy: the
  // answer waits in the socket until the loop is free, 2.5 s after it was sent.
  redis.freeze(true);
  await sleep(400);
  spawn('/bin/sh', ['-c', `sleep 0.3; kill -CONT ${redis.pid()}`], { stdio: 'ignore' });
  const until = Date.now() + 2500;
  while (Date.now() < until) {
    // Busy, as a long step of the orchestrator is.
  }
  const seen: boolean[] = [];
  for (let i = 0; i < 200; i++) {
    seen.push(platform.executorHealth().reachable);
    await new Promise((resolve) => setImmediate(resolve));
  }
  t.true(seen.every(Boolean), `said unreachable at reads ${seen.flatMap((r, i) => (r ? [] : [i])).join(', ')}`);
});
