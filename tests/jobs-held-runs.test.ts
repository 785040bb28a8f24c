/**
 * Runs held past the cap by the native launcher (docs/decisions.md, "Speed, session 24"): the orchestrator hands over
 * as many runs again as the cap, and the launcher starts the next the moment one of its runs ends, without a step's
 * round trip. What must hold: never more runs at once than the cap (counted by the jobs' own clocks, with runs an
 * earlier platform left going), the order of priorities (a more urgent want passes what is held), a cancel of a held
 * run, and a stop: what was held is started by the next platform, not by the launcher on its own.
 */
import { emptyList, listArray, listItems, listLength } from '../lib/state/append-list.js';
import test from 'ava';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { makeWorkspace, openPlatform, poll, sleep, waitFor, waitForWant } from './helpers/jobs-fixture.js';
import { handedOver, holdLoopUntil, marked, markedUntilReleased, markWritten, mostAtOnce, openSupervised, release, spans, WIDE_ENV } from './helpers/held-runs-fixture.js';

const NATIVE = fileURLToPath(new URL('../native/platform-launcher', import.meta.url));
const request = (partitions: string[], priority = 0) => ({ partitions, comment: '', data_timestamp: 0, ttl_seconds: 0, sla_seconds: 0, priority });

/**
 * Keeps this process's event loop (and every platform in it) busy until `done()` says so, or `ms` at most; the end, in
 * ns as the jobs' marks. Held until what the test looks for happened, not for a fixed time: how soon a job gets to its
 * marks on a loaded machine is no fixed time. Where only the platform (not the launcher) could make it happen, it
 * never does while the loop is held, and the hold ends at `ms` with the test failing.
 */

/** How many of the marks of the given kind ('start', 'end') the jobs have written whole (a line of ns). */
function marksWritten(dir: string, kind: 'start' | 'end'): number {
  const marks = join(dir, 'marks');
  if (!existsSync(marks)) return 0;
  let n = 0;
  for (const f of readdirSync(marks)) {
    if (!f.endsWith(`.${kind}`)) continue;
    try {
      if (readFileSync(join(marks, f), 'utf8').endsWith('\n')) n++;
    } catch {
      // being written
    }
  }
  return n;
}



// Serial (ava runs these before the others): it holds the test process's event loop, every platform in it with it.
test.serial('the run after a full slot starts when the run before it ends, while the platform is too busy to take a step', async (t) => {
  if (!existsSync(NATIVE)) return t.pass('the native launcher is not built here (no C compiler): runs are not held');
  const dir = makeWorkspace(t);
  // p/1 runs until released, once p/2 is in the launcher's hands (a fixed 0.3 s could end first on a loaded machine,
  // and p/2 then be started on the free slot before the loop was held); p/2 ends at once.
  release(dir, 'p_2');
  const platform = await openSupervised(t, dir, { max_concurrent_job_runs: 1, jobs: [{ label: 'p', outputs: ['p/(?<n>\\d+)'], exec: markedUntilReleased() }] });
  const id = (await platform.createWant(request(['p/1', 'p/2']))) as { ok: true; want_id: string };
  await waitFor(platform, (s) => s.job_runs_by_status.running.size === 1, 'p/1 to start');
  t.true(await poll(() => handedOver(dir, platform, ['p/2']), 20_000), 'p/2 was handed to the launcher');
  release(dir, 'p_1');
  // The event loop held from here until p/2 started (10 s at most): p/1 ends within it, and only the launcher can
  // start p/2.
  const heldUntil = holdLoopUntil(() => markWritten(dir, 'p_2.start'), 10_000);
  await waitForWant(platform, id.want_id, ['successful'], 10_000);
  const s = spans(dir);
  t.true(s.get('p_1')![1] < heldUntil, 'p/1 ended while the loop was held');
  t.true(s.get('p_2')![0] < heldUntil, 'p/2 started while the loop was held, as p/1 ended');
  t.true(s.get('p_2')![0] >= s.get('p_1')![1], 'and not before: one at a time');
});

