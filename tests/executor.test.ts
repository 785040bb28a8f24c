import test from 'ava';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { filter, firstValueFrom, take, toArray } from 'rxjs';
import type { JobLaunch, JobOutcome } from '../lib/executor/job-launch.js';
import { MissingDepsScanner } from '../lib/executor/missing-deps-scanner.js';
import { isPidAlive } from '../lib/system/pid-liveness.js';
import { ProcessExecutor } from '../lib/executor/process-executor.js';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function workspace(t: { teardown: (fn: () => void) => void }): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'platform-exec-')));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

let seq = 0;
function launch(cwd: string, argv: string[], extra: Partial<JobLaunch> = {}): JobLaunch {
  const job_run_id = extra.job_run_id ?? `run-${process.pid}-${++seq}`;
  return {
    job_run_id,
    argv,
    env: {},
    outputs: ['out/a'],
    cwd,
    stdin: '{}',
    log_dir: join(cwd, '.platform', 'logs', job_run_id),
    timeout_seconds: 0,
    ...extra,
  };
}

/** Subscribe before start: outcomes$ is hot. */
function outcomeOf(ex: ProcessExecutor, id: string): Promise<JobOutcome> {
  return firstValueFrom(ex.outcomes$.pipe(filter((o) => o.job_run_id === id)));
}

async function waitFor(cond: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (cond()) return true;
    await sleep(20);
  }
  return cond();
}

test('a succeeding job gets env, stdin and cwd, and its logs are complete when the outcome arrives', async (t) => {
  const ws = workspace(t);
  const ex = new ProcessExecutor();
  const script = [
    'echo "id=$PLATFORM_JOB_RUN_ID"',
    'echo "outputs=$PLATFORM_OUTPUTS"',
    'echo "custom=$CUSTOM"',
    'echo "home_set=${HOME:+yes}"',
    'echo "stdin=$(cat)"',
    'echo "cwd=$(pwd)"',
    'echo "to stderr" >&2',
    'seq 1 200000',
  ].join('\n');
  const l = launch(ws, ['bash', '-c', script], {
    env: { CUSTOM: 'hello world' },
    outputs: ['daily/x/date=2026-01-05', 'daily/y'],
    stdin: JSON.stringify({ args: ['2026-01-05'] }),
  });
  // Read the log synchronously in the subscriber: it must already be complete.
  const seen = firstValueFrom(
    ex.outcomes$.pipe(
      filter((o) => o.job_run_id === l.job_run_id),
      take(1),
    ),
  ).then((o) => ({ o, stdout: readFileSync(join(l.log_dir, 'stdout.log'), 'utf8') }));
  const { pid } = ex.start(l);
  t.true(pid > 0);
  t.true(ex.isRunning(l.job_run_id));
  t.is(ex.runningCount(), 1);
  const { o, stdout } = await seen;
  t.deepEqual(o, { job_run_id: l.job_run_id, status: 'succeeded' });
  t.false(ex.isRunning(l.job_run_id));
  t.is(ex.runningCount(), 0);
  const lines = stdout.split('\n');
  t.is(lines[0], `id=${l.job_run_id}`);
  t.is(lines[1], `outputs=${JSON.stringify(['daily/x/date=2026-01-05', 'daily/y'])}`);
  t.is(lines[2], 'custom=hello world');
  t.is(lines[3], 'home_set=yes', 'process.env is inherited');
  t.is(lines[4], `stdin=${JSON.stringify({ args: ['2026-01-05'] })}`);
  t.is(lines[5], `cwd=${ws}`);
  t.true(stdout.endsWith('\n199999\n200000\n'), 'the whole output is in the log');
  t.is(readFileSync(join(l.log_dir, 'stderr.log'), 'utf8'), 'to stderr\n');
});

test('a job that ignores its stdin does not break the executor', async (t) => {
  const ws = workspace(t);
  const ex = new ProcessExecutor();
  const l = launch(ws, ['true'], { stdin: 'x'.repeat(1 << 20) });
  const out = outcomeOf(ex, l.job_run_id);
  ex.start(l);
  t.is((await out).status, 'succeeded');
});

