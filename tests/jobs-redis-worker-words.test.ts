/**
 * What a worker's failures say: a program that cannot start there names the worker and what of it is at fault (its
 * --workdir, its PATH), not only platform.json; a run it stops for want of word from Redis names the run and does not
 * promise a rerun (its want may be canceled); a run lost with its worker says so in our words, not BullMQ's.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bash, makeWorkspace, openPlatform, pidsIn, poll, runsFor, waitFor, want } from './helpers/jobs-fixture.js';
import { startRedis } from './helpers/redis-server.js';
import { holdingOnW1, redisExecutor, redisTests, startWorker } from './helpers/redis-fixture.js';

const graph = {
  jobs: [
    { label: 'shell', outputs: ['shell/(?<n>\\d+)'], exec: ['sh', '-c', 'true'] },
    { label: 'missing', outputs: ['missing/(?<n>\\d+)'], exec: ['platform-test-no-such-program'] },
    { label: 'hold', outputs: ['hold/(?<n>\\d+)'], exec: bash('echo $$ >> hold.pid; sleep 100') },
  ],
};
const redisTest = redisTests();

redisTest("a program that cannot start on a worker: the reason names the worker and its --workdir, or its PATH", async (t) => {
  const redis = await startRedis(t);
  const dir = makeWorkspace(t);
  const gone = mkdtempSync(join(tmpdir(), 'platform-gone-'));
  rmSync(gone, { recursive: true });
  const w3 = startWorker(t, dir, redis.url, 'w3', ['--workdir', gone]);
  await w3.waitForStdout(/takes runs/);
  const platform = await openPlatform(t, dir, graph, { executor: redisExecutor(redis.url) });
  await want(platform, ['shell/1']);
  const s1 = await waitFor(platform, (s) => runsFor(s, 'shell/1')[0]?.status === 'failed', 'shell/1 failed', 15_000);
  t.is(runsFor(s1, 'shell/1')[0]!.reason, `could not start 'sh' on worker w3: working directory '${gone}' does not exist there (the worker's --workdir)`);
  w3.child.kill('SIGKILL');
  await w3.exited;

  const w4 = startWorker(t, dir, redis.url, 'w4');
  await w4.waitForStdout(/takes runs/);
  await want(platform, ['missing/1']);
  const s2 = await waitFor(platform, (s) => runsFor(s, 'missing/1')[0]?.status === 'failed', 'missing/1 failed', 15_000);
  t.is(
    runsFor(s2, 'missing/1')[0]!.reason,
    "could not start 'platform-test-no-such-program' on worker w4: not found on its PATH; check exec in platform.json, and the PATH worker w4 runs with",
  );
});

redisTest('a run a worker stops for want of word from Redis is named and no rerun promised, the reason in our words; one lost with its worker too', async (t) => {
  const { redis, dir, w1, platform, want: w, run } = await holdingOnW1(t);
  // The worker hears nothing from Redis for its 1 s lease: it stops the run itself.
  redis.freeze(true);
  t.teardown(() => redis.freeze(false));
  await w1.waitForStdout(new RegExp(`${run}: no word from Redis`), 10_000);
  t.regex(w1.stdout(), new RegExp(`${run}: no word from Redis for its lease \\(1 s\\); stopping the run before the lease ends \\(the daemon records it lost, and runs it again if it is still wanted\\)`));
  t.notRegex(w1.stdout(), /the daemon runs it again/);
  // Redis back: the worker's own words reach the daemon with the run's end.
  redis.freeze(false);
  const stopped = await waitFor(platform, (x) => runsFor(x, 'hold/1')[0]?.status === 'canceled', 'hold/1 stopped', 20_000);
  t.is(runsFor(stopped, 'hold/1')[0]!.reason, "worker w1 heard nothing from Redis for the run's lease (1 s) and stopped it before the lease ended");
  // Still wanted: run again, on w1. Killed there, the run is lost, and said so in our words.
  const again = await waitFor(platform, (x) => runsFor(x, 'hold/1')[1]?.worker === 'w1', 'hold/1 run again on w1', 15_000);
  t.true(await poll(() => pidsIn(dir, 'hold.pid').length > 1, 20_000), 'the job runs again');
  const second = runsFor(again, 'hold/1')[1]!.job_run_id;
  w1.child.kill('SIGKILL');
  const lost = await waitFor(platform, (x) => x.job_runs.get(second)?.status === 'canceled', 'the second run recorded lost', 20_000);
  t.is(
    lost.job_runs.get(second)!.reason,
    'lost: nothing ran it any more and nothing recorded how it ended (its worker stopped renewing its lease: the worker died, hung, or lost touch with Redis (a worker that hears nothing from Redis for its lease stops the run itself))',
  );
  await platform.cancelWant(w);
});
