/**
 * Changing the executor while runs are in flight (QA, session 34): the next daemon follows each run to its end
 * through the executor it was placed on, never declares it lost nor runs it again, and says so (server.log, `platform
 * status`, `platform doctor`); a running daemon says when platform.json's executor is not the one in use. Real
 * daemons started by the CLI, a real redis-server, a real `platform worker` on this machine, real jobs.
 */
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ExecutionContext } from 'ava';
import { rmSync } from 'node:fs';
import { bash, killAtTeardown, lines, makeWorkspace, openPlatform, pidsIn, poll, runsFor, sleep, waitFor, want } from './helpers/jobs-fixture.js';
import { startRedis } from './helpers/redis-server.js';
import { redisExecutor, redisTests, startWorker } from './helpers/redis-fixture.js';
import { CLI } from './helpers/server-fixture.js';
import type { ServerStatus } from '../lib/api/server-status.js';

const redisTest = redisTests();

/**
 * slow/<n>: says it began (its run id) and its pid, runs until the test lets it go (`letGo`: a file, release), says it
 * ended. Not a fixed time: the run must still be in flight after a stop, a start and a few CLI commands, which on a
 * loaded machine took longer than the 6 s it ran; two minutes at most, so that none outlives a failed test long.
 */
const JOBS = [
  {
    label: 'slow',
    outputs: ['slow/(?<n>\\w+)'],
    exec: bash(
      `echo "$PLATFORM_JOB_RUN_ID" >> begun.txt; echo $$ >> slow.pid; i=0; while [ ! -e release ] && [ $i -lt 2400 ]; do sleep 0.05; i=$((i + 1)); done; echo "$PLATFORM_JOB_RUN_ID" >> ended.txt`,
    ),
  },
];

/** Lets the slow jobs end. */
const letGo = (dir: string): void => writeFileSync(join(dir, 'release'), '');

function writeGraph(dir: string, executor: string | undefined): void {
  writeFileSync(join(dir, 'platform.json'), JSON.stringify({ ...(executor ? { executor } : {}), max_concurrent_job_runs: 2, jobs: JOBS }));
}

interface Cli {
  (...args: string[]): Promise<{ code: number; stdout: string; stderr: string }>;
}

function cliFor(t: ExecutionContext, dir: string): Cli {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1', PLATFORM_IDLE_TIMEOUT: '2m' };
  delete env.PLATFORM_EXECUTOR;
  const cli: Cli = (...args) =>
    new Promise((resolve) =>
      execFile(process.execPath, [CLI, '-C', dir, ...args], { env, encoding: 'utf8' }, (err, stdout, stderr) =>
        resolve({ code: err ? Number((err as { code?: unknown }).code ?? 1) : 0, stdout, stderr }),
      ),
    );
  t.teardown(async () => void (await cli('stop', '--cancel-runs')));
  killAtTeardown(t, () => pidsIn(dir, 'slow.pid'));
  return cli;
}

async function status(cli: Cli): Promise<ServerStatus> {
  const r = await cli('--json', 'status');
  return JSON.parse(r.stdout) as ServerStatus;
}

interface RunRow {
  job_run_id: string;
  status: string;
  worker: string | null;
  reason: string | null;
}

async function runs(cli: Cli): Promise<RunRow[]> {
  const r = await cli('--json', 'job-runs', 'list');
  const body = JSON.parse(r.stdout) as RunRow[] | { data: RunRow[] };
  return Array.isArray(body) ? body : body.data;
}

async function doctorFinding(cli: Cli, check: string): Promise<{ status: string; detail: string; fix?: string } | undefined> {
  const r = await cli('--json', 'doctor');
  const body = JSON.parse(r.stdout) as { checks?: Array<{ check: string; status: string; detail: string; fix?: string }> } | Array<{ check: string; status: string; detail: string; fix?: string }>;
  const findings = Array.isArray(body) ? body : (body.checks ?? []);
  return findings.find((f) => f.check === check);
}

/**
 * slow/1 running on worker w2 (on this machine, in the workspace) for a daemon on `url`, and that daemon stopped with
 * the run going on: what `platform stop` said.
 */
