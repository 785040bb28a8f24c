/**
 * A job that kills its worker (or has the machine kill it: out of memory) is lost each time. A lost run is rebuilt
 * without spending the job's retries, so with a supervisor restarting the worker the job was run again for ever (a
 * run every few seconds, the want building for good). The third run of a partition lost in a row is now recorded as a
 * failure, retried by the job's `retries`, then final. A real redis-server, real workers killed by the real job.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LOST_IN_A_ROW_LIMIT } from '../lib/orchestrator/run-outcomes.js';
import { makeWorkspace, openPlatform, runsFor, waitFor, want } from './helpers/jobs-fixture.js';
import { startRedis } from './helpers/redis-server.js';
import { redisExecutor, redisTests, startWorker } from './helpers/redis-fixture.js';

const graph = {
  jobs: [
    // Its parent is the worker: each run kills it (as an OOM kill of the worker would), having said it ran.
    { label: 'poison', outputs: ['poison/(?<n>\\d+)'], exec: ['sh', '-c', `echo "$PLATFORM_JOB_RUN_ID" >> "$RAN"; kill -9 $PPID; sleep 30`], env: { RAN: '' }, retries: 1 },
  ],
};
const redisTest = redisTests();

redisTest('a partition whose runs are lost three times in a row fails, retried by its retries, not run for ever', async (t) => {
  const redis = await startRedis(t);
  const dir = makeWorkspace(t);
  const ran = join(dir, 'ran.txt');
  graph.jobs[0]!.env = { RAN: ran };
  const platform = await openPlatform(t, dir, graph, { executor: redisExecutor(redis.url) });
  const w = await want(platform, ['poison/1']);
  // A supervisor bringing the worker back each time it dies, as systemd's Restart=always does: eight times at most.
  const failed = () => platform.state().wants.get(w)?.status === 'failed';
  const wantFailed = waitFor(platform, (x) => x.wants.get(w)?.status === 'failed', 'the want failed', 60_000).catch(() => undefined);
  for (let i = 1; i <= 8 && !failed(); i++) {
    const worker = startWorker(t, dir, redis.url, `w${i}`);
    await Promise.race([worker.exited, wantFailed]);
  }
  const s = await waitFor(platform, (x) => x.wants.get(w)?.status === 'failed', 'the want failed', 20_000);
  const runs = runsFor(s, 'poison/1');
  // Two lost as before (canceled, rebuilt at no cost), the third a failure, its retry (attempt 2) the last.
  t.deepEqual(
    runs.map((r) => [r.status, r.attempt]),
    [...Array.from({ length: LOST_IN_A_ROW_LIMIT - 1 }, () => ['canceled', 1]), ['failed', 1], ['failed', 2]],
  );
  t.regex(runs[LOST_IN_A_ROW_LIMIT - 1]!.reason, /^lost: .*; the run of poison\/1 lost 3 times in a row: .*the job's retries apply$/);
  t.true(runs.at(-1)!.reason.startsWith('lost: '), runs.at(-1)!.reason);
  const executed = readFileSync(ran, 'utf8').trim().split('\n');
  t.deepEqual(executed, runs.map((r) => r.job_run_id), 'each run executed once, none twice');
});
