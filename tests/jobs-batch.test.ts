/**
 * Batched jobs with real processes: refs of a batched job ready together are built by runs of up to
 * `max_partitions` (args concatenated per ref, PLATFORM_OUTPUTS listing them), each partition with its own build and
 * its own lineage; a failing batch is retried in halves until the bad ref fails alone; max_wait_ms gathers refs
 * that become ready apart; bad batch settings are refused at load.
 */
import test from 'ava';
import { parseGraph } from '../lib/graph/parse-graph.js';
import { buildLineage } from '../lib/state/build-state.js';
import { bash, lines, makeWorkspace, openPlatform, runs, waitForWant, want } from './helpers/jobs-fixture.js';

const graph = (batch: Record<string, unknown>, retries = 0) => ({
  max_concurrent_job_runs: 2,
  jobs: [
    { label: 'raw', outputs: ['raw/(?<n>\\d+)'], exec: bash('sleep 0.0$((RANDOM % 5))') },
    {
      label: 'load',
      outputs: ['load/(?<n>\\d+)'],
      inputs: [{ partition_ref: 'raw/${n}', dep_type: 'MATERIALIZE' }],
      args: ['${n}'],
      // Says what it was given; fails when a ref it builds has a fail-<n> file in the workspace.
      exec: bash('echo "$*" >> args.txt; echo "$PLATFORM_OUTPUTS" >> outputs.txt; for a in "$@"; do [ -e "fail-$a" ] && exit 9; done; exit 0'),
      retries,
      batch,
    },
  ],
});

const range = (prefix: string, from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => `${prefix}/${from + i}`);

test('10 refs ready together are built in ceil(10/4) = 3 runs, each partition with its own build and lineage', async (t) => {
  const dir = makeWorkspace(t);
  const platform = await openPlatform(t, dir, graph({ max_partitions: 4 }));
  await waitForWant(platform, await want(platform, range('raw', 1, 10)), ['successful']);
  const s = await waitForWant(platform, await want(platform, range('load', 1, 10)), ['successful'], 20_000);
  const loads = runs(s, 'load');
  t.is(loads.length, 3);
  t.deepEqual(loads.map((r) => r.config.outputs.length), [4, 4, 2]);
  t.deepEqual(lines(dir, 'args.txt').sort(), ['1 2 3 4', '5 6 7 8', '9 10'].sort(), 'args templated per ref and concatenated');
  t.deepEqual(lines(dir, 'outputs.txt').flatMap((l) => JSON.parse(l) as string[]).sort(), range('load', 1, 10).sort(), 'PLATFORM_OUTPUTS lists them');
  const builds = range('load', 1, 10).map((ref) => s.builds.get(s.partitions.get(ref)!.build_id)!);
  t.is(new Set(builds.map((b) => b.build_id)).size, 10, 'a build of its own for each partition');
  for (const b of builds) {
    const n = b.partition_ref.split('/')[1]!;
    t.deepEqual(buildLineage(s, b).inputs.map((i) => i.partition_ref), [`raw/${n}`], `${b.partition_ref} consumed only its own input`);
  }
});

test('a failing batch fails its partitions; retried in halves, the other refs end live and the bad one fails alone', async (t) => {
  const dir = makeWorkspace(t, { 'fail-7': '' });
  const platform = await openPlatform(t, dir, graph({ max_partitions: 4 }, 3));
  await waitForWant(platform, await want(platform, range('raw', 5, 8)), ['successful']);
  const s = await waitForWant(platform, await want(platform, range('load', 5, 8)), ['failed'], 30_000);
  t.deepEqual(['load/5', 'load/6', 'load/7', 'load/8'].map((r) => s.partitions.get(r)?.status), ['live', 'live', 'failed', 'live']);
  // Attempt by attempt, the batch halves: 4 -> 2 + 2 -> (the failing half) 1 + 1 -> the bad ref alone.
  const byAttempt = (n: number) => runs(s, 'load').filter((r) => r.attempt === n).map((r) => r.config.outputs.join(',')).sort();
  t.deepEqual(byAttempt(1), ['load/5,load/6,load/7,load/8']);
  t.deepEqual(byAttempt(2), ['load/5,load/6', 'load/7,load/8']);
  t.deepEqual(byAttempt(3), ['load/7', 'load/8']);
  t.deepEqual(byAttempt(4), ['load/7']);
  t.is(runs(s, 'load')[0]!.config.outputs.length, 4, 'the first attempt was the whole batch');
  // A batch retried in halves is retried by its first half (the one with its first output): each failed run names it.
  const load = runs(s, 'load');
  const run = (attempt: number, outputs: string) => load.find((r) => r.attempt === attempt && r.config.outputs.join(',') === outputs)!;
  t.deepEqual(
    load.filter((r) => r.status === 'failed').map((r) => [r.config.outputs.join(','), r.retried_by]),
    [
      ['load/5,load/6,load/7,load/8', run(2, 'load/5,load/6').job_run_id],
      ['load/7,load/8', run(3, 'load/7').job_run_id],
      ['load/7', run(4, 'load/7').job_run_id],
      ['load/7', ''],
    ],
  );
  t.true(runs(s, 'load').filter((r) => r.status === 'failed' && r.retry_at === 0).every((r) => r.config.outputs.join() === 'load/7'), 'only load/7 failed for good');
});

