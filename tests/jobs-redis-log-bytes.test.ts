/**
 * A remote run's output reaches its log files byte for byte, as a local run's does: CRLF line ends, bytes that are
 * no UTF-8, a last line with no newline, and output larger than a stream entry (64 KiB) written at once. (The worker
 * shipped lines decoded as UTF-8: a CR was dropped, a stray byte became U+FFFD and a newline was added at the end.)
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { bash, makeWorkspace, openPlatform, runsFor, waitForWant, want } from './helpers/jobs-fixture.js';
import { startRedis } from './helpers/redis-server.js';
import { redisExecutor, redisTests, startWorker } from './helpers/redis-fixture.js';

const graph = {
  jobs: [
    {
      label: 'noisy',
      outputs: ['noisy/(?<n>\\d+)'],
      // What the job printed is kept beside it, in the worker's directory, to compare with the daemon's copy.
      exec: bash(
        "head -c 300000 /dev/urandom > big.bin; cat big.bin; printf 'a\\r\\nb\\377\\376\\r\\nno newline' | tee -a big.bin; printf 'e\\r\\n\\300\\n end' | tee err.bin >&2",
      ),
    },
  ],
};
const redisTest = redisTests();

redisTest("a remote run's output is in its log files byte for byte: CRLF, bytes that are no UTF-8, no final newline, more than an entry", async (t) => {
  const redis = await startRedis(t);
  const dir = makeWorkspace(t);
  const work = makeWorkspace(t);
  const w1 = startWorker(t, dir, redis.url, 'w1', ['--workdir', work]);
  await w1.waitForStdout(/takes runs/);
  const platform = await openPlatform(t, dir, graph, { executor: redisExecutor(redis.url) });
  const s = await waitForWant(platform, await want(platform, ['noisy/1']), ['successful'], 30_000);
  const run = runsFor(s, 'noisy/1')[0]!;
  t.is(run.worker, 'w1');
  const logs = join(dir, '.platform', 'logs', run.job_run_id);
  const printed = readFileSync(join(work, 'big.bin'));
  t.true(printed.length > 300_000, `${printed.length} bytes`);
  t.true(readFileSync(join(logs, 'stdout.log')).equals(printed), 'stdout.log is what the job printed');
  t.true(readFileSync(join(logs, 'stderr.log')).equals(readFileSync(join(work, 'err.bin'))), 'stderr.log is what the job printed');
});