test.serial('runs are held well past the cap once runs are seen to be short: with one slot, twenty short runs go on while the platform is too busy to take a step', async (t) => {
  if (!existsSync(NATIVE)) return t.pass('the native launcher is not built here (no C compiler): runs are not held');
  const dir = makeWorkspace(t);
  const platform = await openSupervised(t, dir, { max_concurrent_job_runs: 1, jobs: [{ label: 'p', outputs: ['p/(?<n>\\d+)'], exec: marked(0.02) }] });
  const refs = Array.from({ length: 21 }, (_, i) => `p/${i}`);
  const id = (await platform.createWant(request(refs))) as { ok: true; want_id: string };
  // Once a run ended in well under a second, runs are short: the launcher holds them deep (hold-depth.ts).
  await waitFor(platform, (s) => s.job_runs_by_status.succeeded.size >= 1, 'the first run to end');
  // A step's round trip is what the hold covers: held as deep as the cap (one), only two would run however long the
  // loop is held. Held until ten more runs ended (20 s at most).
  const heldUntil = holdLoopUntil(() => marksWritten(dir, 'end') >= 11, 20_000);
  await waitForWant(platform, id.want_id, ['successful'], 20_000);
  const s = spans(dir);
  t.is(s.size, 21);
  const endedWhileHeld = [...s.values()].filter(([, end]) => end < heldUntil).length - 1;
  t.true(endedWhileHeld >= 10, `${endedWhileHeld} of the 20 after the first ended while the loop was held`);
  t.is(mostAtOnce(s.values()), 1, 'one at a time, by their own clocks');
});

test('never more runs at once than the cap, by the jobs\' own clocks, with runs a stopped platform left going', async (t) => {
  const dir = makeWorkspace(t);
  const graph = {
    max_concurrent_job_runs: 2,
    jobs: [
      { label: 'long', outputs: ['long/(?<n>\\d+)'], exec: marked(1) },
      { label: 'raw', outputs: ['raw/(?<n>\\d+)'], exec: marked(0.05) },
      { label: 'daily', outputs: ['daily/(?<n>\\d+)'], inputs: [{ partition_ref: 'raw/${n}', dep_type: 'MATERIALIZE' }], exec: marked(0.02) },
    ],
  };
  const first = await openSupervised(t, dir, graph, false);
  await first.createWant(request(['long/1', 'long/2']));
  await waitFor(first, (s) => s.job_runs_by_status.running.size === 2, 'both long runs to start');
  await first.close();
  // The next platform re-attaches both: its launcher may start nothing of its own until one of them ended.
  const second = await openSupervised(t, dir, graph);
  const daily = (await second.createWant(request(Array.from({ length: 12 }, (_, i) => `daily/${i}`)))) as { ok: true; want_id: string };
  await waitForWant(second, daily.want_id, ['successful'], 30_000);
  const s = spans(dir);
  t.is(s.size, 26, [...s.keys()].join(' '));
  t.is(mostAtOnce(s.values()), 2);
});

for (const executor of ['supervised', 'in-process'] as const) {
  test(`${executor}: a more urgent want passes the runs held for a full slot; its input's run and its own start before any held one`, async (t) => {
    const dir = makeWorkspace(t);
    const graph = {
      max_concurrent_job_runs: 1,
      jobs: [
        { label: 'bulk', outputs: ['bulk/(?<n>\\d+)'], exec: markedUntilReleased() },
        { label: 'raw', outputs: ['raw/(?<n>\\d+)'], exec: marked(0.2) },
        { label: 'report', outputs: ['report/(?<n>\\d+)'], inputs: [{ partition_ref: 'raw/${n}', dep_type: 'MATERIALIZE' }], exec: marked(0) },
      ],
    };
    const platform = await openPlatform(t, dir, graph, { executor });
    // bulk/1 runs until the urgent want's step has queued raw/1 (of a fixed 0.6 s, it could end first on a loaded
    // machine). A run whose slot freed before a more urgent want's step is started first, held or not: that race is
    // the same without holding. bulk/2 and bulk/3 end at once.
    release(dir, 'bulk_2');
    release(dir, 'bulk_3');
    const bulk = (await platform.createWant(request(['bulk/1', 'bulk/2', 'bulk/3']))) as { ok: true; want_id: string };
    await waitFor(platform, (s) => s.job_runs_by_status.running.size === 1, 'bulk/1 to start');
    const urgent = (await platform.createWant(request(['report/1'], 10))) as { ok: true; want_id: string };
    await waitFor(platform, (s) => [...s.job_runs.values()].some((r) => r.config.outputs.includes('raw/1')), 'the urgent want\'s step to queue raw/1');
    release(dir, 'bulk_1');
    await waitForWant(platform, urgent.want_id, ['successful'], 10_000);
    await waitForWant(platform, bulk.want_id, ['successful'], 10_000);
    const s = spans(dir);
    const order = [...s.entries()].sort((a, b) => (a[1][0] < b[1][0] ? -1 : 1)).map(([name]) => name);
    t.deepEqual(order, ['bulk_1', 'raw_1', 'report_1', 'bulk_2', 'bulk_3']);
    t.is(mostAtOnce(s.values()), 1);
  });
}

