/**
 * The daemon's word on its Redis executor (`executorHealth()`, which `/api/status`, `status` and `doctor` carry) when
 * Redis hangs: a server that stops answering keeps its connections up, so only a silence tells. It is to be said
 * within about two seconds, with no read needed to set it off; and a daemon whose own event loop was held up is not
 * to blame Redis for an answer that waited in its socket. And the workers it counts are those of its own database: a
 * worker of another database of the same server (another workspace's) does not take its runs.
 */
import type { ExecutionContext } from 'ava';
import { spawn, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { makeWorkspace, openPlatform, poll, sleep } from './helpers/jobs-fixture.js';
import { startRedis } from './helpers/redis-server.js';
import { redisExecutor, redisTests, startWorker } from './helpers/redis-fixture.js';
import { runCli } from './helpers/server-fixture.js';
import { Redis } from 'ioredis';

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

const CLI = fileURLToPath(new URL('../../bin/platform', import.meta.url));

/** A workspace whose platform.json sends runs to the Redis at `url`, and its CLI (the daemon stopped at the end). */
function workspaceOn(t: ExecutionContext, url: string) {
  const dir = makeWorkspace(t);
  writeFileSync(join(dir, 'platform.json'), JSON.stringify({ ...graph, executor: url }));
  t.teardown(() => void spawnSync(process.execPath, [CLI, '-C', dir, 'stop', '--cancel-runs'], { stdio: 'ignore' }));
  const cli = async (...args: string[]): Promise<string> => {
    const p = runCli(t, ['-C', dir, ...args], dir, { PLATFORM_IDLE_TIMEOUT: '1h' });
    await p.exited;
    return p.stdout();
  };
  return { dir, cli };
}

redisTest("a worker on another database of the same Redis is not counted: status says no worker takes the daemon's runs", async (t) => {
  const redis = await startRedis(t);
  const { dir, cli } = workspaceOn(t, redis.url);
  type Health = { reachable: boolean; workers: number | null; problem: string | null };
  const health = async (): Promise<Health> => (JSON.parse(await cli('--json', 'status')) as { executor: Health }).executor;
  const until = async (pred: (h: Health) => boolean): Promise<Health> => {
    let h = await health();
    for (let i = 0; i < 50 && !pred(h); i++) {
      await sleep(200);
      h = await health();
    }
    return h;
  };
  // Another workspace's worker, same server and queue name, database 2; the daemon's is database 0.
  const other = startWorker(t, dir, `${redis.url}/2`, 'other-db');
  await other.waitForStdout(/takes runs/);
  await cli('start');
  const h = await until((x) => x.reachable);
  // Looks after the worker connected: every one of them must say no worker.
  await sleep(5500);
  const later = await health();
  for (const seen of [h, later]) {
    t.is(seen.workers, 0, JSON.stringify(seen));
    t.regex(seen.problem ?? '', /no platform worker takes runs from queue/);
  }
  t.regex(await cli('status'), /0 workers/);
  // A worker of its own database is counted, the other one still not.
  const own = startWorker(t, dir, redis.url, 'own-db');
  await own.waitForStdout(/takes runs/);
  const one = await until((x) => x.workers !== 0);
  t.like(one, { reachable: true, workers: 1, problem: null });
});

redisTest('a Redis that will not list its clients (an ACL): status and doctor say the workers are not counted, not that there are none', async (t) => {
  const redis = await startRedis(t);
  const admin = new Redis(redis.url);
  t.teardown(() => admin.disconnect());
  // As a managed Redis's ACL has it: everything but CLIENT LIST.
  t.is(await admin.call('ACL', 'SETUSER', 'default', '-client|list'), 'OK');
  const { dir, cli } = workspaceOn(t, redis.url);
  const w1 = startWorker(t, dir, redis.url, 'w1');
  await w1.waitForStdout(/takes runs/);
  await cli('start');
  type Health = { reachable: boolean; workers: number | null; problem: string | null };
  let h = (JSON.parse(await cli('--json', 'status')) as { executor: Health }).executor;
  for (let i = 0; i < 50 && !h.reachable; i++) {
    await sleep(200);
    h = (JSON.parse(await cli('--json', 'status')) as { executor: Health }).executor;
  }
  t.like(h, { reachable: true, workers: null, problem: null });
  t.regex(await cli('status'), /redis \(redis:\/\/127\.0\.0\.1:\d+.*, workers not counted \(this Redis does not list its clients to platform\)/);
  t.regex(await cli('doctor'), /executor.*redis, redis:\/\/127\.0\.0\.1:\d+.*: workers not counted/);
  // And runs still go: the worker takes them.
  t.regex(await cli('build', 'quick/1'), /quick\/1/);
});
