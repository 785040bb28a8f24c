/**
 * Backfills with real processes through the embedding API: priority against an interactive want (the event order
 * proves it), a cap never exceeded (counted exactly from the event log), a window that keeps the queue short, a
 * backfill that goes on past failures (what needed a failed input fails with the reason), the three policies, and
 * a backfill that picks up where it was after a restart.
 */
import test from 'ava';
import type { BuildEvent } from '../lib/events/build-event.js';
import type { CreateBackfillRequest } from '../lib/orchestrator/command.js';
import type { Platform } from '../lib/platform.js';
import { wantsOfRun } from '../lib/state/build-state.js';
import { backfillView, backfillWant } from '../lib/server/backfill-queries.js';
import { bash, makeWorkspace, openPlatform, waitFor, waitForWant } from './helpers/jobs-fixture.js';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

const graph = (maxConcurrent: number) => ({
  max_concurrent_job_runs: maxConcurrent,
  jobs: [
    { label: 'day', outputs: ['day/(?<n>\\d+)'], args: ['${n}'], exec: bash('sleep 0.02; [ -e "fail-$1" ] && exit 3; exit 0') },
    { label: 'raw', outputs: ['raw/(?<n>\\d+)'], args: ['${n}'], exec: bash('[ -e "fail-raw-$1" ] && exit 4; exit 0') },
    { label: 'report', outputs: ['report/(?<n>\\d+)'], inputs: [{ partition_ref: 'raw/${n}', dep_type: 'MATERIALIZE' }], exec: bash('true') },
  ],
});

const range = (prefix: string, n: number, from = 1) => Array.from({ length: n }, (_, i) => `${prefix}/${from + i}`);

function backfill(partitions: string[], extra: Partial<CreateBackfillRequest> = {}): CreateBackfillRequest {
  return { partitions, pattern: '', policy: 'missing', priority: 0, max_concurrent_job_runs: 0, comment: '', ...extra };
}

async function create(platform: Platform, request: CreateBackfillRequest): Promise<{ want_id: string; backfill_id: string }> {
  const r = await platform.createBackfill(request);
  if (!r.ok || !r.backfill) throw new Error(`backfill refused: ${r.ok ? 'no backfill in the reply' : r.error}`);
  return { want_id: r.want_id, backfill_id: r.backfill.backfill_id };
}

/** The most runs serving `rootWantId` (or its derived wants) that were running at once, replaying the log. */
async function maxRunningOf(platform: Platform, rootWantId: string): Promise<number> {
  const s = platform.state();
  const events: BuildEvent[] = await platform.log.list(0, 100_000);
  const serves = (runId: string) => [...wantsOfRun(s, runId)].some((w) => s.wants.get(w)?.root_want_id === rootWantId);
  const running = new Set<string>();
  let max = 0;
  for (const e of events) {
    if (e.type === 'job_run_started' && serves(e.job_run_started.job_run_id)) running.add(e.job_run_started.job_run_id);
    const ended =
      e.type === 'job_run_succeeded' ? e.job_run_succeeded.job_run_id
      : e.type === 'job_run_failed' ? e.job_run_failed.job_run_id
      : e.type === 'job_run_canceled' ? e.job_run_canceled.job_run_id
      : e.type === 'job_run_dep_missed' ? e.job_run_dep_missed.job_run_id
      : '';
    if (ended) running.delete(ended);
    max = Math.max(max, running.size);
  }
  return max;
}

test('an interactive want at priority 10 made during a 40-partition backfill at priority 0 starts before the backfill\'s remaining runs', async (t) => {
  const dir = makeWorkspace(t);
  const platform = await openPlatform(t, dir, graph(1));
  const bf = await create(platform, backfill(range('day', 40)));
  await waitFor(platform, (s) => s.job_runs_by_status.succeeded.size >= 2, 'two backfill runs to end');
  const urgent = await platform.createWant({ partitions: ['report/1'], comment: '', data_timestamp: 0, ttl_seconds: 0, sla_seconds: 0, priority: 10 });
  if (!urgent.ok) return t.fail(urgent.error);
  const after = platform.log.latestId();
  await waitForWant(platform, urgent.want_id, ['successful'], 20_000);
  const s = await waitForWant(platform, bf.want_id, ['successful'], 30_000);
  const started = (await platform.log.list(after, 10_000)).flatMap((e) =>
    e.type === 'job_run_started' ? [s.job_runs.get(e.job_run_started.job_run_id)!.config.outputs[0]!] : [],
  );
  const firstDay = started.findIndex((ref) => ref.startsWith('day/'));
  const lastUrgent = Math.max(started.indexOf('raw/1'), started.indexOf('report/1'));
  // At most the backfill run that took the free slot before the urgent want's run was queued comes first.
  t.true(started.indexOf('raw/1') >= 0 && started.indexOf('report/1') >= 0, `started: ${started.join(', ')}`);
  t.true(started.slice(0, lastUrgent).filter((ref) => ref.startsWith('day/')).length <= 1, `order: ${started.join(', ')} (first day run at ${firstDay})`);
  const view = backfillView(s, backfillWant(s, bf.backfill_id)!);
  t.like(view, { status: 'successful', partitions: 40, progress: 1, counts: { live: 40, failed: 0, skipped: 0, building: 0, waiting: 0, pending: 0 } });
});

