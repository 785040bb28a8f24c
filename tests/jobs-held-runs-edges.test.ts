/**
 * Runs held past the cap, at their edges (found by the review of the change, each shown failing before its mend): a run
 * too wide for the launcher's records (handed to it as a `--supervise` record since), a launcher that dies, a stop while a run ends, cancels beside kills, recalls, lowered
 * limits. Serial: one test's busy loop or SIGSTOP must not be another's.
 */
import { listArray } from '../lib/state/append-list.js';
import test from 'ava';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { makeWorkspace, sleep, waitFor, waitForWant } from './helpers/jobs-fixture.js';
import { marked, markedUntilReleased, mostAtOnce, openSupervised, release, spans, starts, WIDE_ENV } from './helpers/held-runs-fixture.js';

const request = (partitions: string[], priority = 0) => ({ partitions, comment: '', data_timestamp: 0, ttl_seconds: 0, sla_seconds: 0, priority });

/** The pid of the native launcher serving `workspace` (the newest one). */
function launcherPid(workspace: string): number | undefined {
  let found: number | undefined;
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const argv = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0');
      if (argv[0]?.endsWith('platform-launcher') && argv[1] === workspace) found = Math.max(found ?? 0, Number(name));
    } catch {
      // gone
    }
  }
  return found;
}

test.serial('a run too wide for a record, handed over in the same step as another run: the cap holds', async (t) => {
  const dir = makeWorkspace(t);
  const graph = {
    max_concurrent_job_runs: 1,
    jobs: [
      { label: 'p', outputs: ['p/(?<n>\\d+)'], exec: marked(1) },
      { label: 'wide', outputs: ['wide/(?<n>\\d+)'], exec: marked(1), env: WIDE_ENV },
    ],
  };
  const platform = await openSupervised(t, dir, graph);
  const w = (await platform.createWant(request(['p/1', 'wide/1']))) as { ok: true; want_id: string };
  await waitForWant(platform, w.want_id, ['successful'], 20_000);
  const s = spans(dir);
  t.is(s.size, 2);
  t.is(mostAtOnce(s.values()), 1, 'cap 1, but p/1 and wide/1 ran at once');
});

test.serial('after the launcher is gone (killed), the next one is told its slots: the cap holds', async (t) => {
  const dir = makeWorkspace(t);
  const graph = { max_concurrent_job_runs: 2, jobs: [{ label: 'p', outputs: ['p/(?<n>\\d+)'], exec: marked(2) }] };
  const platform = await openSupervised(t, dir, graph);
  const w = (await platform.createWant(request(['p/1', 'p/2', 'p/3', 'p/4', 'p/5', 'p/6']))) as { ok: true; want_id: string };
  await waitFor(platform, (s) => s.job_runs_by_status.running.size === 2, 'two runs to start');
  await sleep(200);
  const pid = launcherPid(dir);
  t.truthy(pid, 'the launcher');
  process.kill(pid!, 'SIGKILL');
  await waitForWant(platform, w.want_id, ['successful', 'failed', 'canceled'], 30_000);
  const s = spans(dir);
  t.log([...platform.state().job_runs.values()].map((r) => `${r.job_run_id} ${r.config.outputs[0]} ${r.status} ${r.reason}`).join('\n'));
  t.is(mostAtOnce(s.values()), 2, `cap 2; ran at once: ${mostAtOnce(s.values())}`);
});

test.serial('a run that ends as the platform stops does not let the launcher start a held run nobody would record; the next platform starts it once', async (t) => {
  const dir = makeWorkspace(t);
  // p/1 runs until released once the platform is stopped (of a fixed 1.5 s, it could end first on a loaded machine).
  const graph = { max_concurrent_job_runs: 1, jobs: [{ label: 'p', outputs: ['p/(?<n>\\d+)'], exec: markedUntilReleased() }] };
  release(dir, 'p_2');
  const first = await openSupervised(t, dir, graph, false);
  const w = (await first.createWant(request(['p/1', 'p/2']))) as { ok: true; want_id: string };
  await waitFor(first, (s) => s.job_runs_by_status.running.size === 1, 'p/1 to start');
  await sleep(200); // p/2 handed over and held
  const pid = launcherPid(dir)!;
  // The launcher not scheduled for a moment (a loaded machine) while the platform stops and p/1 ends.
  process.kill(pid, 'SIGSTOP');
  await first.close();
  // p/1 ends (its end mark written, then it exits) while the launcher is stopped.
  release(dir, 'p_1');
  for (let i = 0; i < 200 && !existsSync(join(dir, 'marks', 'p_1.end')); i++) await sleep(50);
  t.true(existsSync(join(dir, 'marks', 'p_1.end')), 'p/1 ended while the launcher was stopped');
  await sleep(200);
  process.kill(pid, 'SIGCONT');
  await sleep(500);
  const afterStop = starts(dir, 'p_2');
  const second = await openSupervised(t, dir, graph);
  await waitForWant(second, w.want_id, ['successful'], 10_000);
  // Nothing started p/2 with no platform to record it; the next platform started it once.
  t.deepEqual({ afterStop, inAll: starts(dir, 'p_2') }, { afterStop: [], inAll: ['r-2'] });
});

