/**
 * A wide run's `--supervise` (launcher.c) at its edges: its launcher gone while it reads the job's fields, or in a
 * timeout's grace; the daemon's environment in those fields; the supervisor killed alone. Real launcher, real
 * processes, real LevelDB. Serial: each holds a slot or a launcher for a while.
 */
import test, { type ExecutionContext } from 'ava';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, openSync, readFileSync, statSync, writeSync, closeSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BuildState } from '../lib/state/build-state.js';
import { launcherMode, nativeLauncherPath } from '../lib/executor/run-launcher.js';
import { isPidAlive, killAtTeardown, killHard, makeWorkspace, poll, untilJobWrote, waitFor } from './helpers/jobs-fixture.js';
import { openSupervised, WIDE_ENV } from './helpers/held-runs-fixture.js';

const request = (partitions: string[]) => ({ partitions, comment: '', data_timestamp: 0, ttl_seconds: 0, sla_seconds: 0 });

function ppidOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return 0;
  }
}

/**
 * A native launcher of its own for `dir`, handed the record run-launcher.ts makes for a wide run `id` (its program
 * `--supervise <its log dir>`); the supervisor's pid from the launcher's `s` news.
 */
async function superviseRecord(t: ExecutionContext, dir: string, id: string, { timeoutMs, graceMs }: { timeoutMs: number; graceMs: number }) {
  const logDir = join(dir, '.platform', 'logs', id);
  const launcher = spawn(nativeLauncherPath(), [dir], { stdio: ['pipe', 'pipe', 'ignore'] });
  t.teardown(() => void launcher.kill('SIGKILL'));
  const identity = [`PLATFORM_WORKSPACE=${dir}`, `PLATFORM_JOB_RUN_ID=${id}`];
  const argv = [nativeLauncherPath(), '--supervise', logDir, String(timeoutMs), String(graceMs)];
  const head = [id, logDir, dir, '', String(timeoutMs), String(graceMs)];
  launcher.stdin!.write([...head, String(identity.length), ...identity, String(argv.length), ...argv].join('\0') + '\0');
  const pid = Number(/^s \S+ (\d+) \d+$/m.exec((await once(launcher.stdout!, 'data'))[0].toString())?.[1]);
  return { launcher, pid };
}

test.serial('a --supervise whose launcher died while it read exec.fields still writes the status of its job', async (t) => {
  if (launcherMode() !== 'native') return t.pass('the native launcher is not built here');
  const dir = makeWorkspace(t);
  const id = 'r-orphaned';
  const logDir = join(dir, '.platform', 'logs', id);
  mkdirSync(logDir, { recursive: true });
  writeFileSync(join(logDir, 'stdin.json'), '{}');
  // A FIFO holds the supervisor in its read of exec.fields (as a slow disk or a large file does) while its launcher dies.
  t.is(spawnSync('mkfifo', [join(logDir, 'exec.fields')]).status, 0);
  const { launcher, pid } = await superviseRecord(t, dir, id, { timeoutMs: 0, graceMs: 0 });
  t.true(pid > 0, 'the launcher started the supervisor');
  killAtTeardown(t, () => [pid]);
  t.true(await poll(() => readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('--supervise'), 20_000), 'the supervisor runs');
  // In its open() of the FIFO: asleep, which it is nowhere before (it took its launcher's pid first). Not a fixed
  // 100 ms: a loaded machine may not have run it that far by then, and a launcher gone before it took that pid is one
  // it never knew.
  const state = (): string => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0]!;
    } catch {
      return '';
    }
  };
  t.true(await poll(() => state() === 'S', 20_000), `the supervisor waits in its open() of the FIFO (state ${state()})`);
  launcher.kill('SIGKILL');
  t.true(await poll(() => ppidOf(pid) !== launcher.pid, 5000), 'the supervisor was given to another parent');
  // Now the job's fields come, and the job runs and ends.
  const fd = openSync(join(logDir, 'exec.fields'), 'w');
  const env = ['PATH=/usr/bin:/bin'];
  const job = ['/bin/sh', '-c', 'exit 7'];
  writeSync(fd, [String(env.length), ...env, String(job.length), ...job].join('\0') + '\0');
  closeSync(fd);
  const gone = () => !isPidAlive(pid) || readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z ');
  t.true(await poll(gone, 5000), 'the supervisor ended');
  // Nobody else will: its launcher is gone. Without it a next daemon finds the pid gone and no status: lost, rebuilt.
  t.true(existsSync(join(logDir, 'status.json')), 'the supervisor wrote the status itself (its launcher is gone)');
});

