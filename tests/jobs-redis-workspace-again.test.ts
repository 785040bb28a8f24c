/**
 * A workspace made again at the same path (its .platform removed) numbers its runs from r-1 again, and its Redis job
 * ids (the path's hash and the run id) are those of the earlier workspace's runs, which BullMQ keeps 7 days once
 * ended. The new r-1's add was deduplicated onto the old job, and the old job's outcome recorded as the new run's,
 * which never ran. Real redis-server, a real `platform worker`.
 */
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { bash, makeWorkspace, openPlatform, runsFor, sleep, waitForWant, want } from './helpers/jobs-fixture.js';
import { startRedis } from './helpers/redis-server.js';
import { redisExecutor, redisTests, startWorker } from './helpers/redis-fixture.js';

const graph = { max_concurrent_job_runs: 2, jobs: [{ label: 'raw', outputs: ['raw/(?<n>\\d+)'], args: ['${n}'], exec: bash('echo "ran $1" >> ran.txt; echo "out of attempt $(wc -l < ran.txt)"') }] };
const redisTest = redisTests();

redisTest("a workspace made again at the same path runs its r-1, not the earlier workspace's r-1 taken for it", async (t) => {
  const redis = await startRedis(t);
  const dir = makeWorkspace(t);
  const workdir = makeWorkspace(t);
  const w1 = startWorker(t, dir, redis.url, 'w1', ['--workdir', workdir]);
  await w1.waitForStdout(/takes runs/);
  const first = await openPlatform(t, dir, graph, { executor: redisExecutor(redis.url) });
  const before = await waitForWant(first, await want(first, ['raw/1']), ['successful'], 30_000);
  t.is(runsFor(before, 'raw/1')[0]!.job_run_id, 'r-1');
  await first.close();
  rmSync(join(dir, '.platform'), { recursive: true, force: true });
  // Past the slack for a clock stepped back (redis-executor.ts STALE_JOB_SLACK_MS).
  await sleep(1100);

  const again = await openPlatform(t, dir, graph, { executor: redisExecutor(redis.url) });
  const after = await waitForWant(again, await want(again, ['raw/1']), ['successful'], 30_000);
  const run = runsFor(after, 'raw/1')[0]!;
  t.is(run.job_run_id, 'r-1', 'the same run id as the earlier workspace\'s');
  t.is(readFileSync(join(workdir, 'ran.txt'), 'utf8'), 'ran 1\nran 1\n', 'the job ran again for the new workspace');
  t.is(readFileSync(join(dir, '.platform', 'logs', 'r-1', 'stdout.log'), 'utf8'), 'out of attempt 2\n', "its log is its own output, not the earlier run's");
  await again.close();
});