test('a backfill\'s cap is never exceeded while an uncapped want still finds room, and its queue stays within its window', async (t) => {
  const dir = makeWorkspace(t);
  const platform = await openPlatform(t, dir, graph(4));
  const bf = await create(platform, backfill(range('day', 60), { max_concurrent_job_runs: 2 }));
  let maxQueued = 0;
  const sampler = platform.state$.subscribe((s) => {
    let queued = 0;
    for (const [, id] of s.job_runs_by_status.queued) if ([...wantsOfRun(s, id)].includes(bf.want_id)) queued++;
    maxQueued = Math.max(maxQueued, queued);
  });
  t.teardown(() => sampler.unsubscribe());
  await waitFor(platform, (s) => s.job_runs_by_status.succeeded.size >= 4, 'some backfill runs to end');
  const other = await platform.createWant({ partitions: range('raw', 4, 100), comment: '', data_timestamp: 0, ttl_seconds: 0, sla_seconds: 0 });
  if (!other.ok) return t.fail(other.error);
  await waitForWant(platform, other.want_id, ['successful'], 20_000);
  const s = await waitForWant(platform, bf.want_id, ['successful'], 30_000);
  t.is(await maxRunningOf(platform, bf.want_id), 2, 'the backfill ran two at once, never more');
  t.true((await maxRunningOf(platform, other.want_id)) >= 2, 'the uncapped want ran beside the backfill');
  const want = s.wants.get(bf.want_id)!;
  t.is(want.window, 4, 'a window of twice the cap');
  t.true(maxQueued <= want.window, `at most a window of queued runs (saw ${maxQueued})`);
  t.is(s.window_open.size, 0, 'nothing stays open once it ended');
});

test('a backfill goes on past failures: what needed a failed input fails with the reason, the rest is built, it ends failed', async (t) => {
  const dir = makeWorkspace(t, { 'fail-3': '', 'fail-raw-7': '' });
  const platform = await openPlatform(t, dir, graph(2));
  const bf = await create(platform, backfill([...range('day', 6), ...range('report', 3, 6)], { max_concurrent_job_runs: 1 }));
  const s = await waitForWant(platform, bf.want_id, ['failed', 'successful', 'upstream_failed'], 30_000);
  t.is(s.wants.get(bf.want_id)!.status, 'failed');
  t.like(backfillView(s, backfillWant(s, bf.backfill_id)!).counts, { live: 7, failed: 2, skipped: 0, pending: 0 });
  t.is(s.partitions.get('day/3')!.status, 'failed');
  t.is(s.partitions.get('report/7')!.status, 'failed');
  const why = s.job_runs.get(s.partitions.get('report/7')!.job_run_id)!.reason;
  t.regex(why, /input 'raw\/7' failed/);
  for (const ref of ['day/1', 'day/2', 'day/4', 'day/5', 'day/6', 'report/6', 'report/8']) t.is(s.partitions.get(ref)?.status, 'live', ref);
});