test.serial("a wide run does not leave the daemon's environment on disk, readable by others", async (t) => {
  if (launcherMode() !== 'native') return t.pass('the native launcher is not built here');
  const before = process.env.REVIEW_DAEMON_SECRET;
  process.env.REVIEW_DAEMON_SECRET = 'hunter2-daemon-only';
  t.teardown(() => {
    if (before === undefined) delete process.env.REVIEW_DAEMON_SECRET;
    else process.env.REVIEW_DAEMON_SECRET = before;
  });
  const dir = makeWorkspace(t);
  const graph = { jobs: [{ label: 'w', outputs: ['w'], exec: ['bash', '-c', 'true'], env: WIDE_ENV }] };
  const platform = await openSupervised(t, dir, graph);
  await platform.createWant(request(['w']));
  const s = await waitFor(platform, (st: BuildState) => [...st.job_runs.values()].some((r) => r.status === 'succeeded'), 'the run to succeed', 20_000);
  const id = [...s.job_runs.values()][0]!.job_run_id;
  const fields = join(dir, '.platform', 'logs', id, 'exec.fields');
  // It is there, with the daemon's whole environment (credentials included), 0644 in a 0755 directory, for as long as
  // the run's logs are kept.
  const left = existsSync(fields) && readFileSync(fields, 'utf8').includes('hunter2-daemon-only');
  t.false(left && (statSync(fields).mode & 0o077) !== 0, "exec.fields with the daemon's environment is readable by group and others");
  t.false(left, "the daemon's environment stays in the run's directory after the run");
});

test.serial('a wide run its launcher timed out, the launcher then killed during the grace, is not recorded as succeeded', async (t) => {
  if (launcherMode() !== 'native') return t.pass('the native launcher is not built here');
  const { SupervisedExecutor } = await import('../lib/executor/supervised-executor.js');
  const { firstValueFrom } = await import('rxjs');
  const dir = makeWorkspace(t);
  const id = 'r-late';
  const logDir = join(dir, '.platform', 'logs', id);
  mkdirSync(logDir, { recursive: true });
  writeFileSync(join(logDir, 'stdin.json'), '{}');
  // A job that cleans up for a moment after its SIGTERM and exits 0 (as many do).
  const job = ['/bin/bash', '-c', "trap 'sleep 0.5; exit 0' TERM; sleep 30 & wait"];
  const env = ['PATH=/usr/bin:/bin', `PLATFORM_WORKSPACE=${dir}`, `PLATFORM_JOB_RUN_ID=${id}`];
  writeFileSync(join(logDir, 'exec.fields'), [String(env.length), ...env, String(job.length), ...job].join('\0') + '\0');
  // Timeout 300 ms, grace 10 s: the record run-launcher.ts makes for a wide run with a timeout.
  const { launcher, pid } = await superviseRecord(t, dir, id, { timeoutMs: 300, graceMs: 10_000 });
  killAtTeardown(t, () => [pid]);
  const stderr = () => (existsSync(join(logDir, 'stderr.log')) ? readFileSync(join(logDir, 'stderr.log'), 'utf8') : '');
  t.true(await poll(() => stderr().includes('timed out'), 5000), 'the launcher timed the run out');
  launcher.kill('SIGKILL');
  t.true(await poll(() => existsSync(join(logDir, 'status.json')), 5000), 'the supervisor wrote the status (its launcher is gone)');
  // A next daemon reads it.
  const executor = new SupervisedExecutor({ workspaceRoot: dir, pollMs: 20 });
  t.teardown(() => executor.shutdown('test over'));
  const outcome = firstValueFrom(executor.outcomes$);
  const launch = { job_run_id: id, argv: job, env: {}, outputs: ['l/1'], cwd: dir, stdin: '{}', log_dir: logDir, timeout_seconds: 1 };
  executor.reattach(launch, pid);
  const got = await outcome;
  t.log(JSON.stringify(got), readFileSync(join(logDir, 'status.json'), 'utf8'));
  t.not(got.status, 'succeeded', 'a run whose stderr says it was timed out is recorded as succeeded');
});

