/**
 * A worker that is stopped (SIGSTOP, a hung event loop) past its lease while its job goes on: the daemon records the
 * run lost and another worker builds the partition again, so the stopped worker's job must be gone by then. The
 * worker cannot act while stopped; its watchdog can.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { bash, killAtTeardown, makeWorkspace, openPlatform, pidsIn, runsFor, untilJobWrote, waitFor, waitForWant, want } from './helpers/jobs-fixture.js';
import { startRedis } from './helpers/redis-server.js';
import { redisExecutor, redisTests, startWorker } from './helpers/redis-fixture.js';

const graph = {
  jobs: [
    // Hangs the first time; the second time it says whether the first is still alive (a zombie runs no more).
    {
      label: 'once',
      outputs: ['once/(?<n>\\d+)'],
      exec: bash(
        'if [ -e once.pid ]; then s=$(awk \'{print $3}\' "/proc/$(cat once.pid)/stat" 2>/dev/null); case "$s" in ""|Z) echo alone >> once.txt;; *) echo "overlap $s" >> once.txt;; esac; exit 0; fi; echo $$ > once.pid; sleep 100',
      ),
    },
  ],
};

const redisTest = redisTests();

redisTest('a worker stopped past its lease: its job is gone before another worker builds the partition again', async (t) => {
  const redis = await startRedis(t);
  const dir = makeWorkspace(t);
  killAtTeardown(t, () => pidsIn(dir, 'once.pid'));
  const w1 = startWorker(t, dir, redis.url, 'w1');
  t.teardown(() => void w1.child.kill('SIGCONT'));
  await w1.waitForStdout(/takes runs/);
  const platform = await openPlatform(t, dir, graph, { executor: redisExecutor(redis.url) });
  const w = await want(platform, ['once/1']);
  await waitFor(platform, (s) => runsFor(s, 'once/1')[0]?.worker === 'w1', 'once/1 taken by w1', 15_000);
  t.true(await untilJobWrote(() => pidsIn(dir, 'once.pid').length > 0, () => runsFor(platform.state(), 'once/1')[0]?.pid ?? 0), 'the job runs');
  const w2 = startWorker(t, dir, redis.url, 'w2');
  await w2.waitForStdout(/takes runs/);
  w1.child.kill('SIGSTOP');
  const s = await waitForWant(platform, w, ['successful'], 30_000);
  const attempts = runsFor(s, 'once/1');
  t.deepEqual(attempts.map((r) => r.status), ['canceled', 'succeeded']);
  t.is(attempts[1]!.worker, 'w2');
  t.deepEqual(readFileSync(join(dir, 'once.txt'), 'utf8').trim().split('\n'), ['alone'], "the stopped worker's job was gone before the second ran");
});
