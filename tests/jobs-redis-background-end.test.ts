/**
 * A job that leaves a background process holding its output open ends when it exits. On a worker (whose runs' output
 * comes through pipes) the run ended only when the worker gave up on that output, its close grace (2 s) later: a job
 * of a few milliseconds was recorded 2 s long, where the same job run locally (output to files) took its few
 * milliseconds. A real worker on a real redis-server, a real background process.
 */
import { bash, killAtTeardown, makeWorkspace, openPlatform, pidsIn, runsFor, waitForWant, want } from './helpers/jobs-fixture.js';
import { startRedis } from './helpers/redis-server.js';
import { redisExecutor, redisTests, startWorker } from './helpers/redis-fixture.js';

/** ProcessExecutor's default close grace: how long output held open by a background process is read after the exit. */
const CLOSE_GRACE_MS = 2000;

const graph = { jobs: [{ label: 'detach', outputs: ['detach/(?<n>\\d+)'], exec: bash('sleep 30 & echo $! >> bg.pid; echo left it running') }] };
const redisTest = redisTests();

redisTest('a remote run whose background process holds its output ends when the job exited, not a close grace later', async (t) => {
  const redis = await startRedis(t);
  const dir = makeWorkspace(t);
  killAtTeardown(t, () => pidsIn(dir, 'bg.pid'));
  const w1 = startWorker(t, dir, redis.url, 'w1');
  await w1.waitForStdout(/takes runs/);
  const platform = await openPlatform(t, dir, graph, { executor: redisExecutor(redis.url) });
  const s = await waitForWant(platform, await want(platform, ['detach/1']), ['successful'], 30_000);
  const run = runsFor(s, 'detach/1')[0]!;
  t.is(run.worker, 'w1');
  const took = run.ended_at! - run.started_at!;
  t.true(took < CLOSE_GRACE_MS, `recorded ${took} ms long`);
});
