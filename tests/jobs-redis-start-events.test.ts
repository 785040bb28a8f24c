/**
 * A daemon on the Redis executor hears a run's end through BullMQ's QueueEvents, which read the queue's event
 * stream. A run that a starting daemon looked up (still running) and that ended before the events' first read
 * reached Redis must not be missed: read from '$', that end was never heard of and the run read running for ever.
 * A relay in front of Redis holds the daemon's first read of the event stream back while the run ends.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { bash, makeWorkspace, openPlatform, poll, runsFor, sleep, waitFor, waitForWant, want } from './helpers/jobs-fixture.js';
import { startRedis } from './helpers/redis-server.js';
import { redisExecutor, redisRelay, redisTests, startWorker } from './helpers/redis-fixture.js';
import { bullConnection, DEFAULT_QUEUE, queueJobId } from '../lib/executor/redis/redis-names.js';
import type { runCli } from './helpers/server-fixture.js';

const graph = { jobs: [{ label: 'gate', outputs: ['gate/(?<n>\\d+)'], exec: bash('while [ ! -e go ]; do sleep 0.05; done; echo done') }] };
const redisTest = redisTests();

/**
 * A relay to Redis that holds back a connection's first XREAD of the queue's event stream (and what follows on that
 * connection) until `release`; `held` says whether one came.
 */
async function startEventReadHolder(t: Parameters<typeof runCli>[0], redisUrl: string): Promise<{ url: string; held: () => boolean; release: () => void }> {
  const waiting: Array<() => void> = [];
  let holding = false;
  let released = false;
  const eventsKey = `${DEFAULT_QUEUE}:events`;
  const relay = await redisRelay(t, redisUrl, (client, upstream) => {
    const up = upstream();
    up.pipe(client);
    let stopped = false;
    client.on('data', (chunk: Buffer) => {
      const text = chunk.toString('latin1');
      if (!released && !stopped && /xread/i.test(text) && text.includes(eventsKey)) {
        stopped = true;
        holding = true;
      }
      if (stopped && !released) waiting.push(() => up.write(chunk));
      else up.write(chunk);
    });
  });
  return {
    url: relay.url,
    held: () => holding,
    release: () => {
      released = true;
      for (const send of waiting.splice(0)) send();
    },
  };
}

redisTest("a run that ends while the daemon starts, before its queue events are read, is recorded: its end is not missed", async (t) => {
  const redis = await startRedis(t);
  const dir = makeWorkspace(t);
  const w1 = startWorker(t, dir, redis.url, 'w1');
  await w1.waitForStdout(/takes runs/);
  const first = await openPlatform(t, dir, graph, { executor: redisExecutor(redis.url), cancelRunsOnClose: false });
  const w = await want(first, ['gate/1']);
  const running = await waitFor(first, (s) => runsFor(s, 'gate/1')[0]?.worker === 'w1', 'gate/1 on w1', 15_000);
  const runId = runsFor(running, 'gate/1')[0]!.job_run_id;
  await first.close();

  const relay = await startEventReadHolder(t, redis.url);
  const second = await openPlatform(t, dir, graph, { executor: redisExecutor(relay.url) });
  t.true(await poll(() => relay.held(), 10_000), "the second daemon's first read of the queue's events came (held back)");
  // Its look-up of the run (the job still active) is a few round trips on loopback, done long before this.
  await sleep(1000);
  writeFileSync(join(dir, 'go'), '');
  const queue = new Queue(DEFAULT_QUEUE, { connection: bullConnection(redis.url) });
  t.teardown(() => queue.close());
  const jobId = queueJobId(dir, runId);
  t.true(await poll(async () => (await queue.getJob(jobId))?.finishedOn !== undefined, 10_000), 'the worker finished the run');
  relay.release();
  const s = await waitForWant(second, w, ['successful'], 15_000);
  t.deepEqual(runsFor(s, 'gate/1').map((r) => [r.job_run_id, r.status, r.worker]), [[runId, 'succeeded', 'w1']]);
});