test('max_wait_ms gathers refs that become ready apart into fuller runs', async (t) => {
  // The wait must cover all 8 inputs' builds (4 rounds of bash, two at a time), even on a loaded machine: at 1.5 s
  // a full test run once saw them go in 3 runs.
  const dir = makeWorkspace(t);
  const platform = await openPlatform(t, dir, graph({ max_partitions: 8, max_wait_ms: 3000 }));
  const s = await waitForWant(platform, await want(platform, range('load', 1, 8)), ['successful'], 30_000);
  const loads = runs(s, 'load');
  t.true(loads.length <= 2, `8 refs whose inputs were built one after the other went in ${loads.length} runs`);
  t.true(loads.every((r) => r.config.outputs.length <= 8));
});

test('bad batch settings are refused at load, naming the job and field', (t) => {
  const job = (extra: Record<string, unknown>) => () => parseGraph({ jobs: [{ label: 'j', outputs: ['j/(?<n>\\d+)'], exec: ['true'], ...extra }] }, 'platform.json');
  t.throws(job({ batch: { max_partitions: 0 } }), { message: /job "j"\)?.*batch\.max_partitions|batch\.max_partitions.*job "j"/ });
  t.throws(job({ batch: { max_partitions: 4, max_wait_ms: -1 } }), { message: /max_wait_ms/ });
  t.throws(job({ batch: { max_partitions: 4, size: 3 } }), { message: /batch\.size.*unknown key/ });
  t.throws(job({ batch: { max_partitions: 4 }, config: ['cfg'] }), { message: /config-program job.*declarative/ });
  t.throws(job({ batch: { max_partitions: 4 }, env: { N: '${n}' } }), { message: /env\.N.*batched job's env is one for all the refs/ });
  t.like(parseGraph({ jobs: [{ label: 'j', outputs: ['j/.*'], exec: ['true'], batch: { max_partitions: 4 } }] }, 'p').jobs[0]!.batch, { max_partitions: 4, max_wait_ms: 0 });
});

test('a batch is split before its PLATFORM_OUTPUTS passes the OS limit on one environment string (spawn E2BIG)', async (t) => {
  // 600 refs of ~250 bytes ready together: ~150 KB of PLATFORM_OUTPUTS in one run of max_partitions 1000, over
  // Linux's 128 KiB a string. Three wants of 200 (a want over 256 refs is scheduled a window at a time, and a
  // window is less than that), gathered by max_wait_ms.
  const pad = 'x'.repeat(240);
  const dir = makeWorkspace(t);
  const platform = await openPlatform(t, dir, {
    jobs: [
      {
        label: 'wide',
        outputs: [`wide/(?<n>\\d+)-${pad}`],
        exec: bash('echo "$PLATFORM_OUTPUTS" >> outputs.txt'),
        batch: { max_partitions: 1000, max_wait_ms: 2000 },
      },
    ],
  });
  const refs = Array.from({ length: 600 }, (_, i) => `wide/${i}-${pad}`);
  const wants = await Promise.all([0, 1, 2].map((k) => want(platform, refs.slice(200 * k, 200 * (k + 1)))));
  for (const w of wants) await waitForWant(platform, w, ['successful', 'failed'], 30_000);
  const s = platform.state();
  const wide = runs(s, 'wide');
  t.deepEqual(wide.map((r) => r.status), wide.map(() => 'succeeded'), 'every run started and succeeded');
  t.true(wide.some((r) => r.config.outputs.length > 256), 'refs of several wants went in one run');
  const outputs = lines(dir, 'outputs.txt');
  for (const l of outputs) t.true(Buffer.byteLength(l) <= 96 * 1024, `a PLATFORM_OUTPUTS of ${Buffer.byteLength(l)} bytes`);
  t.deepEqual(outputs.flatMap((l) => JSON.parse(l) as string[]).sort(), [...refs].sort(), 'each ref built once');
});
