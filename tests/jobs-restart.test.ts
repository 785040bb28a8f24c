/**
 * Restarting mid-build loses and duplicates no work: a clean close records the running run canceled and the
 * reopened platform finishes the want; a server killed with SIGKILL leaves a run `running` in the log, which the
 * next start resolves (kills the orphaned job, records the run) before building it again.
 */
import test from 'ava';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readServerInfo } from '../lib/client/server-info.js';
import { TERMINAL_WANT_STATUSES } from '../lib/state/build-state.js';
import {
  bash,
  isPidAlive,
  killAtTeardown,
  killHard,
  lines,
  makeWorkspace,
  openPlatform,
  pidsIn,
  poll,
  runsFor,
  sleep,
  waitFor,
  waitForWant,
  want,
} from './helpers/jobs-fixture.js';

const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** a/<n> (quick) -> b/<n>, whose first run sleeps 30 s and later runs finish at once. */
const graph = {
  jobs: [
    { label: 'a', outputs: ['a/(?<n>\\d+)'], exec: bash('echo "a $1" >> a-calls.txt'), args: ['${n}'] },
    {
      label: 'b',
      outputs: ['b/(?<n>\\d+)'],
      inputs: [{ partition_ref: 'a/${n}', dep_type: 'MATERIALIZE' }],
      exec: bash(
        `echo $$ >> b.pid
         if [ "$(wc -l < b.pid)" -eq 1 ]; then sleep 30; fi
         echo "done $1" >> b-done.txt`,
      ),
      args: ['${n}'],
    },
  ],
};

test('closing the platform mid-build and reopening it finishes the want without duplicated work', async (t) => {
  const dir = makeWorkspace(t);
  killAtTeardown(t, () => pidsIn(dir, 'b.pid'));
  const first = await openPlatform(t, dir, graph);
  const w = await want(first, ['b/1']);
  const running = await waitFor(first, (s) => runsFor(s, 'b/1').some((r) => r.status === 'running'), 'b/1 running');
  const interrupted = runsFor(running, 'b/1')[0]!;
  t.is(running.partitions.get('a/1')?.status, 'live');

  await first.close();
  const closed = first.state();
  t.is(closed.job_runs.get(interrupted.job_run_id)!.status, 'canceled', 'recorded before the log closed');
  t.true(await poll(() => !isPidAlive(interrupted.pid), 1000), 'the job was stopped with the platform');
  t.false(TERMINAL_WANT_STATUSES.has(closed.wants.get(w)!.status), `want is ${closed.wants.get(w)!.status}`);

  const second = await openPlatform(t, dir, graph);
  const reopened = second.state();
  t.is(reopened.job_runs.get(interrupted.job_run_id)!.status, 'canceled', 'the log says so after the restart');
  t.false(TERMINAL_WANT_STATUSES.has(reopened.wants.get(w)!.status), 'the want is still active');

  const state = await waitForWant(second, w);
  t.is(state.wants.get(w)!.status, 'successful');
  // Exactly one successful run per partition; a/1 was not rebuilt.
  t.deepEqual(
    runsFor(state, 'a/1').map((r) => r.status),
    ['succeeded'],
  );
  t.deepEqual(
    runsFor(state, 'b/1').map((r) => r.status),
    ['canceled', 'succeeded'],
  );
  t.deepEqual(lines(dir, 'a-calls.txt'), ['a 1']);
  t.deepEqual(lines(dir, 'b-done.txt'), ['done 1']);
  t.is(pidsIn(dir, 'b.pid').length, 2);
});

test('runs left running by a killed server are resolved on start and built once more', async (t) => {
  const dir = makeWorkspace(t);
  writeFileSync(join(dir, 'platform.json'), JSON.stringify(graph));
  killAtTeardown(t, () => pidsIn(dir, 'b.pid'));

  const server = spawn(
    process.execPath,
    [join(REPO_ROOT, 'bin', 'platform'), '-C', dir, 'serve', '--port', '0', '--idle-timeout', '1h'],
    { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let serverErr = '';
  server.stderr!.on('data', (c: Buffer) => (serverErr += c.toString()));
  const exited = new Promise<void>((resolve) => server.once('exit', () => resolve()));
  killAtTeardown(t, () => (server.exitCode === null && server.signalCode === null ? [server.pid ?? 0] : []));

  t.true(await poll(() => readServerInfo(dir)?.pid === server.pid, 10_000, 50), `serve did not start: ${serverErr}`);
  const url = `http://127.0.0.1:${readServerInfo(dir)!.port}`;
  const created = await fetch(`${url}/api/wants`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ partitions: ['b/2'] }),
  });
  t.is(created.status, 201);
  const { want_id } = (await created.json()) as { want_id: string };

  // Wait over HTTP until b/2 runs, then crash the server.
  let runId = '';
  let jobPid = 0;
  t.true(
    await poll(() => pidsIn(dir, 'b.pid').length === 1, 10_000, 50),
    `b/2 never started: ${serverErr}`,
  );
  for (let i = 0; i < 100 && !jobPid; i++) {
    const list = (await (await fetch(`${url}/api/job_runs?status=running`)).json()) as {
      data: Array<{ job_run_id: string; outputs: string[]; pid: number | null }>;
    };
    const run = list.data.find((r) => r.outputs.includes('b/2'));
    if (run?.pid) {
      runId = run.job_run_id;
      jobPid = run.pid;
    } else await sleep(50);
  }
  t.true(jobPid > 0, 'the running run and its pid are recorded');
  t.deepEqual(pidsIn(dir, 'b.pid'), [jobPid]);

  server.kill('SIGKILL');
  await exited;
  t.true(isPidAlive(jobPid), 'a crashed server leaves its job behind (its own process group)');

  const platform = await openPlatform(t, dir, graph);
  const resolved = await waitFor(
    platform,
    (s) => s.job_runs.get(runId)?.status !== 'running',
    `run ${runId} to be resolved after the restart`,
    5000,
  );
  const lost = resolved.job_runs.get(runId)!;
  t.true(['canceled', 'failed'].includes(lost.status), lost.status);
  t.regex(lost.reason, /lost/);
  t.true(await poll(() => !isPidAlive(jobPid), 1000), 'the orphaned job was killed on start');

  const state = await waitForWant(platform, want_id);
  t.is(state.wants.get(want_id)!.status, 'successful');
  const bRuns = runsFor(state, 'b/2');
  t.is(bRuns.filter((r) => r.status === 'succeeded').length, 1, JSON.stringify(bRuns));
  t.is(bRuns[0]!.job_run_id, runId);
  t.is(bRuns.length, 2, 'the lost run and one rebuild');
  t.deepEqual(
    runsFor(state, 'a/2').map((r) => r.status),
    ['succeeded'],
  );
  t.deepEqual(lines(dir, 'a-calls.txt'), ['a 2']);
  t.deepEqual(lines(dir, 'b-done.txt'), ['done 2']);
  killHard(jobPid);
});
