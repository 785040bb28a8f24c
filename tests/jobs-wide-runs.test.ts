/**
 * Runs too wide for the native launcher's records (8,000 variables): handed to it all the same, as a small record
 * whose program is its `--supervise` mode, which reads the job's environment and argv from the run's directory
 * (docs/decisions.md, "Speed, session 24"). What the user sees is what any run gives: the job's own exit code and
 * logs, a cancel that kills its whole group, and a run held past the cap that is canceled never starts. Serial: each
 * holds a slot for a while.
 */
import test from 'ava';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BuildState } from '../lib/state/build-state.js';
import { isPidAlive, killAtTeardown, makeWorkspace, pidsIn, poll, sleep, waitFor, waitForWant } from './helpers/jobs-fixture.js';
import { marked, markedUntilReleased, openSupervised, release, spans, WIDE_ENV } from './helpers/held-runs-fixture.js';
import { launcherMode } from '../lib/executor/run-launcher.js';

const request = (partitions: string[]) => ({ partitions, comment: '', data_timestamp: 0, ttl_seconds: 0, sla_seconds: 0 });
const runDir = (dir: string, id: string) => join(dir, '.platform', 'logs', id);

test.serial("a wide run's exit code and logs are its job's, as are a signal that killed it", async (t) => {
  const dir = makeWorkspace(t);
  const graph = {
    max_concurrent_job_runs: 2,
    jobs: [
      { label: 'three', outputs: ['three'], exec: ['bash', '-c', 'echo "out $V7999"; echo oops >&2; exit 3'], env: WIDE_ENV },
      { label: 'killed', outputs: ['killed'], exec: ['bash', '-c', 'kill -KILL $$'], env: WIDE_ENV },
    ],
  };
  const platform = await openSupervised(t, dir, graph);
  await platform.createWant(request(['three', 'killed']));
  const ended = (s: BuildState) => [...s.job_runs.values()].filter((r) => ['succeeded', 'failed', 'canceled'].includes(r.status)).length === 2;
  const s = await waitFor(platform, ended, 'both runs to end', 20_000);
  const run = (label: string) => [...s.job_runs.values()].find((r) => r.job_label === label)!;
  t.like(run('three'), { status: 'failed', exit_code: 3, signal: '' });
  t.like(run('killed'), { status: 'failed', signal: 'SIGKILL' });
  const three = runDir(dir, run('three').job_run_id);
  t.is(readFileSync(join(three, 'stdout.log'), 'utf8'), 'out x\n', 'the job got its 8,000 variables');
  t.is(readFileSync(join(three, 'stderr.log'), 'utf8'), 'oops\n');
  t.deepEqual(JSON.parse(readFileSync(join(three, 'status.json'), 'utf8')), { exit_code: 3, pid: run('three').pid }, 'the status names the recorded pid');
  // The daemon's environment is in it: its supervisor removed it once read (that it was written: the test below).
  t.false(existsSync(join(three, 'exec.fields')), "the job's fields are not left on disk");
});

test.serial('a wide run held past the cap and canceled is dropped by the launcher: it never starts', async (t) => {
  if (launcherMode() !== 'native') return t.pass('the native launcher is not built here (no C compiler): runs are not held');
  const dir = makeWorkspace(t);
  // p/1 runs until the wide run's cancel is taken: of a fixed 1.5 s, it could end first on a loaded machine, and the
  // wide run then started rightly.
  const graph = {
    max_concurrent_job_runs: 1,
    jobs: [
      { label: 'p', outputs: ['p/(?<n>\\d+)'], exec: markedUntilReleased() },
      { label: 'wide', outputs: ['wide/(?<n>\\d+)'], exec: marked(0.1), env: WIDE_ENV },
    ],
  };
  const platform = await openSupervised(t, dir, graph);
  const first = (await platform.createWant(request(['p/1']))) as { ok: true; want_id: string };
  await waitFor(platform, (s) => s.job_runs_by_status.running.size === 1, 'p/1 to start');
  const wide = (await platform.createWant(request(['wide/1']))) as { ok: true; want_id: string };
  const queued = await waitFor(platform, (s) => [...s.job_runs.values()].some((r) => r.job_label === 'wide'), 'the wide run to be queued');
  const id = [...queued.job_runs.values()].find((r) => r.job_label === 'wide')!.job_run_id;
  // Its job's environment and argv written for the launcher's --supervise: it was handed over, and is held.
  await poll(() => existsSync(join(runDir(dir, id), 'exec.fields')), 20_000);
  t.true(existsSync(join(runDir(dir, id), 'exec.fields')), 'the wide run was handed to the launcher');
  await sleep(200);
  t.false(spans(dir).has('wide_1'), 'held while p/1 runs');
  await platform.cancelWant(wide.want_id, 'not needed');
  await waitForWant(platform, wide.want_id, ['canceled'], 10_000);
  release(dir, 'p_1');
  await waitForWant(platform, first.want_id, ['successful'], 10_000);
  await sleep(500);
  t.like(platform.state().job_runs.get(id), { status: 'canceled', started_at: null });
  t.false(spans(dir).has('wide_1'), 'the wide run never ran');
  t.false(existsSync(join(runDir(dir, id), 'status.json')), 'nothing was forked for it');
  t.false(existsSync(join(runDir(dir, id), 'exec.fields')), "the daemon's environment in its fields left with it");
});

test.serial('a running wide run canceled is recorded canceled, and nothing of its job is left', async (t) => {
  const dir = makeWorkspace(t);
  const graph = { jobs: [{ label: 'long', outputs: ['long'], exec: ['bash', '-c', 'echo $$ > job.pid; sleep 30'], env: WIDE_ENV }] };
  const platform = await openSupervised(t, dir, graph);
  const w = (await platform.createWant(request(['long']))) as { ok: true; want_id: string };
  await waitFor(platform, (s) => s.job_runs_by_status.running.size === 1, 'the run to start');
  // How soon a spawned job gets to its first command is no fixed time: 20 s only guards against a hang.
  await poll(() => pidsIn(dir, 'job.pid').length > 0, 20_000);
  const [job] = pidsIn(dir, 'job.pid');
  killAtTeardown(t, () => pidsIn(dir, 'job.pid'));
  t.truthy(job, 'the job started');
  await platform.cancelWant(w.want_id, 'not needed');
  const s = await waitFor(platform, (st) => [...st.job_runs.values()].every((r) => r.status === 'canceled'), 'the run to be canceled');
  t.like([...s.job_runs.values()][0], { status: 'canceled' });
  t.true(await poll(() => !isPidAlive(job!), 3000), 'the job was killed with its group');
});
