/**
 * Review of "runs held past the cap": demonstrations of suspected bugs. Serial: one test's busy loop or SIGSTOP must
 * not be another's.
 */
import test from 'ava';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Platform } from '../lib/platform.js';
import { bash, makeWorkspace, openPlatform, sleep, waitFor, waitForWant } from './helpers/jobs-fixture.js';

const request = (partitions: string[], priority = 0) => ({ partitions, comment: '', data_timestamp: 0, ttl_seconds: 0, sla_seconds: 0, priority });

/** Each start appends a line to marks/<ref>.starts; start and end times (ns) to .start / .end. */
function marked(seconds: number | string): string[] {
  return bash(
    `f="marks/$(echo "$PLATFORM_OUTPUTS" | tr -dc 'a-z0-9_/' | tr / _)"; mkdir -p marks; echo "$PLATFORM_JOB_RUN_ID" >> "$f.starts"; date +%s%N > "$f.start"; sleep ${seconds}; date +%s%N > "$f.end"`,
  );
}

function spans(dir: string): Map<string, [bigint, bigint]> {
  const out = new Map<string, [bigint, bigint]>();
  const marks = join(dir, 'marks');
  if (!existsSync(marks)) return out;
  for (const f of readdirSync(marks).filter((n) => n.endsWith('.start'))) {
    const name = f.slice(0, -'.start'.length);
    const end = join(marks, `${name}.end`);
    const read = (p: string) => BigInt(readFileSync(p, 'utf8').trim());
    out.set(name, [read(join(marks, f)), existsSync(end) ? read(end) : BigInt(Number.MAX_SAFE_INTEGER) * 1_000_000n]);
  }
  return out;
}

function starts(dir: string, name: string): string[] {
  const p = join(dir, 'marks', `${name}.starts`);
  return existsSync(p) ? readFileSync(p, 'utf8').split('\n').filter(Boolean) : [];
}

function mostAtOnce(all: Iterable<[bigint, bigint]>): number {
  const points = [...all].flatMap(([s, e]) => [[s, 1] as const, [e, -1] as const]).sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] - b[1]));
  let now = 0;
  let most = 0;
  for (const [, d] of points) most = Math.max(most, (now += d));
  return most;
}

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

const open = (t: Parameters<typeof openPlatform>[0], dir: string, graph: unknown, cancelRunsOnClose = true): Promise<Platform> =>
  openPlatform(t, dir, graph, { executor: 'supervised', cancelRunsOnClose });

test.serial('BUG 1: a run the launcher cannot carry, handed over in the same step as runs given to the launcher, starts outside at once: the cap is exceeded', async (t) => {
  const dir = makeWorkspace(t);
  const env = Object.fromEntries(Array.from({ length: 8_000 }, (_, i) => [`V${i}`, 'x']));
  const graph = {
    max_concurrent_job_runs: 1,
    jobs: [
      { label: 'p', outputs: ['p/(?<n>\\d+)'], exec: marked(1) },
      { label: 'wide', outputs: ['wide/(?<n>\\d+)'], exec: marked(1), env },
    ],
  };
  const platform = await open(t, dir, graph);
  const w = (await platform.createWant(request(['p/1', 'wide/1']))) as { ok: true; want_id: string };
  await waitForWant(platform, w.want_id, ['successful'], 20_000);
  const s = spans(dir);
  t.is(s.size, 2);
  t.is(mostAtOnce(s.values()), 1, 'cap 1, but p/1 and wide/1 ran at once');
});