test('a failing job reports its exit code', async (t) => {
  const ws = workspace(t);
  const ex = new ProcessExecutor();
  const l = launch(ws, ['bash', '-c', 'echo oops >&2; exit 3']);
  const out = outcomeOf(ex, l.job_run_id);
  ex.start(l);
  t.deepEqual(await out, {
    job_run_id: l.job_run_id,
    status: 'failed',
    exit_code: 3,
    signal: '',
    reason: 'exited with code 3',
  });
  t.is(readFileSync(join(l.log_dir, 'stderr.log'), 'utf8'), 'oops\n');
});

test('a job killed by a signal reports the signal', async (t) => {
  const ws = workspace(t);
  const ex = new ProcessExecutor();
  const l = launch(ws, ['bash', '-c', 'kill -KILL $$']);
  const out = outcomeOf(ex, l.job_run_id);
  ex.start(l);
  const o = await out;
  t.like(o, { status: 'failed', exit_code: -1, signal: 'SIGKILL' });
  t.regex((o as { reason: string }).reason, /SIGKILL/);
});

test('PLATFORM_MISSING_DEPS on stdout or stderr with a non-zero exit is dep_missed', async (t) => {
  const ws = workspace(t);
  const ex = new ProcessExecutor();
  const a = launch(ws, [
    'bash',
    '-c',
    `echo working; echo 'PLATFORM_MISSING_DEPS {"missing": ["raw/orders/date=2026-01-05", "raw/x"]}'; exit 1`,
  ]);
  const b = launch(ws, ['bash', '-c', `printf 'PLATFORM_MISSING_DEPS {"missing": ["raw/y"]}' >&2; exit 2`]);
  const c = launch(ws, ['bash', '-c', `echo 'PLATFORM_MISSING_DEPS {"missing": ["raw/z"]}'; exit 0`]);
  const outs = [a, b, c].map((l) => outcomeOf(ex, l.job_run_id));
  for (const l of [a, b, c]) ex.start(l);
  const [oa, ob, oc] = await Promise.all(outs);
  t.deepEqual(oa, { job_run_id: a.job_run_id, status: 'dep_missed', missing: ['raw/orders/date=2026-01-05', 'raw/x'] });
  t.deepEqual(ob, { job_run_id: b.job_run_id, status: 'dep_missed', missing: ['raw/y'] });
  t.deepEqual(oc, { job_run_id: c.job_run_id, status: 'succeeded' }, 'exit 0 wins');
});

