/**
 * A backfill's progress as the API and the CLI say it, against its counts: never 100% (nor 1) before every partition
 * settled, and 29 of 100 is 29%, not 28% (0.29 * 100 is 28.999...). A real server and event log in a temp workspace,
 * real job processes, and the real CLI as a subprocess (--server-url).
 */
import test from 'ava';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startServer } from './helpers/server-fixture.js';
import { until } from './helpers/until.js';
import { cliAgainst } from './helpers/cli-against.js';
import type { BackfillView } from '../lib/api/backfills.js';

const GRAPH = {
  max_concurrent_job_runs: 2,
  jobs: [
    // gate/N for N of 30 and more waits until the test lets it go (a minute at most): 29 of gate/{1..100} settle.
    { label: 'gate', outputs: ['gate/(?<n>\\d+)'], args: ['${n}'], exec: ['bash', '-c', 'if [ "$1" -ge 30 ]; then i=0; while [ ! -e open ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done; fi', 'gate'] },
    { label: 'many', outputs: ['many/(?<n>\\d+)'], exec: ['bash', '-c', 'true'], args: ['${n}'], batch: { max_partitions: 5000 } },
  ],
};

const settled = (b: BackfillView) => b.counts.live + b.counts.failed + b.counts.skipped + b.counts.canceled;

test("a backfill's progress is the share settled rounded down, in the API and the CLI: 29 of 100 is 29%, 19,999 of 20,000 is 99% and not 1", async (t) => {
  t.timeout(120_000);
  const f = await startServer(t, { graph: GRAPH });
  const cli = cliAgainst(() => f.url);
  const post = async (body: unknown) => (await (await fetch(`${f.url}/api/backfills`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).json()) as { backfill_id: string };
  const read = async (id: string) => (await (await fetch(`${f.url}/api/backfills/${id}`)).json()) as BackfillView;

  const small = await post({ pattern: 'gate/{1..100}' });
  const b1 = await until(() => read(small.backfill_id), (b) => settled(b) === 29, '29 of its 100 partitions settled', 60_000);
  t.is(b1.progress, 0.29);
  const list1 = await cli('backfills', 'list');
  t.true(list1.stdout.includes('29% of 100'), list1.stdout);
  const get1 = await cli('backfills', 'get', small.backfill_id);
  t.regex(get1.stdout, / 29% 29\/100 /, get1.stdout);

  // Its waiting runs leave their slots.
  await fetch(`${f.url}/api/backfills/${small.backfill_id}`, { method: 'DELETE' });
  // 19,999 of 20,000 settled, the last waiting: its share is 0.99995, which 4 decimals rounded to 1.
  const big = await post({ partitions: [...Array.from({ length: 19_999 }, (_, i) => `many/${i + 1}`), 'gate/100'] });
  const b2 = await until(() => read(big.backfill_id), (b) => settled(b) === 19_999, '19,999 of its 20,000 partitions settled', 60_000);
  t.is(b2.status, 'building');
  t.true(b2.progress < 1, `progress ${b2.progress} with one of 20,000 partitions still to settle`);
  const get2 = await cli('backfills', 'get', big.backfill_id);
  t.regex(get2.stdout, / 99% 19,999\/20,000 /, get2.stdout);
  writeFileSync(join(f.dir, 'open'), '');
  const done = await until(() => read(big.backfill_id), (b) => b.status === 'successful', 'the backfill to end', 60_000);
  t.is(done.progress, 1);
});