test('a held run canceled before it started never runs, and is recorded canceled', async (t) => {
  const dir = makeWorkspace(t);
  // p/1 runs until the cancel is taken: of a fixed 0.5 s, it could end first on a loaded machine, and p/2 then ran.
  const platform = await openSupervised(t, dir, { max_concurrent_job_runs: 1, jobs: [{ label: 'p', outputs: ['p/(?<n>\\d+)'], exec: markedUntilReleased() }] });
  const a = (await platform.createWant(request(['p/1']))) as { ok: true; want_id: string };
  const b = (await platform.createWant(request(['p/2']))) as { ok: true; want_id: string };
  await waitFor(platform, (s) => s.job_runs_by_status.running.size === 1, 'p/1 to start');
  const canceled = await platform.cancelWant(b.want_id, 'not needed');
  t.true(canceled.ok);
  release(dir, 'p_1');
  await waitForWant(platform, a.want_id, ['successful'], 10_000);
  await sleep(300);
  const s = platform.state();
  const run = s.job_runs.get(listArray(s.wants.get(b.want_id)!.job_run_ids)[0]!)!;
  t.is(run.status, 'canceled');
  t.false(spans(dir).has('p_2'), 'p/2 never ran');
});

test('a stop with runs held leaves them queued: the launcher does not start them on its own, the next platform does', async (t) => {
  if (!existsSync(NATIVE)) return t.pass('the native launcher is not built here (no C compiler): runs are not held');
  const dir = makeWorkspace(t);
  // p/1 runs until the platform is closed, then ends: of a fixed 0.4 s, it could end first on a loaded machine, and the
  // platform then started p/2 itself. p/2, run by the next platform, ends at once.
  const graph = { max_concurrent_job_runs: 1, jobs: [{ label: 'p', outputs: ['p/(?<n>\\d+)'], exec: markedUntilReleased() }] };
  release(dir, 'p_2');
  const first = await openSupervised(t, dir, graph, false);
  const w = (await first.createWant(request(['p/1', 'p/2']))) as { ok: true; want_id: string };
  await waitFor(first, (s) => s.job_runs_by_status.running.size === 1, 'p/1 to start');
  await first.close();
  release(dir, 'p_1');
  t.true(await poll(() => existsSync(join(dir, 'marks', 'p_1.end')), 10_000), 'p/1 ran to its end without a platform');
  // Time for a launcher that would start p/2 on the slot p/1 freed to do so.
  await sleep(1000);
  t.false(spans(dir).has('p_2'), 'p/2 was not started by the launcher with no platform to record it');
  const second = await openSupervised(t, dir, graph);
  await waitForWant(second, w.want_id, ['successful'], 10_000);
  t.true(spans(dir).has('p_2'));
});