test('a backfill over an input that failed before it (policy missing) fails what needs it, with the reason, and ends; no want is derived for ever', async (t) => {
  const dir = makeWorkspace(t, { 'fail-raw-1': '' });
  // Ticks as a daemon has them: the loop was a want derived at each look at the backfill, a tick's included.
  const platform = await openPlatform(t, dir, graph(2), { tickMs: 100 });
  const first = await platform.createWant({ partitions: ['raw/1', 'raw/2'], comment: '', data_timestamp: 0, ttl_seconds: 0, sla_seconds: 0 });
  if (!first.ok) throw new Error(first.error);
  await waitForWant(platform, first.want_id, ['failed'], 20_000);
  // The want fails with raw/1's run; raw/2's may end a step later, and a taint of what is not built yet is refused.
  await waitFor(platform, (s) => s.partitions.get('raw/2')?.status === 'live', 'raw/2 built');
  const tainted = await platform.createTaint({ partitions: ['raw/2'], reason: 'late rows', downstream: false });
  t.true(tainted.ok, tainted.ok ? '' : tainted.error);
  const bf = await create(platform, backfill(range('report', 3)));
  let s = await waitForWant(platform, bf.want_id, ['failed', 'successful', 'upstream_failed'], 20_000);
  t.is(s.wants.get(bf.want_id)!.status, 'failed');
  t.like(backfillView(s, backfillWant(s, bf.backfill_id)!).counts, { live: 1, failed: 2, pending: 0 });
  const why = (ref: string) => s.job_runs.get(s.partitions.get(ref)!.job_run_id)!.reason;
  t.regex(why('report/1'), /input 'raw\/1' failed \(job run r-\d+\), and this want builds only what was never built nor attempted/);
  t.regex(why('report/2'), /input 'raw\/2' is tainted/);
  t.regex(why('report/1'), /policy 'failed'/, 'it says what to do');
  t.is(s.partitions.get('report/3')!.status, 'live');
  // The same through a want with rebuild 'absent': failed at once, and ticks make no wants.
  const absent = await platform.createWant({ partitions: ['report/1'], comment: '', data_timestamp: 0, ttl_seconds: 0, sla_seconds: 0, rebuild: 'absent' });
  if (!absent.ok) throw new Error(absent.error);
  s = await waitForWant(platform, absent.want_id, ['failed', 'successful', 'upstream_failed'], 20_000);
  const wants = s.wants.size;
  await new Promise((r) => setTimeout(r, 1_000));
  t.is(platform.state().wants.size, wants, 'no want was derived after the want ended (ten ticks)');
});

test('an input a run reports missing (dep_missed) that failed before a want with rebuild absent fails what needed it; no want is derived for ever', async (t) => {
  const dir = makeWorkspace(t, { 'fail-raw-1': '' });
  const platform = await openPlatform(
    t,
    dir,
    {
      jobs: [
        ...graph(2).jobs,
        // Finds its input missing at run time (no declared input): the run is dep_missed and names raw/<n>.
        { label: 'late', outputs: ['late/(?<n>\\d+)'], args: ['${n}'], exec: bash('echo "PLATFORM_MISSING_DEPS {\\"missing\\": [\\"raw/$1\\"]}"; exit 1') },
      ],
    },
    { tickMs: 100 },
  );
  const first = await platform.createWant({ partitions: ['raw/1'], comment: '', data_timestamp: 0, ttl_seconds: 0, sla_seconds: 0 });
  if (!first.ok) throw new Error(first.error);
  await waitForWant(platform, first.want_id, ['failed'], 20_000);
  const w = await platform.createWant({ partitions: ['late/1'], comment: '', data_timestamp: 0, ttl_seconds: 0, sla_seconds: 0, rebuild: 'absent' });
  if (!w.ok) throw new Error(w.error);
  const s = await waitForWant(platform, w.want_id, ['failed', 'successful', 'upstream_failed'], 20_000);
  t.is(s.wants.get(w.want_id)!.status, 'failed');
  t.regex(s.job_runs.get(s.partitions.get('late/1')!.job_run_id)!.reason, /input 'raw\/1' failed \(job run r-\d+\), and this want builds only/);
  const wants = s.wants.size;
  await new Promise((r) => setTimeout(r, 1_000));
  t.is(platform.state().wants.size, wants, 'no want was derived after the want ended (ten ticks)');
});

test('policies: missing leaves failed and tainted partitions, failed rebuilds them, all rebuilds everything', async (t) => {
  const dir = makeWorkspace(t, { 'fail-2': '' });
  const platform = await openPlatform(t, dir, graph(2));
  const first = await create(platform, backfill(range('day', 4)));
  await waitForWant(platform, first.want_id, ['failed'], 20_000);
  await platform.createTaint({ partitions: ['day/3'], reason: 'late rows', downstream: false });
  const runsOf = (s: ReturnType<Platform['state']>, ref: string) => [...s.job_runs.values()].filter((r) => r.config.outputs.includes(ref)).length;

  const missing = await create(platform, backfill(range('day', 5)));
  let s = await waitForWant(platform, missing.want_id, ['successful'], 20_000);
  t.like(backfillView(s, backfillWant(s, missing.backfill_id)!).counts, { live: 3, skipped: 2 });
  t.deepEqual(['day/1', 'day/2', 'day/3', 'day/4', 'day/5'].map((r) => runsOf(s, r)), [1, 1, 1, 1, 1], 'only day/5 was built');

  const { rmSync } = await import('node:fs');
  rmSync(`${dir}/fail-2`);
  const failed = await create(platform, backfill(range('day', 5), { policy: 'failed' }));
  s = await waitForWant(platform, failed.want_id, ['successful'], 20_000);
  t.deepEqual(['day/1', 'day/2', 'day/3', 'day/4', 'day/5'].map((r) => runsOf(s, r)), [1, 2, 2, 1, 1], 'the failed and the tainted one were rebuilt');

  const all = await create(platform, backfill(range('day', 5), { policy: 'all' }));
  s = await waitForWant(platform, all.want_id, ['successful'], 20_000);
  t.deepEqual(['day/1', 'day/2', 'day/3', 'day/4', 'day/5'].map((r) => runsOf(s, r)), [2, 3, 3, 2, 2], 'everything was rebuilt');
});