test.serial('BUG 2: after the launcher is gone (killed), the next one is never told its slots: the cap is exceeded', async (t) => {
  const dir = makeWorkspace(t);
  const graph = { max_concurrent_job_runs: 2, jobs: [{ label: 'p', outputs: ['p/(?<n>\\d+)'], exec: marked(2) }] };
  const platform = await open(t, dir, graph);
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

test.serial('BUG 3: a run that ends as the platform stops lets the launcher start a held run nobody records; the next platform kills it and starts it again', async (t) => {
  const dir = makeWorkspace(t);
  const graph = { max_concurrent_job_runs: 1, jobs: [{ label: 'p', outputs: ['p/(?<n>\\d+)'], exec: marked(1.5) }] };
  const first = await open(t, dir, graph, false);
  const w = (await first.createWant(request(['p/1', 'p/2']))) as { ok: true; want_id: string };
  await waitFor(first, (s) => s.job_runs_by_status.running.size === 1, 'p/1 to start');
  await sleep(200); // p/2 handed over and held
  const pid = launcherPid(dir)!;
  // The launcher not scheduled for a moment (a loaded machine) while the platform stops and p/1 ends.
  process.kill(pid, 'SIGSTOP');
  await first.close();
  // p/1 ends (its end mark written, then it exits) while the launcher is stopped.
  for (let i = 0; i < 100 && !existsSync(join(dir, 'marks', 'p_1.end')); i++) await sleep(50);
  await sleep(200);
  process.kill(pid, 'SIGCONT');
  await sleep(500);
  const afterStop = starts(dir, 'p_2');
  const second = await open(t, dir, graph);
  await waitForWant(second, w.want_id, ['successful'], 10_000);
  // Nothing started p/2 with no platform to record it; the next platform started it once.
  t.deepEqual({ afterStop, inAll: starts(dir, 'p_2') }, { afterStop: [], inAll: ['r-2'] });
});

test.serial('BUG 4: canceling a want whose run runs and whose next run is held: the held run starts (and is killed)', async (t) => {
  const dir = makeWorkspace(t);
  const graph = { max_concurrent_job_runs: 1, jobs: [{ label: 'p', outputs: ['p/(?<n>\\d+)'], exec: marked(2) }] };
  const platform = await open(t, dir, graph);
  let ran = 0;
  for (let i = 0; i < 5; i++) {
    const w = (await platform.createWant(request([`p/${10 * i + 1}`, `p/${10 * i + 2}`]))) as { ok: true; want_id: string };
    await waitFor(platform, (s) => s.job_runs_by_status.running.size === 1, 'the first run to start');
    await sleep(300); // the second handed over and held
    await platform.cancelWant(w.want_id, 'not needed');
    await waitFor(platform, (s) => s.job_runs_by_status.running.size === 0 && s.job_runs_by_status.queued.size === 0, 'both canceled');
    await sleep(300);
    const st = platform.state();
    const second = st.wants.get(w.want_id)!.job_run_ids[1]!;
    const forked = existsSync(join(dir, '.platform', 'logs', second, 'status.json'));
    t.log(`try ${i}: ${second} forked=${forked} marks=${starts(dir, `p_${10 * i + 2}`).length} ${st.job_runs.get(second)?.status} ${st.job_runs.get(second)?.reason}`);
    if (forked || starts(dir, `p_${10 * i + 2}`).length > 0) ran++;
  }
  t.is(ran, 0, `the held run of a canceled want ran in ${ran} of 5 tries`);
});

test.serial('BUG 5: a stop that cancels runs starts the held runs (then kills them)', async (t) => {
  let ran = 0;
  for (let i = 0; i < 3; i++) {
    const dir = makeWorkspace(t);
    const graph = { max_concurrent_job_runs: 1, jobs: [{ label: 'p', outputs: ['p/(?<n>\\d+)'], exec: marked(2) }] };
    const platform = await open(t, dir, graph, true);
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

test.serial('BUG 6: a run waiting in the executor for room (the launcher cannot carry it) is not recalled: it starts before a more urgent run', async (t) => {
  const dir = makeWorkspace(t);
  const env = Object.fromEntries(Array.from({ length: 8_000 }, (_, i) => [`V${i}`, 'x']));
  const graph = {
    max_concurrent_job_runs: 1,
    jobs: [
      { label: 'p', outputs: ['p/(?<n>\\d+)'], exec: marked(2) },
      { label: 'wide', outputs: ['wide/(?<n>\\d+)'], exec: marked(0.3), env },
    ],
  };
  const platform = await open(t, dir, graph);
  const first = (await platform.createWant(request(['p/1']))) as { ok: true; want_id: string };
  await waitFor(platform, (s) => s.job_runs_by_status.running.size === 1, 'p/1 to start');
  const wide = (await platform.createWant(request(['wide/1']))) as { ok: true; want_id: string };
  await waitFor(platform, (s) => [...s.job_runs.values()].some((r) => r.job_label === 'wide'), 'the wide run to be queued');
  await sleep(300);
  const urgent = (await platform.createWant(request(['p/9'], 10))) as { ok: true; want_id: string };
  for (const id of [first.want_id, wide.want_id, urgent.want_id]) await waitForWant(platform, id, ['successful'], 20_000);
  const s = spans(dir);
  const order = [...s.entries()].sort((a, b) => (a[1][0] < b[1][0] ? -1 : 1)).map(([name]) => name);
  t.deepEqual(order, ['p_1', 'p_9', 'wide_1']);
  t.is(mostAtOnce(s.values()), 1);
});

test.serial("BUG 7: a job's max_concurrency lowered in platform.json while one of its runs is held: the launcher starts it past the new limit", async (t) => {
  const { writeFileSync } = await import('node:fs');
  const { Platform } = await import('../lib/platform.js');
  const dir = makeWorkspace(t);
  const graph = (limit: number) => ({
    max_concurrent_job_runs: 2,
    jobs: [
      { label: 'x', outputs: ['x/(?<n>\\d+)'], exec: marked(3), max_concurrency: limit },
      { label: 'y', outputs: ['y/(?<n>\\d+)'], exec: marked(1) },
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
  await waitForWant(platform, w.want_id, ['successful'], 20_000);
  const s = spans(dir);
  t.is(mostAtOnce([s.get('x_1')!, s.get('x_2')!]), 1, 'x ran twice at once with max_concurrency 1');
});

test.serial('CHECK 8: after a stop that cancels runs with runs held, the next platform builds the want to its end', async (t) => {
  const dir = makeWorkspace(t);
  const graph = { max_concurrent_job_runs: 1, jobs: [{ label: 'p', outputs: ['p/(?<n>\\d+)'], exec: marked(0.5) }] };
  const first = await open(t, dir, graph, true);
  const w = (await first.createWant(request(['p/1', 'p/2', 'p/3']))) as { ok: true; want_id: string };
  await waitFor(first, (s) => s.job_runs_by_status.running.size === 1, 'p/1 to start');
  await sleep(200);
  await first.close();
  const second = await open(t, dir, graph);
  t.log([...second.state().job_runs.values()].map((r) => `${r.job_run_id} ${r.config.outputs[0]} ${r.status} ${r.reason}`).join('\n'));
  t.log(second.state().wants.get(w.want_id)?.status);
  await waitForWant(second, w.want_id, ['successful'], 10_000);
  t.pass();
});

test.serial('BUG 9: the launcher gone while a run waits in the executor for room: that run is taken for lost, then started all the same beside its rebuild', async (t) => {
  const dir = makeWorkspace(t);
  const env = Object.fromEntries(Array.from({ length: 8_000 }, (_, i) => [`V${i}`, 'x']));
  const graph = {
    max_concurrent_job_runs: 1,
    jobs: [
      { label: 'p', outputs: ['p/(?<n>\\d+)'], exec: marked(2) },
      { label: 'wide', outputs: ['wide/(?<n>\\d+)'], exec: marked(1), env },
    ],
  };
  const platform = await open(t, dir, graph);
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