test.serial('canceling a want whose run runs and whose next run is held: the held run never starts', async (t) => {
  const dir = makeWorkspace(t);
  // The first run goes on until the cancel kills it (of a fixed 2 s, it could end first on a loaded machine, and the
  // second then started rightly).
  const graph = { max_concurrent_job_runs: 1, jobs: [{ label: 'p', outputs: ['p/(?<n>\\d+)'], exec: markedUntilReleased() }] };
  const platform = await openSupervised(t, dir, graph);
  let ran = 0;
  for (let i = 0; i < 5; i++) {
    const w = (await platform.createWant(request([`p/${10 * i + 1}`, `p/${10 * i + 2}`]))) as { ok: true; want_id: string };
    await waitFor(platform, (s) => s.job_runs_by_status.running.size === 1, 'the first run to start');
    await sleep(300); // the second handed over and held
    await platform.cancelWant(w.want_id, 'not needed');
    await waitFor(platform, (s) => s.job_runs_by_status.running.size === 0 && s.job_runs_by_status.queued.size === 0, 'both canceled');
    await sleep(300);
    const st = platform.state();
    const second = listArray(st.wants.get(w.want_id)!.job_run_ids)[1]!;
    const forked = existsSync(join(dir, '.platform', 'logs', second, 'status.json'));
    t.log(`try ${i}: ${second} forked=${forked} marks=${starts(dir, `p_${10 * i + 2}`).length} ${st.job_runs.get(second)?.status} ${st.job_runs.get(second)?.reason}`);
    if (forked || starts(dir, `p_${10 * i + 2}`).length > 0) ran++;
  }
  t.is(ran, 0, `the held run of a canceled want ran in ${ran} of 5 tries`);
});

test.serial('a stop that cancels runs does not start the held runs', async (t) => {
  let ran = 0;
  for (let i = 0; i < 3; i++) {
    const dir = makeWorkspace(t);
    // p/1 goes on until the stop kills it (of a fixed 2 s, it could end first on a loaded machine).
    const graph = { max_concurrent_job_runs: 1, jobs: [{ label: 'p', outputs: ['p/(?<n>\\d+)'], exec: markedUntilReleased() }] };
    const platform = await openSupervised(t, dir, graph, true);
    await platform.createWant(request(['p/1', 'p/2']));
    await waitFor(platform, (s) => s.job_runs_by_status.running.size === 1, 'p/1 to start');
    await sleep(300);
    await platform.close();
    await sleep(300);
    const forked = existsSync(join(dir, '.platform', 'logs', 'r-2', 'status.json'));
    t.log(`try ${i}: forked=${forked} marks=${starts(dir, 'p_2').length}`);
    if (forked || starts(dir, 'p_2').length > 0) ran++;
  }
  t.is(ran, 0, `a held run ran at a stop that cancels in ${ran} of 3 tries`);
});

test.serial('a held run too wide for a record is recalled: a more urgent run starts before it', async (t) => {
  const dir = makeWorkspace(t);
  // p/1 runs until the urgent want is in (of a fixed 2 s, it could end first on a loaded machine, and the wide run then
  // started before the urgent one rightly); p/9 ends at once.
  release(dir, 'p_9');
  const graph = {
    max_concurrent_job_runs: 1,
    jobs: [
      { label: 'p', outputs: ['p/(?<n>\\d+)'], exec: markedUntilReleased() },
      { label: 'wide', outputs: ['wide/(?<n>\\d+)'], exec: marked(0.3), env: WIDE_ENV },
    ],
  };
  const platform = await openSupervised(t, dir, graph);
  const first = (await platform.createWant(request(['p/1']))) as { ok: true; want_id: string };
  await waitFor(platform, (s) => s.job_runs_by_status.running.size === 1, 'p/1 to start');
  const wide = (await platform.createWant(request(['wide/1']))) as { ok: true; want_id: string };
  await waitFor(platform, (s) => [...s.job_runs.values()].some((r) => r.job_label === 'wide'), 'the wide run to be queued');
  await sleep(300);
  const urgent = (await platform.createWant(request(['p/9'], 10))) as { ok: true; want_id: string };
  release(dir, 'p_1');
  for (const id of [first.want_id, wide.want_id, urgent.want_id]) await waitForWant(platform, id, ['successful'], 20_000);
  const s = spans(dir);
  const order = [...s.entries()].sort((a, b) => (a[1][0] < b[1][0] ? -1 : 1)).map(([name]) => name);
  t.deepEqual(order, ['p_1', 'p_9', 'wide_1']);
  t.is(mostAtOnce(s.values()), 1);
});