test('MissingDepsScanner handles chunks split mid-line and ignores look-alikes', (t) => {
  const s = new MissingDepsScanner();
  s.push(Buffer.from('noise\nPLATFORM_MISSING'));
  s.push(Buffer.from('_DEPS {"missing": ["a", "b"]}\r\nPLATFORM_MISSING_DEPSX {"missing": ["no"]}\n'));
  s.push('PLATFORM_MISSING_DEPS not json\n  PLATFORM_MISSING_DEPS {"missing": ["c", "a"]}');
  s.end();
  t.deepEqual([...s.missing], ['a', 'b', 'c']);
  t.is(s.report.problem, undefined, 'a line that does not begin a report ("not json") is none');
  const bad = new MissingDepsScanner();
  bad.push('PLATFORM_MISSING_DEPS {"missing": [\nPLATFORM_MISSING_DEPS {"missing": ["a", 3]}\n');
  bad.end();
  t.regex(bad.report.problem ?? '', /^its PLATFORM_MISSING_DEPS line is not JSON \(/, 'the line it could not read is told, the first one');
  t.deepEqual([...bad.missing], ['a'], 'a ref beside something that is not one is still taken');
  const noList = new MissingDepsScanner();
  noList.push('PLATFORM_MISSING_DEPS {"refs": ["a"]}\n');
  noList.end();
  t.is(noList.report.problem, 'its PLATFORM_MISSING_DEPS line has no "missing" list of refs');
});

test('timeout kills the process group and reports it', async (t) => {
  const ws = workspace(t);
  const ex = new ProcessExecutor();
  const l = launch(ws, ['bash', '-c', 'sleep 30 & echo $! > child.pid; wait'], { timeout_seconds: 1 });
  const out = outcomeOf(ex, l.job_run_id);
  const started = Date.now();
  const { pid } = ex.start(l);
  const o = await out;
  const elapsed = Date.now() - started;
  t.like(o, { status: 'failed', reason: 'timed out after 1 s', signal: 'SIGTERM', exit_code: -1 });
  t.true(elapsed >= 900 && elapsed < 3000, `took ${elapsed} ms`);
  // The timer starts at the spawn: on a loaded machine bash may not have started its grandchild (nor written
  // child.pid) within the second, so the grandchild is looked at when there was one; the job itself, always.
  t.true(await waitFor(() => !isPidAlive(pid), 1000), 'the job died');
  if (existsSync(join(ws, 'child.pid'))) {
    const child = Number(readFileSync(join(ws, 'child.pid'), 'utf8'));
    t.true(await waitFor(() => !isPidAlive(child), 1000), 'the grandchild died too');
  }
  t.regex(readFileSync(join(l.log_dir, 'stderr.log'), 'utf8'), /timed out after 1 s/);
});

test('cancel kills the job and its grandchild within a second', async (t) => {
  const ws = workspace(t);
  const ex = new ProcessExecutor();
  const l = launch(ws, ['bash', '-c', 'sleep 100 & echo $! > child.pid; wait']);
  const out = outcomeOf(ex, l.job_run_id);
  const { pid } = ex.start(l);
  const pidFile = join(ws, 'child.pid');
  t.true(await waitFor(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8').endsWith('\n'), 5000));
  const child = Number(readFileSync(pidFile, 'utf8'));
  t.true(isPidAlive(pid));
  t.true(isPidAlive(child));
  const canceledAt = Date.now();
  ex.cancel(l.job_run_id, 'want w1 canceled');
  t.deepEqual(await out, { job_run_id: l.job_run_id, status: 'canceled', reason: 'want w1 canceled' });
  t.true(await waitFor(() => !isPidAlive(pid) && !isPidAlive(child), 1000 - (Date.now() - canceledAt)));
  t.false(ex.isRunning(l.job_run_id));
});

test('cancel escalates to SIGKILL for a group member that ignores SIGTERM', async (t) => {
  const ws = workspace(t);
  const ex = new ProcessExecutor({ killGraceMs: 200 });
  const l = launch(ws, ['bash', '-c', `trap '' TERM; echo ready; while true; do sleep 0.05; done`]);
  const out = outcomeOf(ex, l.job_run_id);
  const { pid } = ex.start(l);
  t.true(await waitFor(() => existsSync(join(l.log_dir, 'stdout.log')) && readFileSync(join(l.log_dir, 'stdout.log'), 'utf8') !== '', 5000));
  ex.cancel(l.job_run_id, 'stop');
  t.like(await out, { status: 'canceled', reason: 'stop' });
  t.false(isPidAlive(pid));
});

test('cancel of an unknown id is a no-op', (t) => {
  const ex = new ProcessExecutor();
  t.notThrows(() => ex.cancel('nope', 'x'));
  t.false(ex.isRunning('nope'));
});

test('a missing program gives a failed outcome naming it, without throwing', async (t) => {
  const ws = workspace(t);
  const ex = new ProcessExecutor();
  const l = launch(ws, ['definitely-not-a-program-xyz', 'arg']);
  const out = outcomeOf(ex, l.job_run_id);
  let result: { pid: number } | undefined;
  t.notThrows(() => (result = ex.start(l)));
  t.deepEqual(result, { pid: 0, worker: 'local' });
  t.true(ex.isRunning(l.job_run_id), 'the outcome comes asynchronously');
  const o = await out;
  t.deepEqual(o, {
    job_run_id: l.job_run_id,
    status: 'failed',
    exit_code: -1,
    signal: '',
    reason: "could not start 'definitely-not-a-program-xyz': not found; check exec in platform.json",
  });
  t.is(ex.runningCount(), 0);
  t.regex(readFileSync(join(l.log_dir, 'stderr.log'), 'utf8'), /could not start 'definitely-not-a-program-xyz'/);
});

test('a missing working directory and an empty exec are failed outcomes too', async (t) => {
  const ws = workspace(t);
  const ex = new ProcessExecutor();
  const a = launch(ws, ['bash', '-c', 'true'], { cwd: join(ws, 'nope') });
  const b = launch(ws, []);
  const outs = Promise.all([outcomeOf(ex, a.job_run_id), outcomeOf(ex, b.job_run_id)]);
  t.deepEqual(ex.start(a), { pid: 0, worker: 'local' });
  t.deepEqual(ex.start(b), { pid: 0, worker: 'local' });
  const [oa, ob] = await outs;
  t.like(oa, { status: 'failed', exit_code: -1 });
  t.regex((oa as { reason: string }).reason, /could not start 'bash': working directory .*nope' does not exist/);
  t.like(ob, { status: 'failed', exit_code: -1 });
  t.regex((ob as { reason: string }).reason, /exec is empty/);
});

test('exactly one outcome per run; shutdown cancels all and waits for them', async (t) => {
  const ws = workspace(t);
  const ex = new ProcessExecutor();
  const all = firstValueFrom(ex.outcomes$.pipe(take(3), toArray()));
  const runs = [
    launch(ws, ['sleep', '100']),
    launch(ws, ['bash', '-c', 'sleep 100 & wait']),
    launch(ws, ['bash', '-c', 'exit 0']),
  ];
  const pids = runs.map((l) => ex.start(l).pid);
  // The quick one ends by itself (however loaded the machine); the two sleepers do not.
  for (let i = 0; i < 200 && ex.runningCount() > 2; i++) await sleep(25);
  t.is(ex.runningCount(), 2);
  await ex.shutdown('server shutting down');
  t.is(ex.runningCount(), 0);
  const outcomes = await all;
  t.deepEqual(
    outcomes.map((o) => o.status).sort(),
    ['canceled', 'canceled', 'succeeded'],
  );
  for (const o of outcomes.filter((x) => x.status === 'canceled')) t.like(o, { reason: 'server shutting down' });
  for (const pid of pids) t.false(isPidAlive(pid));
  const late = launch(ws, ['true']);
  const lateOut = outcomeOf(ex, late.job_run_id);
  t.deepEqual(ex.start(late), { pid: 0, worker: 'local' });
  t.like(await lateOut, { status: 'failed' });
});

test('isPidAlive', async (t) => {
  t.true(isPidAlive(process.pid));
  t.false(isPidAlive(0));
  t.false(isPidAlive(-1));
  t.false(isPidAlive(1.5));
  const ws = workspace(t);
  const ex = new ProcessExecutor();
  const l = launch(ws, ['true']);
  const out = outcomeOf(ex, l.job_run_id);
  const { pid } = ex.start(l);
  await out;
  t.false(isPidAlive(pid));
});

test('a background process that keeps the output open does not hold the outcome forever', async (t) => {
  const ws = workspace(t);
  const ex = new ProcessExecutor({ closeGraceMs: 300 });
  const l = launch(ws, ['bash', '-c', 'sleep 30 & echo $! > child.pid; echo main done']);
  const out = outcomeOf(ex, l.job_run_id);
  const started = Date.now();
  ex.start(l);
  const o = await out;
  const child = Number(readFileSync(join(ws, 'child.pid'), 'utf8'));
  t.teardown(() => {
    try {
      process.kill(child, 'SIGKILL');
    } catch {
      /* gone */
    }
  });
  const { ended_at, ...rest } = o as { ended_at?: number };
  t.deepEqual(rest, { job_run_id: l.job_run_id, status: 'succeeded' });
  // It ended when the job exited, before the grace gave up on the output (jobs-redis-background-end).
  t.true(ended_at !== undefined && ended_at >= started && ended_at <= Date.now() - 300, `ended_at ${ended_at}`);
  t.true(Date.now() - started < 2000);
  t.is(readFileSync(join(l.log_dir, 'stdout.log'), 'utf8'), 'main done\n');
  t.regex(readFileSync(join(l.log_dir, 'stderr.log'), 'utf8'), /kept its output open/);
});