test.serial("a wide run's job does not outlive its supervisor killed alone (the pid the run records)", async (t) => {
  if (launcherMode() !== 'native') return t.pass('the native launcher is not built here');
  const dir = makeWorkspace(t);
  const graph = { jobs: [{ label: 'long', outputs: ['long'], exec: ['bash', '-c', 'echo $$ > job.pid; sleep 30'], env: WIDE_ENV }] };
  const platform = await openSupervised(t, dir, graph);
  await platform.createWant(request(['long']));
  const running = await waitFor(platform, (s: BuildState) => [...s.job_runs.values()].some((r) => (r.pid ?? 0) > 0), 'the run to start');
  const { pidsIn } = await import('./helpers/jobs-fixture.js');
  t.true(await untilJobWrote(() => pidsIn(dir, 'job.pid').length > 0, () => [...running.job_runs.values()][0]!.pid!), 'the job runs');
  const [job] = pidsIn(dir, 'job.pid');
  killAtTeardown(t, () => [job!]);
  const pid = [...running.job_runs.values()][0]!.pid!;
  // As `kill -9 <the run's pid>` by a person, or the OOM killer, would: for a narrow run that is the job itself.
  process.kill(pid, 'SIGKILL');
  const s = await waitFor(platform, (st: BuildState) => [...st.job_runs.values()].every((r) => r.status !== 'running'), 'the run to end', 10_000);
  t.log([...s.job_runs.values()].map((r) => `${r.job_run_id} ${r.status} ${r.signal}`).join('; '));
  t.true(await poll(() => !isPidAlive(job!), 2000), 'the job was left running after its run was recorded ended');
});

/** A job that ignores SIGTERM, as does the child it starts. */
const STUBBORN_JOB = "trap '' TERM; echo $$ > job.pid; sleep 60 & echo $! > child.pid; wait";

/**
 * A wide run whose job ignores SIGTERM, as does the child it started (both in the run's group), under a launcher given
 * the record run-launcher.ts makes, with `timeoutMs` and `graceMs`; its job's and child's pids once they run.
 *
 * The run's timer starts at the supervisor's spawn, and the job must have set its trap (and started its child) before
 * the deadline: on a loaded machine a bash may not have, and the SIGTERM then ends it before it wrote its pids (its
 * first commands after the trap). The test cannot wait for the trap before the deadline, so such a run is tried again,
 * in a workspace of its own; `ready` (given the run once both run) may ask for another try too, when a state the test
 * needs before the deadline did not come in time. What is checked is checked of the first run that was ready.
 */
async function stubbornWideRun(
  t: ExecutionContext,
  id: string,
  timing: { timeoutMs: number; graceMs: number },
  script = STUBBORN_JOB,
  ready: (run: WideRun) => boolean = () => true,
): Promise<WideRun> {
  const tries = 5;
  for (let n = 1; ; n++) {
    const dir = makeWorkspace(t);
    const logDir = join(dir, '.platform', 'logs', id);
    mkdirSync(logDir, { recursive: true });
    writeFileSync(join(logDir, 'stdin.json'), '{}');
    const job = ['/bin/bash', '-c', script];
    const env = ['PATH=/usr/bin:/bin', `PLATFORM_WORKSPACE=${dir}`, `PLATFORM_JOB_RUN_ID=${id}`];
    writeFileSync(join(logDir, 'exec.fields'), [String(env.length), ...env, String(job.length), ...job].join('\0') + '\0');
    const { launcher, pid } = await superviseRecord(t, dir, id, timing);
    const { pidsIn } = await import('./helpers/jobs-fixture.js');
    const pids = () => [...pidsIn(dir, 'job.pid'), ...pidsIn(dir, 'child.pid')];
    killAtTeardown(t, () => [pid, ...pids()]);
    const stderr = () => (existsSync(join(logDir, 'stderr.log')) ? readFileSync(join(logDir, 'stderr.log'), 'utf8') : '');
    const status = () => (existsSync(join(logDir, 'status.json')) ? (JSON.parse(readFileSync(join(logDir, 'status.json'), 'utf8')) as object) : undefined);
    // Both running, or the run over (its job ended by the SIGTERM before it wrote them): 20 s guards against a hang.
    await poll(() => pids().length === 2 || status() !== undefined, 20_000);
    const run = { launcher, pid, job: pids(), stderr, status };
    if (n < tries && (run.job.length < 2 || !run.job.every(isPidAlive) || !ready(run))) {
      t.log(`try ${n}: the job was not ready before its deadline (pids ${run.job.join(', ') || 'none'}; ${stderr().trim()}); trying again`);
      launcher.kill('SIGKILL');
      for (const p of [pid, ...run.job]) killHard(p);
      continue;
    }
    t.is(run.job.length, 2, 'the job and its child run');
    return run;
  }
}

interface WideRun {
  launcher: ChildProcess;
  pid: number;
  job: number[];
  stderr: () => string;
  status: () => object | undefined;
}