async function runOnW2ThenStop(t: ExecutionContext, dir: string, cli: Cli, url: string): Promise<string> {
  writeGraph(dir, url);
  const w2 = startWorker(t, dir, url, 'w2');
  await w2.waitForStdout(/takes runs/);
  const built = await cli('build', 'slow/1', '--detach');
  t.is(built.code, 0, built.stderr);
  t.true(await poll(() => lines(dir, 'begun.txt').length === 1, 15_000), 'w2 began the run');
  t.true(await poll(async () => (await runs(cli)).some((r) => r.status === 'running' && r.worker === 'w2'), 10_000), 'the log has it running on w2');
  const stopped = await cli('stop');
  t.is(stopped.code, 0, stopped.stderr);
  return stopped.stdout;
}

/** Lets the run end on w2 and waits for it, then a little more (long enough for a second run to begin, were one queued). */
async function theOneRunEnds(t: ExecutionContext, dir: string, cli: Cli): Promise<RunRow[]> {
  letGo(dir);
  t.true(await poll(() => lines(dir, 'ended.txt').length === 1, 20_000), 'the job ended on w2');
  t.true(await poll(async () => (await runs(cli)).every((r) => r.status !== 'running'), 15_000), 'the daemon recorded its end');
  await sleep(2500);
  const all = await runs(cli);
  t.deepEqual(lines(dir, 'begun.txt').length, 1, `the job ran once (runs: ${JSON.stringify(all)})`);
  return all;
}

redisTest('switched to local with a run in flight on a Redis worker of this machine: the next daemon follows it on Redis, never adopts the worker\'s job, and it runs once', async (t) => {
  const redis = await startRedis(t);
  const dir = makeWorkspace(t);
  const cli = cliFor(t, dir);
  const said = await runOnW2ThenStop(t, dir, cli, redis.url);
  t.regex(said, /1 job run goes on \(the next server follows it to the end\)/);
  // Back to local: the executor line removed.
  writeGraph(dir, undefined);
  t.is((await cli('start')).code, 0);
  const st = await status(cli);
  t.like(st.executor, { kind: 'redis' });
  t.like(st.executor_config, { configured: 'local', configured_by: 'default', differs: true, held_runs: 1 });
  t.regex(st.executor_config!.note!, /; 1 job run is still on redis:\/\/127\.0\.0\.1:\d+ queue platform-runs: this daemon uses redis:\/\/127\.0\.0\.1:\d+ queue platform-runs \(new runs too\) until none is in flight, then restart to switch .*; or now, with 'platform stop --cancel-runs'/);
  const human = await cli('status');
  t.regex(human.stdout, /1 job run is still on redis:\/\/127\.0\.0\.1:\d+ queue platform-runs: this daemon uses/);
  const doctor = await doctorFinding(cli, 'executor config');
  t.like(doctor, { status: 'warn' });
  t.regex(doctor!.fix!, /wait for the 1 job run on redis:.* to end .* then restart the daemon/);
  t.regex(readFileSync(join(dir, '.platform', 'server.log'), 'utf8'), /1 job run is still on redis:\/\/127\.0\.0\.1:\d+ queue platform-runs \(r-\d+\), placed there by an earlier daemon: this daemon uses/);

  const all = await theOneRunEnds(t, dir, cli);
  t.is(all.length, 1, 'no second run was queued');
  t.like(all[0], { status: 'succeeded', worker: 'w2' });
  // Ended: the note says to restart; the next daemon goes local.
  const after = await status(cli);
  t.like(after.executor_config, { differs: true, held_runs: 0 });
  t.regex(after.executor_config!.note!, /kept at its start for job runs placed there, which have ended: restart the daemon to use local/);
  t.is((await cli('stop')).code, 0);
  t.is((await cli('start')).code, 0);
  const local = await status(cli);
  t.like(local.executor, { kind: 'local' });
  t.like(local.executor_config, { in_use: 'local', differs: false, held_runs: null, note: null });
});