test.serial("a job's max_concurrency lowered in platform.json while one of its runs is held: the held run is recalled and the new limit holds", async (t) => {
  const { writeFileSync } = await import('node:fs');
  const { Platform } = await import('../lib/platform.js');
  const dir = makeWorkspace(t);
  const graph = (limit: number) => ({
    max_concurrent_job_runs: 2,
    jobs: [
      { label: 'x', outputs: ['x/(?<n>\\d+)'], exec: marked(3), max_concurrency: limit },
      // Until released once the limit is lowered: of a fixed 1 s, it could end first on a loaded machine, and x/2 then
      // started on its slot under the old limit, beside x/1, rightly.
      { label: 'y', outputs: ['y/(?<n>\\d+)'], exec: markedUntilReleased() },
    ],
  });
  writeFileSync(join(dir, 'platform.json'), JSON.stringify(graph(2)));
  const platform = await Platform.open(dir, { executor: 'supervised', tickMs: 60_000, cancelRunsOnClose: true });
  t.teardown(() => platform.close());
  const w = (await platform.createWant(request(['x/1', 'y/1', 'x/2']))) as { ok: true; want_id: string };
  await waitFor(platform, (s) => s.job_runs_by_status.running.size === 2, 'x/1 and y/1 to start');
  await sleep(200); // x/2 handed over and held
  writeFileSync(join(dir, 'platform.json'), JSON.stringify(graph(1)));
  t.is(await platform.refreshGraph(), undefined);
  t.is(platform.resolver.graph.jobs.find((j) => j.label === 'x')?.max_concurrency, 1);
  // y/1's slot frees while x/1 (3 s) still runs, as a rule: the held x/2 must not start on it.
  release(dir, 'y_1');
  await waitForWant(platform, w.want_id, ['successful'], 20_000);
  const s = spans(dir);
  t.is(mostAtOnce([s.get('x_1')!, s.get('x_2')!]), 1, 'x ran twice at once with max_concurrency 1');
});

test.serial('after a stop that cancels runs with runs held, the next platform builds the want to its end', async (t) => {
  const dir = makeWorkspace(t);
  const graph = { max_concurrent_job_runs: 1, jobs: [{ label: 'p', outputs: ['p/(?<n>\\d+)'], exec: marked(0.5) }] };
  const first = await openSupervised(t, dir, graph, true);
  const w = (await first.createWant(request(['p/1', 'p/2', 'p/3']))) as { ok: true; want_id: string };
  await waitFor(first, (s) => s.job_runs_by_status.running.size === 1, 'p/1 to start');
  await sleep(200);
  await first.close();
  const second = await openSupervised(t, dir, graph);
  t.log([...second.state().job_runs.values()].map((r) => `${r.job_run_id} ${r.config.outputs[0]} ${r.status} ${r.reason}`).join('\n'));
  t.log(second.state().wants.get(w.want_id)?.status);
  await waitForWant(second, w.want_id, ['successful'], 10_000);
  t.pass();
});

test.serial('the launcher gone while it holds a run too wide for a record: that run comes back queued and runs once', async (t) => {
  const dir = makeWorkspace(t);
  const graph = {
    max_concurrent_job_runs: 1,
    jobs: [
      { label: 'p', outputs: ['p/(?<n>\\d+)'], exec: marked(2) },
      { label: 'wide', outputs: ['wide/(?<n>\\d+)'], exec: marked(1), env: WIDE_ENV },
    ],
  };
  const platform = await openSupervised(t, dir, graph);
  await platform.createWant(request(['p/1']));
  await waitFor(platform, (s) => s.job_runs_by_status.running.size === 1, 'p/1 to start');
  const wide = (await platform.createWant(request(['wide/1']))) as { ok: true; want_id: string };
  await waitFor(platform, (s) => [...s.job_runs.values()].some((r) => r.job_label === 'wide'), 'the wide run to be queued');
  await sleep(300);
  process.kill(launcherPid(dir)!, 'SIGKILL');
  await waitForWant(platform, wide.want_id, ['successful', 'failed', 'canceled'], 20_000);
  await sleep(1500);
  const s = platform.state();
  t.log([...s.job_runs.values()].map((r) => `${r.job_run_id} ${r.config.outputs[0]} ${r.status} ${r.reason}`).join('\n'));
  t.log('wide/1 started by', starts(dir, 'wide_1'));
  const recorded = [...s.job_runs.values()].filter((r) => r.job_label === 'wide' && r.started_at !== null).map((r) => r.job_run_id);
  t.deepEqual(starts(dir, 'wide_1'), recorded, 'every start of wide/1 is a recorded one');
});
