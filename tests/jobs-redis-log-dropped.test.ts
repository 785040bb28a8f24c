/**
 * A remote run's output stream keeps its last ~10,000 chunks (XADD MAXLEN ~): a run that printed more while no daemon
 * copied it lost its beginning, and the next daemon's copy read as the whole log. The daemon now writes a line into the
 * copied log where chunks are missing, and says so in server.log. (The cap's trimming is done here by XTRIM, as a
 * run of 10,000+ chunks would take minutes.)
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { RedisExecutor } from '../lib/executor/redis/redis-executor.js';
import { DEFAULT_QUEUE, bullConnection, logStreamKey, queueJobId } from '../lib/executor/redis/redis-names.js';
import { bash, makeWorkspace, openPlatform, poll, runsFor, waitFor, waitForWant, want } from './helpers/jobs-fixture.js';
import { startRedis } from './helpers/redis-server.js';
import { redisTests, startWorker } from './helpers/redis-fixture.js';

// A line every 0.15 s: a chunk each (the worker ships what came every 100 ms).
const graph = { jobs: [{ label: 'talk', outputs: ['talk/(?<n>\\d+)'], exec: bash('for i in $(seq 1 12); do echo "line $i"; sleep 0.15; done; touch talked') }] };
const redisTest = redisTests();

redisTest("chunks of a run's output dropped from Redis before a daemon copied them: its log says so where they were, and server.log too", async (t) => {
  const redis = await startRedis(t);
  const dir = makeWorkspace(t);
  let root = '';
  const errors: string[] = [];
  const executor = (workspaceRoot: string) =>
    new RedisExecutor({ redisUrl: redis.url, workspaceRoot: (root = workspaceRoot), stalledCheckMs: 250, logError: (m) => errors.push(m) });
  // Handed to the queue with no worker, then the daemon goes: the worker runs it while no daemon copies its output.
  const first = await openPlatform(t, dir, graph, { executor, cancelRunsOnClose: false });
  const w = await want(first, ['talk/1']);
  const handed = await waitFor(first, (s) => runsFor(s, 'talk/1')[0]?.worker.startsWith('redis:') === true, 'handed to the queue', 15_000);
  const run = runsFor(handed, 'talk/1')[0]!.job_run_id;
  const queue = new Queue(DEFAULT_QUEUE, { connection: bullConnection(redis.url) });
  t.true(await poll(async () => (await queue.getWaitingCount()) === 1, 10_000), 'waiting in the queue');
  await queue.close();
  await first.close();

  const w1 = startWorker(t, dir, redis.url, 'w1');
  await w1.waitForStdout(/takes runs/);
  const client = new Redis(redis.url);
  t.teardown(() => client.disconnect());
  const key = logStreamKey(DEFAULT_QUEUE, queueJobId(root, run));
  const ended = async () => ((await client.xrevrange(key, '+', '-', 'COUNT', 1))[0]?.[1] ?? []).includes('end');
  t.true(await poll(ended, 20_000, 100), 'the worker ran it and marked the end of its output');
  // The cap at work: only the last 4 entries kept (3 chunks and the end).
  const all = await client.xrange(key, '-', '+');
  t.true(all.length >= 8, `${all.length} entries`);
  await client.xtrim(key, 'MAXLEN', 4);
  const kept = (await client.xrange(key, '-', '+')).slice(0, -1);
  const field = (fields: string[], name: string) => fields[fields.indexOf(name) + 1]!;
  const dropped = Number(field(kept[0]![1], 'n')) - 1;
  t.is(dropped, all.length - 4, 'the chunks are numbered');

  const second = await openPlatform(t, dir, graph, { executor });
  const s = await waitForWant(second, w, ['successful'], 20_000);
  t.like(runsFor(s, 'talk/1')[0], { job_run_id: run, status: 'succeeded', worker: 'w1' });
  const marker = `[platform: ${dropped} earlier chunks of this run's output (up to 64 KiB each) were dropped from Redis before the daemon could copy them (the stream keeps the last 10,000); the log starts here]`;
  const stdout = readFileSync(join(dir, '.platform', 'logs', run, 'stdout.log'), 'utf8');
  t.deepEqual(stdout.split('\n'), [marker, ...kept.map(([, f]) => field(f, 'd').replace(/\n$/, '')), ''], stdout);
  t.regex(stdout, /line 12\n$/);
  t.true(errors.some((e) => e === `${run}: ${dropped} chunks of its output were dropped from Redis (its stream keeps the last 10,000) before this daemon could copy them; its stdout.log and stderr.log say so where they were`), errors.join('\n'));
});