redisTest('switched to another Redis db with a run in flight: the next daemon follows it on the db it was placed on, not lost, not run again', async (t) => {
  const redis = await startRedis(t);
  const dir = makeWorkspace(t);
  const cli = cliFor(t, dir);
  await runOnW2ThenStop(t, dir, cli, redis.url);
  // Another db of the same Redis, served by a worker too: a run queued there would be taken at once.
  writeGraph(dir, `${redis.url}/3`);
  const w3 = startWorker(t, dir, `${redis.url}/3`, 'w3');
  await w3.waitForStdout(/takes runs/);
  t.is((await cli('start')).code, 0);
  const st = await status(cli);
  t.like(st.executor_config, { differs: true, held_runs: 1, configured_by: 'platform.json' });
  t.regex(st.executor_config!.note!, /^platform\.json says executor redis:\/\/127\.0\.0\.1:\d+\/3 queue platform-runs; 1 job run is still on redis:\/\/127\.0\.0\.1:\d+ queue platform-runs: this daemon uses/);
  t.regex(st.executor.where, /^redis:\/\/127\.0\.0\.1:\d+ queue/);
  const all = await theOneRunEnds(t, dir, cli);
  t.is(all.length, 1, `no second run was queued: ${JSON.stringify(all)}`);
  t.like(all[0], { status: 'succeeded', worker: 'w2' });
  t.notRegex(all[0]!.reason ?? '', /lost/);
});