test("a run the launcher's records cannot carry (8,000 variables) is held for room under the cap like any run, not started beside the running one", async (t) => {
  const dir = makeWorkspace(t);
  const graph = {
    max_concurrent_job_runs: 1,
    jobs: [
      // Until released once the test has looked (of a fixed 3 s, it could end first on a loaded machine); p/2 at once.
      { label: 'p', outputs: ['p/(?<n>\\d+)'], exec: markedUntilReleased() },
      { label: 'wide', outputs: ['wide/(?<n>\\d+)'], exec: marked(0.1), env: WIDE_ENV },
    ],
  };
  release(dir, 'p_2');
  const platform = await openSupervised(t, dir, graph);
  const first = (await platform.createWant(request(['p/1']))) as { ok: true; want_id: string };
  await waitFor(platform, (s) => s.job_runs_by_status.running.size === 1, 'p/1 to start');
  const wide = (await platform.createWant(request(['wide/1', 'p/2']))) as { ok: true; want_id: string };
  await waitFor(platform, (s) => [...s.job_runs.values()].some((r) => r.job_label === 'wide'), 'the wide run to be queued');
  await sleep(500);
  t.is(platform.state().wants.get(first.want_id)?.status, 'building', 'p/1 still runs');
  t.false(spans(dir).has('wide_1'), 'the wide run waits for p/1 to end');
  release(dir, 'p_1');
  await waitForWant(platform, first.want_id, ['successful'], 10_000);
  await waitForWant(platform, wide.want_id, ['successful'], 10_000);
  const s = spans(dir);
  t.is(s.size, 3);
  t.is(mostAtOnce(s.values()), 1);
});

test('a want canceled while its runs go and others are held: no held run starts on the slot the kill frees; a run recorded as never started never ran', async (t) => {
  const dir = makeWorkspace(t);
  const platform = await openSupervised(t, dir, { max_concurrent_job_runs: 2, jobs: [{ label: 'a', outputs: ['a/(?<n>\\d+)'], exec: marked(0.05) }] });
  for (let round = 0; round < 4; round++) {
    const refs = Array.from({ length: 30 }, (_, i) => `a/${round * 100 + i}`);
    const w = (await platform.createWant(request(refs))) as { ok: true; want_id: string };
    await waitFor(platform, (s) => [...s.job_runs.values()].filter((r) => r.status === 'succeeded' && listArray(s.wants.get(w.want_id)?.job_run_ids ?? emptyList()).includes(r.job_run_id)).length >= 4, 'a few runs to end');
    await platform.cancelWant(w.want_id, 'enough');
    await waitForWant(platform, w.want_id, ['canceled'], 10_000);
    await waitFor(platform, (s) => s.job_runs_by_status.running.size === 0 && s.queued_by_priority.size === 0, 'every run to settle');
    await sleep(300);
    const s = platform.state();
    const ran = spans(dir);
    t.true(listLength(s.wants.get(w.want_id)!.job_run_ids) > 0);
    for (const id of listItems(s.wants.get(w.want_id)!.job_run_ids)) {
      const run = s.job_runs.get(id)!;
      const ref = run.config.outputs[0]!.replace('/', '_');
      const file = (name: string) => (existsSync(join(dir, '.platform', 'logs', id, name)) ? readFileSync(join(dir, '.platform', 'logs', id, name), 'utf8').trim() : `no ${name}`);
      if (!run.started_at && ran.has(ref)) t.fail(`${ref} (${id}) is recorded ${run.status}, never started, yet it ran: ${JSON.stringify({ ...run, config: undefined })} ${String(ran.get(ref))} ${file('cancel.json')} ${file('status.json')}`);
    }
  }
});

test('a want canceled with one run going and the next held: the kill frees the slot, and the held run is not started on it', async (t) => {
  const dir = makeWorkspace(t);
  const platform = await openSupervised(t, dir, { max_concurrent_job_runs: 1, jobs: [{ label: 'p', outputs: ['p/(?<n>\\d+)'], exec: marked(5) }] });
  for (let round = 0; round < 5; round++) {
    const [first, held] = [`p/${round * 10}`, `p/${round * 10 + 1}`];
    const w = (await platform.createWant(request([first, held]))) as { ok: true; want_id: string };
    await waitFor(platform, (s) => s.job_runs_by_status.running.size === 1, `${first} to start`);
    await platform.cancelWant(w.want_id, 'enough');
    await waitForWant(platform, w.want_id, ['canceled'], 10_000);
    await waitFor(platform, (s) => s.job_runs_by_status.running.size === 0, 'the kill to be recorded');
    await sleep(200);
    const run = [...platform.state().job_runs.values()].find((r) => r.config.outputs[0] === held)!;
    t.like(run, { status: 'canceled', started_at: null }, held);
    t.false(spans(dir).has(held.replace('/', '_')), `${held} never ran`);
    t.false(existsSync(join(dir, '.platform', 'logs', run.job_run_id, 'status.json')), `${held} has no status`);
  }
});
