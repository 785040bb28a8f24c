/**
 * The output stream of a run whose worker died: the worker never marked its end nor set its expiry, so the daemon,
 * recording the run lost, does; otherwise each lost run's output stays in Redis for good (noeviction: it fills up).
 */
import { Redis } from 'ioredis';
import { RedisExecutor } from '../lib/executor/redis/redis-executor.js';
import { DEFAULT_QUEUE, LOG_STREAM_TTL_SECONDS, logStreamKey, queueJobId } from '../lib/executor/redis/redis-names.js';
import { bash, killAtTeardown, makeWorkspace, openPlatform, pidsIn, runsFor, sleep, waitFor, want } from './helpers/jobs-fixture.js';
import { startRedis } from './helpers/redis-server.js';
import { redisTests, startWorker } from './helpers/redis-fixture.js';

async function until(cond: () => Promise<boolean>, ms: number): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end; await sleep(50)) if (await cond()) return true;
  return false;
}

const graph = { jobs: [{ label: 'talk', outputs: ['talk/(?<n>\\d+)'], exec: bash('echo $$ > talk.pid; echo said; sleep 100') }] };

const redisTest = redisTests();

redisTest("a run lost with its worker: its output stream in Redis expires as a finished run's does", async (t) => {
  const redis = await startRedis(t);
  const dir = makeWorkspace(t);
  killAtTeardown(t, () => pidsIn(dir, 'talk.pid'));
  const w1 = startWorker(t, dir, redis.url, 'w1');
  await w1.waitForStdout(/takes runs/);
  let root = '';
  const executor = (workspaceRoot: string) => new RedisExecutor({ redisUrl: redis.url, workspaceRoot: (root = workspaceRoot), stalledCheckMs: 250 });
  const platform = await openPlatform(t, dir, graph, { executor });
  await want(platform, ['talk/1']);
  const running = await waitFor(platform, (s) => runsFor(s, 'talk/1')[0]?.worker === 'w1', 'talk/1 taken by w1', 15_000);
  const run = runsFor(running, 'talk/1')[0]!;
  const client = new Redis(redis.url);
  t.teardown(() => client.disconnect());
  const key = logStreamKey(DEFAULT_QUEUE, queueJobId(root, run.job_run_id));
  t.true(await until(async () => (await client.xlen(key)) > 0, 5000), 'the output shipped');
  w1.child.kill('SIGKILL');
  await waitFor(platform, (s) => runsFor(s, 'talk/1')[0]?.status === 'canceled', 'the run recorded lost', 20_000);
  let ttl = -1;
  await until(async () => (ttl = await client.ttl(key)) > 0, 3000);
  t.true(ttl > 0 && ttl <= LOG_STREAM_TTL_SECONDS, `the stream's time to live: ${ttl}`);
});
