/**
 * /metrics from prom-client on a real server: run counters and duration histograms by job and outcome, the step and
 * log-write histograms, open event streams, node's process metrics; and `promtool check metrics` finds nothing
 * wrong with it (skipped, saying so, where promtool is not installed: `apt-get install prometheus`).
 */
import test from 'ava';
import { spawnSync } from 'node:child_process';
import { startServer, waitFor, waitForWant, createWant } from './helpers/server-fixture.js';

const promtool = spawnSync('sh', ['-c', 'command -v promtool'], { encoding: 'utf8' }).stdout.trim();

/** The value of a sample (name and labels as written), or undefined. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

test('metrics count runs by job and outcome with their durations, steps, log writes and open streams', async (t) => {
  const f = await startServer(t);
  await waitForWant(f, await createWant(f, ['ok/m1']), ['successful']);
  await waitForWant(f, await createWant(f, ['fail/m2']), ['failed']);
  const stream = new AbortController();
  t.teardown(() => stream.abort());
  const res = await fetch(`${f.url}/api/events/stream`, { signal: stream.signal });
  t.is(res.status, 200);
  const metrics = async () => (await f.api('/metrics')).text();
  let text = await waitFor('the stream to be counted', async () => {
    const m = await metrics();
    return sample(m, 'platform_sse_clients') === 1 ? m : undefined;
  });
  t.is(sample(text, 'platform_job_runs_started_total{job="ok"}'), 1);
  t.is(sample(text, 'platform_job_runs_finished_total{job="ok",outcome="succeeded"}'), 1);
  t.is(sample(text, 'platform_job_runs_finished_total{job="fail",outcome="failed"}'), 1);
  t.is(sample(text, 'platform_job_run_duration_seconds_count{job="ok",outcome="succeeded"}'), 1);
  t.is(sample(text, 'platform_job_run_duration_seconds_bucket{le="+Inf",job="fail",outcome="failed"}'), 1);
  t.true((sample(text, 'platform_step_duration_seconds_count') ?? 0) > 0);
  t.true((sample(text, 'platform_log_write_duration_seconds_count{synced="true"}') ?? 0) > 0);
  t.true((sample(text, 'platform_wants_total') ?? 0) >= 2);
  t.is(sample(text, 'platform_wants{status="failed"}'), 1);
  t.true(text.includes('\nprocess_cpu_user_seconds_total '), 'node process metrics');
  stream.abort();
  text = await waitFor('the closed stream to be uncounted', async () => {
    const m = await metrics();
    return sample(m, 'platform_sse_clients') === 0 ? m : undefined;
  });
  t.is(sample(text, 'platform_sse_clients'), 0);
});

test('every run that ended is in the duration histogram, also one whose start and end came in one step', async (t) => {
  // Quick runs, several at once: a start and an end often land in one step's batch, where the state moves once.
  const f = await startServer(t);
  const refs = Array.from({ length: 40 }, (_, i) => `ok/h${i}`);
  await waitForWant(f, await createWant(f, refs), ['successful']);
  const text = await waitFor('the last ends to be counted', async () => {
    const m = await (await f.api('/metrics')).text();
    return sample(m, 'platform_job_runs_finished_total{job="ok",outcome="succeeded"}') === refs.length ? m : undefined;
  });
  t.is(sample(text, 'platform_job_runs_started_total{job="ok"}'), refs.length);
  t.is(sample(text, 'platform_job_run_duration_seconds_count{job="ok",outcome="succeeded"}'), refs.length);
});

if (promtool === '') {
  test.skip('promtool check metrics passes (skipped: promtool is not installed; apt-get install prometheus)', () => {});
} else {
  test('promtool check metrics passes', async (t) => {
    const f = await startServer(t);
    await waitForWant(f, await createWant(f, ['ok/p1']), ['successful']);
    const text = await (await f.api('/metrics')).text();
    const r = spawnSync(promtool, ['check', 'metrics'], { input: text, encoding: 'utf8' });
    t.is(r.status, 0, `promtool: ${r.stdout}${r.stderr}`);
  });
}

test('metrics say whether a snapshot is being written and how many were', async (t) => {
  // A snapshot every few events: the wants below make the daemon write some in the background.
  const f = await startServer(t, { platform: { snapshotEveryEvents: 5 } });
  const metrics = async () => (await f.api('/metrics')).text();
  for (const ref of ['ok/s1', 'ok/s2', 'ok/s3']) await waitForWant(f, await createWant(f, [ref]), ['successful']);
  const text = await waitFor('a snapshot written and none under way', async () => {
    const m = await metrics();
    return (sample(m, 'platform_snapshots_written') ?? 0) >= 1 && sample(m, 'platform_snapshot_writing') === 0 ? m : undefined;
  });
  t.is(sample(text, 'platform_snapshots_written'), f.platform.store.snapshotsWritten);
  t.is(sample(text, 'platform_snapshot_writing'), 0);
});
