/**
 * A workspace moved (`mv ws ws2`) while a supervised run goes on and no daemon runs: the run's supervisor writes its
 * end into the run's directory wherever it went (the native launcher and the shell supervisor hold the directory open
 * from the run's start), and the next daemon, at the new path, records the run once and does not run it again:
 * whether the run ended before that daemon started, or goes on under it (which knows it by its pid, though its
 * environment names the path the workspace had). The real CLI as a subprocess, the daemons it starts, real job
 * processes under the native launcher and under the shell one.
 */
import test, { type ExecutionContext } from 'ava';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { launcherMode } from '../lib/executor/run-launcher.js';
import { bash, isPidAlive, killAtTeardown, poll, sleep } from './helpers/jobs-fixture.js';
import { cliIn, type CliResult } from './helpers/cli-against.js';


/** Runs until a `go` file is in its directory (the workspace, wherever it is by then): the test says when it ends. */
const graph = { jobs: [{ label: 'held', outputs: ['held/(?<n>\\d+)'], exec: bash('while [ ! -e go ]; do sleep 0.05; done; echo done') }] };

type Mode = 'native' | 'shell';

function cli(dir: string, mode: Mode, ...args: string[]): Promise<CliResult> {
  // The daemon a command starts inherits this environment: PLATFORM_LAUNCHER chooses its launcher.
  return cliIn(dir, { PLATFORM_IDLE_TIMEOUT: '2m', PLATFORM_LAUNCHER: mode === 'shell' ? 'shell' : '' }, ...args);
}

interface RunRow {
  job_run_id: string;
  status: string;
  pid: number;
}

async function runsOf(dir: string, mode: Mode): Promise<RunRow[]> {
  const r = await cli(dir, mode, 'job-runs', 'list', '--json');
  if (r.code !== 0) throw new Error(`job-runs list in ${dir}: ${r.stderr}`);
  return (JSON.parse(r.stdout) as { data: RunRow[] }).data;
}

/** A workspace at <tmp>/ws whose daemon started the run of held/1 and was stopped, left running; then moved to <tmp>/ws2. */
async function movedWhileRunning(t: ExecutionContext, mode: Mode): Promise<{ moved: string; pid: number }> {
  const parent = realpathSync(mkdtempSync(join(tmpdir(), 'platform-moved-')));
  const ws = join(parent, 'ws');
  const moved = join(parent, 'ws2');
  mkdirSync(join(ws, '.platform'), { recursive: true });
  writeFileSync(join(ws, 'platform.json'), JSON.stringify(graph));
  let pid = 0;
  t.teardown(async () => {
    await cli(existsSync(moved) ? moved : ws, mode, 'stop', '--cancel-runs');
    rmSync(parent, { recursive: true, force: true });
  });
  killAtTeardown(t, () => [pid]);
  const built = await cli(ws, mode, 'build', 'held/1', '--detach');
  t.is(built.code, 0, built.stderr);
  t.true(await poll(async () => (pid = (await runsOf(ws, mode)).find((r) => r.status === 'running')?.pid ?? 0) > 0, 20_000, 100), 'the run started');
  const stop = await cli(ws, mode, 'stop');
  t.is(stop.code, 0, stop.stderr);
  t.regex(stop.stdout, /1 job run goes on/);
  renameSync(ws, moved);
  t.true(isPidAlive(pid), 'the run goes on, its workspace moved');
  return { moved, pid };
}

/** The runs once none is running any more (the daemon settles a run it found ended on its next turn). */
async function settled(dir: string, mode: Mode): Promise<Array<[string, string]>> {
  let runs: RunRow[] = [];
  for (let i = 0; i < 100; i++) {
    runs = await runsOf(dir, mode);
    if (runs.every((r) => r.status !== 'running' && r.status !== 'queued')) break;
    await sleep(100);
  }
  return runs.map((r) => [r.job_run_id, r.status]);
}

for (const mode of ['native', 'shell'] as const) {
  const skip = mode === 'native' && launcherMode() !== 'native';

  (skip ? test.skip : test)(`${mode} launcher: a run that ends while no daemon runs and its workspace moved leaves its status in its directory; the daemon at the new path records it succeeded, once`, async (t) => {
    t.timeout(90_000);
    const { moved, pid } = await movedWhileRunning(t, mode);
    writeFileSync(join(moved, 'go'), '');
    t.true(await poll(() => !isPidAlive(pid), 20_000), 'the run ended');
    const status = join(moved, '.platform', 'logs', 'r-1', 'status.json');
    t.true(await poll(() => existsSync(status), 5_000), 'its supervisor wrote its status where its directory is now');
    t.like(JSON.parse(readFileSync(status, 'utf8')) as object, { exit_code: 0, pid });
    t.deepEqual(await settled(moved, mode), [['r-1', 'succeeded']], 'recorded as it ended, not lost, and not run again');
    t.is(readFileSync(join(moved, '.platform', 'logs', 'r-1', 'stdout.log'), 'utf8'), 'done\n');
  });

  (skip ? test.skip : test)(`${mode} launcher: the daemon started at the new path while the run goes on follows it to its end: succeeded, once`, async (t) => {
    t.timeout(90_000);
    const { moved, pid } = await movedWhileRunning(t, mode);
    // Started by this command, at the new path: the run is still going, under the path the workspace had.
    t.deepEqual((await runsOf(moved, mode)).map((r) => [r.job_run_id, r.status, r.pid]), [['r-1', 'running', pid]], 'followed, not lost');
    writeFileSync(join(moved, 'go'), '');
    t.true(await poll(() => !isPidAlive(pid), 20_000), 'the run ended');
    t.deepEqual(await settled(moved, mode), [['r-1', 'succeeded']], 'recorded as it ended, not lost, and not run again');
  });
}