test('a backfill stopped by a restart goes on from where it was, and only its open window is scheduled per step', async (t) => {
  const dir = makeWorkspace(t);
  const first = await openPlatform(t, dir, graph(1));
  const bf = await create(first, backfill(range('day', 30), { max_concurrent_job_runs: 1 }));
  await waitFor(first, (s) => s.job_runs_by_status.succeeded.size >= 5, 'five runs to end');
  await first.close();
  const second = await openPlatform(t, dir, graph(2));
  const before = second.state().wants.get(bf.want_id)!;
  t.true(before.released < 30, 'not everything was released before the restart');
  const s = await waitForWant(second, bf.want_id, ['successful'], 30_000);
  t.is(backfillView(s, backfillWant(s, bf.backfill_id)!).counts.live, 30);
  t.is(s.wants.get(bf.want_id)!.released, 30);
  t.is(await maxRunningOf(second, bf.want_id), 1, 'its cap held across the restart');
});

test('a backfill whose partitions wait for their inputs to be built counts them waiting, not pending; a windowed one counts what is not let in yet as pending', async (t) => {
  const dir = makeWorkspace(t);
  const gatedGraph = {
    max_concurrent_job_runs: 2,
    jobs: [
      // The inputs wait until the test lets them end.
      { label: 'raw', outputs: ['raw/(?<n>\\d+)'], args: ['${n}'], exec: bash('for i in $(seq 400); do [ -e go ] && break; sleep 0.05; done') },
      { label: 'report', outputs: ['report/(?<n>\\d+)'], inputs: [{ partition_ref: 'raw/${n}', dep_type: 'MATERIALIZE' }], exec: bash('true') },
    ],
  };
  const platform = await openPlatform(t, dir, gatedGraph);
  const small = await create(platform, backfill(range('report', 3)));
  await waitFor(platform, (s) => [...s.job_runs_by_status.running.values()].length === 2, 'two inputs running');
  const view = backfillView(platform.state(), backfillWant(platform.state(), small.backfill_id)!);
  t.like(view.counts, { live: 0, building: 0, waiting: 3, pending: 0 });
  // Windowed: a cap of 1, a window of 2; of 10 partitions 2 are let in (waiting on their inputs), 8 not yet.
  const large = await create(platform, backfill(range('report', 10, 100), { max_concurrent_job_runs: 1 }));
  const wide = backfillView(platform.state(), backfillWant(platform.state(), large.backfill_id)!);
  t.like(wide.counts, { live: 0, building: 0, waiting: 2, pending: 8 });
  writeFileSync(join(dir, 'go'), '');
  await waitForWant(platform, small.want_id);
  const done = backfillView(platform.state(), backfillWant(platform.state(), small.backfill_id)!);
  t.like(done.counts, { live: 3, waiting: 0, pending: 0 });
});

test("a backfill of a batched job runs whole batches under its cap: its window holds the batches its runs take", async (t) => {
  const dir = makeWorkspace(t);
  const batched = {
    max_concurrent_job_runs: 4,
    jobs: [{ label: 'load', outputs: ['load/(?<n>\\d+)'], args: ['${n}'], exec: bash('echo "$#" >> batches.txt'), batch: { max_partitions: 100, max_wait_ms: 0 } }],
  };
  const platform = await openPlatform(t, dir, batched);
  // A cap of 2: a window of 4 partitions made batches of at most 4 (100 runs and more for 400 partitions).
  const { want_id } = await create(platform, backfill(range('load', 400), { max_concurrent_job_runs: 2 }));
  const s = await waitForWant(platform, want_id, ['successful'], 60_000);
  const runs = [...s.job_runs.values()].filter((r) => r.job_label === 'load');
  t.true(runs.length <= 8, `${runs.length} runs for 400 partitions batched by 100`);
  t.is(runs.reduce((n, r) => n + r.config.outputs.length, 0), 400);
  t.true(await maxRunningOf(platform, want_id) <= 2, 'the cap held');
});