test.serial("a wide run whose launcher died in its timeout's grace: its supervisor sends the grace's SIGKILL to what ignored the SIGTERM", async (t) => {
  if (launcherMode() !== 'native') return t.pass('the native launcher is not built here');
  const graceMs = 2000;
  const run = await stubbornWideRun(t, 'r-stubborn', { timeoutMs: 300, graceMs });
  t.true(await poll(() => run.stderr().includes('timed out'), 5000), 'the launcher timed the run out');
  const termAt = Date.now();
  run.launcher.kill('SIGKILL');
  t.true(await poll(() => ppidOf(run.pid) !== run.launcher.pid, 5000), 'the supervisor was given to another parent');
  t.true(run.job.every(isPidAlive), 'the job and its child ignored the SIGTERM');
  // Without it they run on until a daemon's backstop (none here): 60 s.
  t.true(await poll(() => !run.job.some(isPidAlive), graceMs + 5000), 'the job and its child were killed after the grace');
  t.true(Date.now() - termAt >= graceMs - 300, `not before the grace (${Date.now() - termAt} ms after the SIGTERM)`);
  t.true(await poll(() => !isPidAlive(run.pid), 2000), 'the supervisor ended');
  t.deepEqual(run.status(), { exit_code: 137, pid: run.pid, timed_out: true }, 'its status says the run timed out, killed');
});

test.serial('a wide run whose launcher died before its timeout: its supervisor times the job out itself, SIGTERM then the SIGKILL after the grace', async (t) => {
  if (launcherMode() !== 'native') return t.pass('the native launcher is not built here');
  // Its launcher is killed at once: a job that took so long to start that its deadline had come is tried again.
  const run = await stubbornWideRun(t, 'r-orphan-timeout', { timeoutMs: 1500, graceMs: 500 }, STUBBORN_JOB, (r) => {
    r.launcher.kill('SIGKILL');
    return !r.stderr().includes('timed out');
  });
  run.launcher.kill('SIGKILL');
  t.true(await poll(() => ppidOf(run.pid) !== run.launcher.pid, 5000), 'the supervisor was given to another parent');
  t.false(run.stderr().includes('timed out'), 'killed before the deadline');
  t.true(await poll(() => run.stderr().includes('platform: timed out after 1500 ms'), 5000), 'the supervisor timed the run out, and said so where the launcher would');
  t.true(await poll(() => !run.job.some(isPidAlive), 5000), 'the job and its child, which ignore SIGTERM, were killed after the grace');
  t.true(await poll(() => !isPidAlive(run.pid), 2000), 'the supervisor ended');
  t.deepEqual(run.status(), { exit_code: 137, pid: run.pid, timed_out: true }, 'its status says the run timed out, killed');
});

test.serial("a wide run whose launcher died before its timeout: a job that obeys the SIGTERM ends, what it left that ignores it is killed after the grace", async (t) => {
  if (launcherMode() !== 'native') return t.pass('the native launcher is not built here');
  const graceMs = 800;
  const obeying = "echo $$ > job.pid; (trap '' TERM; exec sleep 60) & echo $! > child.pid; wait";
  // Its launcher is killed at once: a job that took so long to start that its deadline had come is tried again.
  const run = await stubbornWideRun(t, 'r-left-child', { timeoutMs: 1000, graceMs }, obeying, (r) => {
    r.launcher.kill('SIGKILL');
    return !r.stderr().includes('timed out');
  });
  run.launcher.kill('SIGKILL');
  t.true(await poll(() => ppidOf(run.pid) !== run.launcher.pid, 5000), 'the supervisor was given to another parent');
  t.true(await poll(() => run.stderr().includes('platform: timed out after 1 s'), 5000), `the supervisor timed the run out: ${run.stderr()}`);
  const termAt = Date.now();
  t.true(await poll(() => !isPidAlive(run.job[0]!), 2000), 'the job obeyed the SIGTERM');
  t.true(isPidAlive(run.job[1]!), 'its child ignored it');
  t.true(await poll(() => !isPidAlive(run.job[1]!), graceMs + 5000), "the child was killed at the grace's end");
  t.true(Date.now() - termAt >= graceMs - 300, `not before the grace (${Date.now() - termAt} ms after the SIGTERM)`);
  t.true(await poll(() => !isPidAlive(run.pid), 2000), 'the supervisor ended');
  t.deepEqual(run.status(), { exit_code: 143, pid: run.pid, timed_out: true }, 'its status says the run timed out, ended by the SIGTERM');
});
