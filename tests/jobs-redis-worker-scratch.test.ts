/**
 * A worker keeps its scratch directory in the temp dir (its lease deadline, its runs' output files) and removes it as
 * it closes; one killed (`kill -9`, the OOM killer) left it for good: 3,048 of them in this machine's /tmp. Its
 * watchdog, which outlives it to kill its jobs, now removes it too. A real worker on a real redis-server, a real run.
 */
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bash, killAtTeardown, makeWorkspace, openPlatform, pidsIn, poll, runsFor, waitFor, want } from './helpers/jobs-fixture.js';
import { startRedis } from './helpers/redis-server.js';
import { redisExecutor, redisTests, startWorker } from './helpers/redis-fixture.js';

const graph = { jobs: [{ label: 'hold', outputs: ['hold/(?<n>\\d+)'], exec: bash('echo $$ >> hold.pid; echo output; sleep 100') }] };
const redisTest = redisTests();

redisTest("a worker killed with kill -9 leaves no scratch directory behind once its watchdog has killed its jobs", async (t) => {
  const redis = await startRedis(t);
  const dir = makeWorkspace(t);
  killAtTeardown(t, () => pidsIn(dir, 'hold.pid'));
  const w1 = startWorker(t, dir, redis.url, 'w1');
  await w1.waitForStdout(/takes runs/);
  const scratch = join(tmpdir(), `platform-worker-${w1.child.pid}`);
  t.true(existsSync(scratch), scratch);
  const platform = await openPlatform(t, dir, graph, { executor: redisExecutor(redis.url) });
  const w = await want(platform, ['hold/1']);
  await waitFor(platform, (s) => runsFor(s, 'hold/1')[0]?.worker === 'w1', 'hold/1 taken by w1', 15_000);
  t.true(await poll(() => pidsIn(dir, 'hold.pid').length > 0, 20_000), 'the job runs');
  w1.child.kill('SIGKILL');
  await w1.exited;
  t.true(await poll(() => !existsSync(scratch), 10_000), `${scratch} removed`);
  await platform.cancelWant(w);
});
