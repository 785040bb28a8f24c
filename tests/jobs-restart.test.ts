/**
 * Restarting mid-build loses and duplicates no work: a clean close records the running run canceled and the
 * reopened platform finishes the want; a server killed with SIGKILL leaves a run `running` in the log, which the
 * next start resolves (kills the orphaned job, records the run) before building it again.
 */
import test, { type ExecutionContext } from 'ava';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readServerInfo } from '../lib/client/server-info.js';
import { startHttpServer } from '../lib/server/http-server.js';
import {
  bash,
  isPidAlive,
  killAtTeardown,
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

/**
 * a/<n> (quick) -> b/<n>, whose first run sleeps 3 s (and exits with code 0) and later runs finish at once; where the
 * test made b-hold, the first run instead goes on until the test makes b-release (a minute at most): a test whose
 * steps must come while it runs cannot count on a fixed 3 s on a loaded machine.
 */
const graph = {
  max_concurrent_job_runs: 4,
  jobs: [
    { label: 'a', outputs: ['a/(?<n>\\d+)'], exec: bash('echo "a $1" >> a-calls.txt'), args: ['${n}'] },
    {
      label: 'b',
      outputs: ['b/(?<n>\\d+)'],
      inputs: [{ partition_ref: 'a/${n}', dep_type: 'MATERIALIZE' }],
      exec: bash(
        `echo $$ >> b.pid
         if [ "$(wc -l < b.pid)" -eq 1 ]; then
           if [ -e b-hold ]; then i=0; while [ ! -e b-release ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i + 1)); done; else sleep 3; fi
         fi
         echo "done $1" >> b-done.txt`,
      ),
      args: ['${n}'],
    },
    // Takes two seconds and fails with code 7: its exit code must reach the log once, whoever is there to see it.
    { label: 'slowfail', outputs: ['slowfail/(?<n>\\d+)'], exec: bash('sleep 2; exit 7') },
    // Code 7 once the test makes slow7-release (a minute at most): it must outlive a `platform stop`, which a fixed 5 s
    // may not on a loaded machine.
    { label: 'slow7', outputs: ['slow7/(?<n>\\d+)'], exec: bash('i=0; while [ ! -e slow7-release ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i + 1)); done; exit 7') },
    // Hangs the first time (until killed), finishes at once the second.
    { label: 'once', outputs: ['once/(?<n>\\d+)'], exec: bash('if [ -e once-marker ]; then exit 0; fi; touch once-marker; echo $$ >> once.pid; sleep 30') },
  ],
};

/** A supervised platform building b/1 (its first run goes on until `releaseB(dir)`), once the run is running. */
async function buildingB1(t: ExecutionContext, logError?: (message: string) => void) {
  const dir = makeWorkspace(t);
  writeFileSync(join(dir, 'b-hold'), '');
  killAtTeardown(t, () => pidsIn(dir, 'b.pid'));
  const first = await openPlatform(t, dir, graph, { cancelRunsOnClose: false, executor: 'supervised', ...(logError ? { logError } : {}) });
  const w = await want(first, ['b/1']);
  const running = await waitFor(first, (s) => runsFor(s, 'b/1').some((r) => r.status === 'running'), 'b/1 running');
  return { dir, first, w, run: runsFor(running, 'b/1')[0]! };
}

/** Lets the first run of b/1 that `buildingB1` started end. */
const releaseB = (dir: string): void => writeFileSync(join(dir, 'b-release'), '');

test('a platform closed mid-build leaves the run going; the reopened one follows it to its end: one run, no rebuild', async (t) => {
  const { dir, first, w, run } = await buildingB1(t);
  await first.close();
  t.is(first.state().job_runs.get(run.job_run_id)!.status, 'running', 'left running in the log');
  t.true(isPidAlive(run.pid), 'its supervisor goes on without the platform');
  releaseB(dir);

  const second = await openPlatform(t, dir, graph, { executor: 'supervised' });
  const state = await waitForWant(second, w);
  t.is(state.wants.get(w)!.status, 'successful');
  t.deepEqual(runsFor(state, 'b/1').map((r) => [r.job_run_id, r.status]), [[run.job_run_id, 'succeeded']], 'followed, not restarted');
  t.deepEqual(lines(dir, 'b-done.txt'), ['done 1']);
  t.is(pidsIn(dir, 'b.pid').length, 1, 'the job ran once');
});

test('a run that ends while no platform is open is recorded by the next one with its exit status, once', async (t) => {
  const { dir, first, w, run } = await buildingB1(t);
  await first.close();
  releaseB(dir);
  // Its status file is written while nothing listens: the next platform finds the run already over at its start.
  t.true(await poll(() => !isPidAlive(run.pid), 10_000, 20), 'the run ended on its own');
  const second = await openPlatform(t, dir, graph, { executor: 'supervised' });
  const state = await waitForWant(second, w);
  t.is(state.wants.get(w)!.status, 'successful');
  t.deepEqual(runsFor(state, 'b/1').map((r) => [r.job_run_id, r.status, r.exit_code]), [[run.job_run_id, 'succeeded', 0]]);
  t.is(pidsIn(dir, 'b.pid').length, 1, 'the job ran once');
});

test('closing with cancelRuns kills the run and records it canceled; the reopened platform builds it again', async (t) => {
  const { dir, first, w, run: interrupted } = await buildingB1(t);
  await first.close({ cancelRuns: true });
  t.is(first.state().job_runs.get(interrupted.job_run_id)!.status, 'canceled', 'recorded before the log closed');
  // Said to an embedding app too, which closed its platform (no server shut down).
  t.regex(first.state().job_runs.get(interrupted.job_run_id)!.reason, /^the platform shut down \(platform stop, or the embedding app's close\(\)\)$/);
  t.true(await poll(() => !isPidAlive(interrupted.pid), 2000), 'the run was stopped with the platform');
  // Let go: a job killed before it wrote its pid (a loaded machine) leaves the next run to be taken for the first,
  // which must not wait for a release then.
  releaseB(dir);
  const second = await openPlatform(t, dir, graph, { executor: 'supervised' });
  const state = await waitForWant(second, w);
  t.deepEqual(runsFor(state, 'b/1').map((r) => r.status), ['canceled', 'succeeded']);
  t.deepEqual(lines(dir, 'b-done.txt'), ['done 1']);
});

test('a close asked again with cancelRuns while the first (which leaves runs going) is under way cancels them: the platform, and the HTTP server draining its connections', async (t) => {
  const { first, run } = await buildingB1(t);
  const plain = first.close();
  const again = first.close({ cancelRuns: true });
  t.is(again, plain, 'the same close');
  await again;
  t.is(first.state().job_runs.get(run.job_run_id)!.status, 'canceled', 'the second ask was taken');
  t.true(await poll(() => !isPidAlive(run.pid), 2000), 'the run was stopped');

  const { first: second, run: run2 } = await buildingB1(t);
  const server = await startHttpServer(second, { port: 0, log: () => {}, drainMs: 2_000 });
  const closing = server.close();
  void server.close({ cancelRuns: true });
  await closing;
  t.is(second.state().job_runs.get(run2.job_run_id)!.status, 'canceled', 'the server handed the second ask on');
  t.true(await poll(() => !isPidAlive(run2.pid), 2000), 'that run was stopped too');
});

test('a cancelRuns asked after the close left the runs to their supervisors is said on the error log, and the run goes on', async (t) => {
  const errors: string[] = [];
  const { dir, first, run } = await buildingB1(t, (m) => errors.push(m));
  await first.close();
  await first.close({ cancelRuns: true });
  t.is(first.state().job_runs.get(run.job_run_id)!.status, 'running');
  t.true(isPidAlive(run.pid), 'still running under its supervisor');
  t.regex(errors.join('\n'), /asked to cancel the running job runs too late/);
  // Let go, it ends by itself (and its supervisor writes nothing more into the workspace the teardown removes).
  releaseB(dir);
  t.true(await poll(() => !isPidAlive(run.pid), 20_000), 'the run ends once let go');
});

test('after kill -9 of the daemon and its process group the job goes on; the next daemon re-attaches and records it once; a run nothing supervises is lost and rebuilt', async (t) => {
  const dir = makeWorkspace(t);
  writeFileSync(join(dir, 'platform.json'), JSON.stringify(graph));
  killAtTeardown(t, () => pidsIn(dir, 'b.pid'));

  const server = spawn(process.execPath, [join(REPO_ROOT, 'bin', 'platform'), '-C', dir, 'serve', '--port', '0', '--idle-timeout', '1h'], {
    cwd: dir,
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env },
    // A process group of its own, killed whole below: what a terminal's ^C or a service manager sends.
    detached: true,
  });
  let serverErr = '';
  server.stderr!.on('data', (c: Buffer) => (serverErr += c.toString()));
  const exited = new Promise<void>((resolve) => server.once('exit', () => resolve()));
  killAtTeardown(t, () => (server.exitCode === null && server.signalCode === null ? [server.pid ?? 0] : []));
  t.true(await poll(() => readServerInfo(dir)?.pid === server.pid, 10_000, 50), `serve did not start: ${serverErr}`);
  const url = `http://127.0.0.1:${readServerInfo(dir)!.port}`;
  // A connection the daemon closes just as a loaded machine reuses it fails the fetch: tried again, on a new one,
  // and a daemon that really died says so with its stderr.
  const post = async (partitions: string[]): Promise<string> => {
    for (let attempt = 1; ; attempt++) {
      try {
        const res = await fetch(`${url}/api/wants`, { method: 'POST', headers: { 'content-type': 'application/json', connection: 'close' }, body: JSON.stringify({ partitions }) });
        return ((await res.json()) as { want_id: string }).want_id;
      } catch (err) {
        if (attempt >= 3) throw new Error(`POST /api/wants failed (${String((err as Error).cause ?? err)}); daemon stderr: ${serverErr}`);
        await sleep(200);
      }
    }
  };
  const bWant = await post(['b/2']);
  const failWant = await post(['slowfail/1']);
  const onceWant = await post(['once/1']);
  killAtTeardown(t, () => pidsIn(dir, 'once.pid'));
  const running = async () => ((await (await fetch(`${url}/api/job_runs?status=running`)).json()) as { data: Array<{ job_run_id: string; outputs: string[]; pid: number }> }).data;
  // once/1 hangs: wait for it (and for the jobs of once and b to have started); b/2 and slowfail/1 may be running
  // or already over when the daemon is killed, either way each must be recorded once.
  let once: { job_run_id: string; outputs: string[]; pid: number } | undefined;
  for (let i = 0; i < 400 && !once; i++) {
    once = (await running()).find((r) => r.outputs[0] === 'once/1');
    if (!once) await sleep(50);
  }
  t.truthy(once, 'once/1 is running');
  t.true(await poll(() => pidsIn(dir, 'b.pid').length === 1 && pidsIn(dir, 'once.pid').length === 1, 20_000, 20), 'the jobs started');
  process.kill(-server.pid!, 'SIGKILL');
  await exited;
  t.true(isPidAlive(once!.pid), 'the run outlived the daemon and its process group');
  // The runs that started end while the daemon is down: their status waits in their run directory.
  const logs = join(dir, '.platform', 'logs');
  const othersEnded = () => readdirSync(logs).every((id) => id === once!.job_run_id || existsSync(join(logs, id, 'status.json')));
  t.true(await poll(othersEnded, 20_000, 50), 'the other runs ended while no daemon was there');
  // once/1 loses its supervisor (its job's parent: the native launcher, or the run's own shell), then its job:
  // nothing runs it and nothing will say how it ended.
  const [job] = pidsIn(dir, 'once.pid');
  const { parent, group } = statOf(job!);
  process.kill(parent, 'SIGKILL');
  process.kill(-group, 'SIGKILL');

  const platform = await openPlatform(t, dir, graph, { executor: 'supervised' });
  const s1 = await waitForWant(platform, bWant);
  t.is(s1.wants.get(bWant)!.status, 'successful');
  t.deepEqual(runsFor(s1, 'b/2').map((r) => r.status), ['succeeded'], 'followed to its end, not restarted');
  t.deepEqual(lines(dir, 'b-done.txt'), ['done 2']);
  t.is(pidsIn(dir, 'b.pid').length, 1, 'b/2 ran once');
  const s2 = await waitForWant(platform, failWant);
  const failed = runsFor(s2, 'slowfail/1');
  t.deepEqual(failed.map((r) => [r.status, r.exit_code]), [['failed', 7]], 'its real exit code, recorded once');
  const s3 = await waitForWant(platform, onceWant);
  const onceRuns = runsFor(s3, 'once/1');
  t.deepEqual(onceRuns.map((r) => r.status), ['canceled', 'succeeded'], 'the lost run, then a new one');
  t.regex(onceRuns[0]!.reason, /^lost/);
});

test('a running job survives platform stop and platform start; its exit code is recorded once', async (t) => {
  const dir = makeWorkspace(t);
  writeFileSync(join(dir, 'platform.json'), JSON.stringify(graph));
  const env = { ...process.env, PLATFORM_IDLE_TIMEOUT: '30s' };
  const cli = (...args: string[]) => spawnSync(process.execPath, [join(REPO_ROOT, 'bin', 'platform'), '-C', dir, ...args], { env, encoding: 'utf8' });
  t.teardown(() => void cli('stop', '--cancel-runs'));
  const created = cli('--json', 'build', '--detach', 'slow7/1');
  t.is(created.status, 0, created.stderr);
  const wantId = (JSON.parse(created.stdout) as { want_id: string }).want_id;
  const url = () => `http://127.0.0.1:${readServerInfo(dir)!.port}`;
  // A daemon the CLI started requires its token (docs/SECURITY.md).
  const fetch = (input: string) => globalThis.fetch(input, { headers: { authorization: `Bearer ${readServerInfo(dir)!.token}` } });
  let pid = 0;
  // Bounded by time, not by a count of reads (a read of a loaded daemon takes its time); the bound guards a hang.
  for (const end = Date.now() + 20_000; !pid && Date.now() < end; ) {
    const data = ((await (await fetch(`${url()}/api/job_runs?status=running`)).json()) as { data: Array<{ pid: number }> }).data;
    if (data[0]) pid = data[0].pid;
    else await sleep(50);
  }
  t.true(pid > 0, 'the run started');
  const stopped = cli('stop');
  t.is(stopped.status, 0, stopped.stderr);
  t.regex(stopped.stdout, /^Stopped server \(pid \d+\); 1 job run goes on \(the next server follows it to the end\)$/m, 'says what becomes of the run');
  t.true(isPidAlive(pid), 'the job goes on after platform stop');
  t.is(cli('start').status, 0);
  writeFileSync(join(dir, 'slow7-release'), '');
  let status = '';
  for (const end = Date.now() + 30_000; !['failed', 'successful'].includes(status) && Date.now() < end; ) {
    status = ((await (await fetch(`${url()}/api/wants/${wantId}`)).json()) as { status: string }).status;
    if (!['failed', 'successful'].includes(status)) await sleep(50);
  }
  t.is(status, 'failed');
  const runs = ((await (await fetch(`${url()}/api/job_runs`)).json()) as { data: Array<{ status: string; exit_code: number | null }> }).data;
  t.deepEqual(runs.map((r) => [r.status, r.exit_code]), [['failed', 7]], 'one run, its real exit code');
});

/** A live process's parent and process group, from /proc (they follow the command name in parentheses). */
function statOf(pid: number): { parent: number; group: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const [, parent, group] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { parent: Number(parent), group: Number(group) };
}