redisTest('a running daemon says when platform.json\'s executor is not the one in use, and once in server.log', async (t) => {
  const redis = await startRedis(t);
  const dir = makeWorkspace(t);
  const cli = cliFor(t, dir);
  writeGraph(dir, redis.url);
  t.is((await cli('start')).code, 0);
  t.like((await status(cli)).executor_config, { differs: false, note: null, configured_by: 'platform.json' });
  t.like(await doctorFinding(cli, 'executor config'), { status: 'ok' });
  writeGraph(dir, `${redis.url}/3`);
  // Told apart from the file's stamp, which a write in the same instant may leave as it was.
  await sleep(50);
  writeGraph(dir, `${redis.url}/3`);
  const st = await status(cli);
  t.like(st.executor, { kind: 'redis' });
  t.like(st.executor_config, { differs: true, held_runs: null });
  t.regex(st.executor_config!.in_use, /^redis:\/\/127\.0\.0\.1:\d+ queue platform-runs$/);
  t.regex(st.executor_config!.configured, /^redis:\/\/127\.0\.0\.1:\d+\/3 queue platform-runs$/);
  t.regex(st.executor_config!.note!, /^platform\.json says executor redis:\/\/127\.0\.0\.1:\d+\/3 queue platform-runs, changed since this daemon started; it uses redis:\/\/127\.0\.0\.1:\d+ queue platform-runs: restart the daemon to use it/);
  t.regex((await cli('status')).stdout, /changed since this daemon started; it uses .*: restart the daemon to use it/);
  const doctor = await doctorFinding(cli, 'executor config');
  t.like(doctor, { status: 'warn' });
  t.regex(doctor!.fix!, /restart the daemon to use it: platform stop/);
  await status(cli);
  const log = () => readFileSync(join(dir, '.platform', 'server.log'), 'utf8');
  t.is(log().match(/platform\.json's executor changed: /g)?.length, 1, log());
  // Back as it was: in use as configured again, nothing to say.
  writeGraph(dir, `${redis.url}/0`);
  t.like((await status(cli)).executor_config, { differs: false, note: null });
  // Written another way, db 0 is the same Redis.
  writeGraph(dir, redis.url);
  t.like((await status(cli)).executor_config, { differs: false, note: null });
});

redisTest('a local executor given a log with a run on a Redis worker of this machine leaves it as it is: not adopted, not lost, not run again', async (t) => {
  const redis = await startRedis(t);
  const dir = makeWorkspace(t);
  killAtTeardown(t, () => pidsIn(dir, 'slow.pid'));
  const graph = { max_concurrent_job_runs: 2, jobs: JOBS };
  const w2 = startWorker(t, dir, redis.url, 'w2');
  await w2.waitForStdout(/takes runs/);
  const first = await openPlatform(t, dir, graph, { executor: redisExecutor(redis.url), cancelRunsOnClose: false });
  await want(first, ['slow/1']);
  await waitFor(first, (s) => runsFor(s, 'slow/1')[0]?.worker === 'w2', 'slow/1 taken by w2', 15_000);
  await first.close();
  // An embedder's platform on the local executor (no daemon to keep the Redis one): the job of w2 names the run and
  // the workspace in its environment, and runs on this machine.
  const errors: string[] = [];
  const local = await openPlatform(t, dir, graph, { executor: 'supervised', cancelRunsOnClose: false, logError: (m) => errors.push(m) });
  letGo(dir);
  t.true(await poll(() => lines(dir, 'ended.txt').length === 1, 20_000), 'the job ended on w2');
  await sleep(2000);
  const runs = runsFor(local.state(), 'slow/1');
  t.is(runs.length, 1, 'not run again');
  t.like(runs[0], { status: 'running', worker: 'w2' });
  t.is(lines(dir, 'begun.txt').length, 1);
  t.true(errors.some((m) => /1 job run in flight was placed on another executor than this daemon's, which cannot follow it: r-\d+ \(on w2\)\. Left as it is/.test(m)), errors.join('\n'));
  // Closed asking to cancel its runs: not this one's, it is not recorded canceled (and so not built again).
  await local.close({ cancelRuns: true });
  // Back on the Redis it was placed on: its real end.
  const again = await openPlatform(t, dir, graph, { executor: redisExecutor(redis.url) });
  const s = await waitFor(again, (x) => runsFor(x, 'slow/1')[0]?.status === 'succeeded', 'slow/1 succeeded', 15_000);
  t.is(runsFor(s, 'slow/1').length, 1);
  t.is(lines(dir, 'begun.txt').length, 1);
});

redisTest('with a run on a Redis worker and no record of which Redis (a log from before it was kept), a daemon configured local refuses to start, saying what to do', async (t) => {
  const redis = await startRedis(t);
  const dir = makeWorkspace(t);
  const cli = cliFor(t, dir);
  await runOnW2ThenStop(t, dir, cli, redis.url);
  rmSync(join(dir, '.platform', 'executor.json'));
  writeGraph(dir, undefined);
  const refused = await cli('start');
  t.not(refused.code, 0);
  const said = `${refused.stderr}${readFileSync(join(dir, '.platform', 'server.log'), 'utf8')}`;
  t.regex(said, /1 job run \(r-\d+\) is on Redis workers, placed by a daemon that did not record which Redis, and the executor configured now is local, which cannot follow them/);
  t.regex(said, /Start the daemon on the Redis they were placed on/);
  // Told which, it follows the run to its end (and says it took the configured Redis for theirs).
  writeGraph(dir, redis.url);
  const told = await cli('start');
  t.is(told.code, 0, told.stderr);
  t.regex(readFileSync(join(dir, '.platform', 'server.log'), 'utf8'), /were placed on a Redis queue before the daemon recorded which; taken to be the configured redis:/);
  const all = await theOneRunEnds(t, dir, cli);
  t.is(all.length, 1);
  t.like(all[0], { status: 'succeeded', worker: 'w2' });
});

redisTest("an executor added to platform.json while the daemon runs is said as platform.json's, not the default's; removed, as the default again", async (t) => {
  const redis = await startRedis(t);
  const dir = makeWorkspace(t);
  const cli = cliFor(t, dir);
  writeGraph(dir, undefined);
  t.is((await cli('start')).code, 0);
  t.like((await status(cli)).executor_config, { differs: false, configured_by: 'default', in_use: 'local' });
  writeGraph(dir, redis.url);
  // Told apart from the file's stamp, which a write in the same instant may leave as it was.
  await sleep(50);
  writeGraph(dir, redis.url);
  const st = await status(cli);
  t.like(st.executor_config, { differs: true, configured_by: 'platform.json', in_use: 'local' });
  t.regex(st.executor_config!.note!, /^platform\.json says executor redis:\/\/127\.0\.0\.1:\d+ queue platform-runs, changed since this daemon started; it uses local/);
  t.notRegex(st.executor_config!.note!, /no "executor" in platform\.json/);
  t.notRegex((await cli('status')).stdout, /no "executor" in platform\.json/);
  writeGraph(dir, undefined);
  t.like((await status(cli)).executor_config, { differs: false, note: null, configured_by: 'default' });
});
