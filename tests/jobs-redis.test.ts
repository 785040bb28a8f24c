/**
 * The orchestrator against the BullMQ (Redis) adapter of the executor port, with a real redis-server and real
 * `platform worker` processes: runs execute on the workers and name them, their output reaches the run's log
 * files, a cancel reaches the remote process group within a second, a worker killed with -9 loses its run by its
 * lease and the run is rebuilt on another worker (never both at once), a restarted orchestrator re-attaches to a
 * remote run still going, and a Redis killed and restarted (AOF) loses nothing acknowledged.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bash, isPidAlive, killAtTeardown, makeWorkspace, openPlatform, pidsIn, poll, runsFor, sleep, untilJobWrote, waitFor, waitForWant, want } from './helpers/jobs-fixture.js';
import { startRedis } from './helpers/redis-server.js';
import { HOLD_JOB, holdRunningOnW1, redisExecutor, redisRelay, redisTests, startWorker } from './helpers/redis-fixture.js';
import { runCli } from './helpers/server-fixture.js';
import { readServerInfo } from '../lib/client/server-info.js';
import { Queue } from 'bullmq';
import { bullConnection, DEFAULT_QUEUE, queueJobId } from '../lib/executor/redis/redis-names.js';

const graph = {
  max_concurrent_job_runs: 4,
  jobs: [
    { label: 'raw', outputs: ['raw/(?<n>\\d+)'], args: ['${n}'], exec: bash('echo "raw $1"; echo "note $1" >&2; touch "raw-$1"') },
    { label: 'slowraw', outputs: ['slowraw/(?<n>\\d+)'], args: ['${n}'], exec: bash('echo $$ >> "slowraw-$1.pid"; sleep 1.5') },
    {
      label: 'top',
      outputs: ['top/(?<n>\\d+)'],
      args: ['${n}'],
      inputs: [{ partition_ref: 'slowraw/${n}', dep_type: 'MATERIALIZE' }],
      exec: bash('echo $$ >> "top-$1.pid"; sleep 1'),
    },
    { label: 'clean', outputs: ['clean/(?<n>\\d+)'], args: ['${n}'], inputs: [{ partition_ref: 'raw/${n}', dep_type: 'MATERIALIZE' }], exec: bash('echo "clean $1"') },
    HOLD_JOB,
    // Hangs the first time (until its worker dies); the second time it says whether the first is still alive.
    {
      label: 'once',
      outputs: ['once/(?<n>\\d+)'],
      // (A killed process nobody reaped yet is a zombie: it runs no more.)
      exec: bash(
        'if [ -e once.pid ]; then s=$(awk \'{print $3}\' "/proc/$(cat once.pid)/stat" 2>/dev/null); case "$s" in ""|Z) echo alone >> once.txt;; *) echo "overlap $s" >> once.txt;; esac; exit 0; fi; echo $$ > once.pid; sleep 100',
      ),
    },
    { label: 'slowish', outputs: ['slowish/(?<n>\\d+)'], exec: bash('echo begin; sleep 2; echo end') },
  ],
};

const CLI = fileURLToPath(new URL('../../bin/platform', import.meta.url));
const redisTest = redisTests();

const executor = redisExecutor;

redisTest("runs execute on the workers, name them, and their output is in the run's log files", async (t) => {
  const redis = await startRedis(t);
  const dir = makeWorkspace(t);
  const [d1, d2] = [makeWorkspace(t), makeWorkspace(t)];
  const w1 = startWorker(t, dir, redis.url, 'w1', ['--workdir', d1]);
  const w2 = startWorker(t, dir, redis.url, 'w2', ['--workdir', d2]);
  await Promise.all([w1.waitForStdout(/takes runs/), w2.waitForStdout(/takes runs/)]);
  const platform = await openPlatform(t, dir, graph, { executor: executor(redis.url) });
  const s = await waitForWant(platform, await want(platform, ['clean/1', 'clean/2', 'clean/3']), ['successful'], 30_000);
  const all = ['raw/1', 'raw/2', 'raw/3', 'clean/1', 'clean/2', 'clean/3'].map((ref) => runsFor(s, ref)[0]!);
  t.deepEqual(all.map((r) => r.status), Array(6).fill('succeeded'));
  for (const r of all) t.true(['w1', 'w2'].includes(r.worker), `${r.job_run_id} ran on ${r.worker}`);
  for (const n of [1, 2, 3]) {
    const r = runsFor(s, `raw/${n}`)[0]!;
    t.true(existsSync(join(r.worker === 'w1' ? d1 : d2, `raw-${n}`)), `raw/${n} ran in ${r.worker}'s working directory`);
    t.false(existsSync(join(dir, `raw-${n}`)));
  }
  const raw2 = runsFor(s, 'raw/2')[0]!;
  t.true(raw2.pid > 0, 'the pid on the worker is recorded');
  const logs = join(dir, '.platform', 'logs', raw2.job_run_id);
  t.is(readFileSync(join(logs, 'stdout.log'), 'utf8'), 'raw 2\n');
  t.is(readFileSync(join(logs, 'stderr.log'), 'utf8'), 'note 2\n');
});

redisTest('a cancel reaches the remote process group within a second', async (t) => {
  const redis = await startRedis(t);
  const { platform, want: w, child } = await holdRunningOnW1(t, redis.url, redis.url, graph);
  const began = Date.now();
  await platform.cancelWant(w);
  t.true(await poll(() => !isPidAlive(child), 1500), 'the grandchild is gone');
  t.true(Date.now() - began < 1500, `gone after ${Date.now() - began} ms`);
  const s = await waitFor(platform, (x) => runsFor(x, 'hold/1')[0]?.status === 'canceled', 'the run canceled', 10_000);
  t.regex(runsFor(s, 'hold/1')[0]!.reason, /canceled/);
});

/** once/1 (which hangs the first time) running on worker w1, for a platform on a Redis of its own. */
async function onceRunningOnW1(t: Parameters<typeof runCli>[0]) {
  const redis = await startRedis(t);
  const dir = makeWorkspace(t);
  killAtTeardown(t, () => pidsIn(dir, 'once.pid'));
  const w1 = startWorker(t, dir, redis.url, 'w1');
  await w1.waitForStdout(/takes runs/);
  const platform = await openPlatform(t, dir, graph, { executor: executor(redis.url) });
  const w = await want(platform, ['once/1']);
  await waitFor(platform, (s) => runsFor(s, 'once/1')[0]?.worker === 'w1', 'once/1 taken by w1', 15_000);
  t.true(await untilJobWrote(() => pidsIn(dir, 'once.pid').length > 0, () => runsFor(platform.state(), 'once/1')[0]?.pid ?? 0), 'the job runs');
  return { redis, dir, w1, platform, w };
}

redisTest('a worker killed with -9: its run is lost by its lease and rebuilt on another worker, never both at once', async (t) => {
  const { redis, dir, w1, platform, w } = await onceRunningOnW1(t);
  const w2 = startWorker(t, dir, redis.url, 'w2');
  await w2.waitForStdout(/takes runs/);
  const killedAt = Date.now();
  w1.child.kill('SIGKILL');
  const s = await waitForWant(platform, w, ['successful'], 30_000);
  const attempts = runsFor(s, 'once/1');
  t.deepEqual(attempts.map((r) => r.status), ['canceled', 'succeeded']);
  t.regex(attempts[0]!.reason, /lost: .*lease/);
  t.is(attempts[1]!.worker, 'w2');
  t.deepEqual(readFileSync(join(dir, 'once.txt'), 'utf8').trim().split('\n'), ['alone'], 'the first job was gone before the second ran');
  t.log(`rebuilt on w2 ${Date.now() - killedAt} ms after the kill (lease 1 s)`);
});

redisTest('a worker killed with -9 and no worker left: its run is recorded lost all the same, and rebuilt when a worker comes', async (t) => {
  const { redis, dir, w1, platform, w } = await onceRunningOnW1(t);
  w1.child.kill('SIGKILL');
  // BullMQ moves a stalled job back to its wait list to be failed by the next worker that takes it: there is none.
  const lost = await waitFor(platform, (s) => runsFor(s, 'once/1')[0]?.status === 'canceled', 'the run recorded lost with no worker left', 20_000);
  t.regex(runsFor(lost, 'once/1')[0]!.reason, /lost: .*lease/);
  const w2 = startWorker(t, dir, redis.url, 'w2');
  await w2.waitForStdout(/takes runs/);
  const s = await waitForWant(platform, w, ['successful'], 30_000);
  const attempts = runsFor(s, 'once/1');
  t.deepEqual(attempts.map((r) => r.status), ['canceled', 'succeeded']);
  t.is(attempts[1]!.worker, 'w2');
  t.deepEqual(readFileSync(join(dir, 'once.txt'), 'utf8').trim().split('\n'), ['alone']);
});

/** A TCP relay to Redis whose cut() leaves every connection through it open and silent, as a network partition does. */
async function startCuttableRelay(t: Parameters<typeof runCli>[0], redisUrl: string): Promise<{ url: string; cut: () => void }> {
  let cut = false;
  const relay = await redisRelay(t, redisUrl, (client, upstream) => {
    client.on('error', () => {});
    if (cut) return void client.pause();
    const up = upstream();
    client.pipe(up);
    up.pipe(client);
  });
  return {
    url: relay.url,
    cut: () => {
      cut = true;
      for (const s of relay.sockets) {
        s.unpipe();
        s.pause();
      }
    },
  };
}

redisTest('a worker cut off from Redis stops its run before its lease ends: rebuilt on another worker, never both at once', async (t) => {
  const redis = await startRedis(t);
  const relay = await startCuttableRelay(t, redis.url);
  const dir = makeWorkspace(t);
  killAtTeardown(t, () => pidsIn(dir, 'once.pid'));
  const w1 = startWorker(t, dir, relay.url, 'w1');
  await w1.waitForStdout(/takes runs/);
  const platform = await openPlatform(t, dir, graph, { executor: executor(redis.url) });
  const w = await want(platform, ['once/1']);
  await waitFor(platform, (s) => runsFor(s, 'once/1')[0]?.worker === 'w1', 'once/1 taken by w1', 15_000);
  t.true(await untilJobWrote(() => pidsIn(dir, 'once.pid').length > 0, () => runsFor(platform.state(), 'once/1')[0]?.pid ?? 0), 'the job runs');
  const w2 = startWorker(t, dir, redis.url, 'w2');
  await w2.waitForStdout(/takes runs/);
  relay.cut();
  const s = await waitForWant(platform, w, ['successful'], 30_000);
  const attempts = runsFor(s, 'once/1');
  t.deepEqual(attempts.map((r) => r.status), ['canceled', 'succeeded']);
  t.is(attempts[1]!.worker, 'w2');
  t.deepEqual(readFileSync(join(dir, 'once.txt'), 'utf8').trim().split('\n'), ['alone'], 'the cut-off worker stopped its job before the second ran');
});

/** slowish/1 taken by worker w1, and the orchestrator that handed it over closed: the run goes on without it. */
async function runLeftOnWorker(t: Parameters<typeof runCli>[0]) {
  const redis = await startRedis(t);
  const dir = makeWorkspace(t);
  const w1 = startWorker(t, dir, redis.url, 'w1');
  await w1.waitForStdout(/takes runs/);
  const first = await openPlatform(t, dir, graph, { executor: executor(redis.url), cancelRunsOnClose: false });
  const w = await want(first, ['slowish/1']);
  const running = await waitFor(first, (s) => runsFor(s, 'slowish/1')[0]?.worker === 'w1', 'slowish/1 on w1', 15_000);
  const run = runsFor(running, 'slowish/1')[0]!;
  await first.close();
  return { redis, dir, w, run };
}

redisTest('a restarted orchestrator re-attaches to a remote run still going; it is recorded once, with all its output', async (t) => {
  const { redis, dir, w, run } = await runLeftOnWorker(t);
  const second = await openPlatform(t, dir, graph, { executor: executor(redis.url) });
  const s = await waitForWant(second, w, ['successful'], 30_000);
  t.deepEqual(runsFor(s, 'slowish/1').map((r) => [r.job_run_id, r.status, r.worker]), [[run.job_run_id, 'succeeded', 'w1']]);
  t.is(readFileSync(join(dir, '.platform', 'logs', run.job_run_id, 'stdout.log'), 'utf8'), 'begin\nend\n');
});

redisTest('a remote run that ended while no orchestrator ran ends when its worker finished it, not when the next one found out', async (t) => {
  const { redis, dir, w, run: left } = await runLeftOnWorker(t);
  // Until its worker finished it (the job takes 2 s, more on a loaded machine), not a fixed 4 s.
  const queue = new Queue(DEFAULT_QUEUE, { connection: bullConnection(redis.url) });
  t.teardown(() => queue.close());
  const jobId = queueJobId(dir, left.job_run_id);
  t.true(await poll(async () => (await queue.getJob(jobId))?.finishedOn !== undefined, 30_000, 50), 'the worker finished the run');
  const reopenedAt = Date.now();
  const second = await openPlatform(t, dir, graph, { executor: executor(redis.url) });
  const s = await waitForWant(second, w, ['successful'], 30_000);
  const run = runsFor(s, 'slowish/1')[0]!;
  t.true(run.ended_at! < reopenedAt, `ended ${reopenedAt - run.ended_at!} ms before the second orchestrator opened`);
  // Its start is when this daemon heard the worker took it (its clock), its end the worker's: only their order holds.
  t.true(run.ended_at! > run.started_at!, 'after it started');
});

redisTest('Redis killed and restarted mid-build loses nothing acknowledged: the build completes', async (t) => {
  const redis = await startRedis(t);
  const dir = makeWorkspace(t);
  // A lease longer than the outage (as in production: 30 s by default), so the runs are not given up for lost.
  const w1 = startWorker(t, dir, redis.url, 'w1', ['--concurrency', '2', '--lease', '5s']);
  await w1.waitForStdout(/takes runs/);
  const platform = await openPlatform(t, dir, graph, { executor: executor(redis.url) });
  const w = await want(platform, ['slowish/1', 'slowish/2']);
  await waitFor(platform, (s) => ['slowish/1', 'slowish/2'].every((ref) => runsFor(s, ref)[0]?.worker === 'w1'), 'both on w1', 15_000);
  await redis.restart();
  const s = await waitForWant(platform, w, ['successful'], 40_000);
  t.deepEqual(['slowish/1', 'slowish/2'].map((ref) => runsFor(s, ref).map((r) => r.status)), [['succeeded'], ['succeeded']], JSON.stringify(['slowish/1', 'slowish/2'].map((ref) => runsFor(s, ref).map((r) => r.reason))));
});

redisTest('the daemon killed with -9 mid-build and started again: remote runs re-attached, none restarted, the build completes', async (t) => {
  const redis = await startRedis(t);
  const dir = makeWorkspace(t);
  writeFileSync(join(dir, 'platform.json'), JSON.stringify({ ...graph, executor: redis.url }));
  const w1 = startWorker(t, dir, redis.url, 'w1', ['--concurrency', '2']);
  const w2 = startWorker(t, dir, redis.url, 'w2', ['--concurrency', '2']);
  await Promise.all([w1.waitForStdout(/takes runs/), w2.waitForStdout(/takes runs/)]);
  const serve = () => {
    const child = spawn(process.execPath, [CLI, '-C', dir, 'serve', '--port', '0', '--idle-timeout', '1h'], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    t.teardown(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    });
    return { child, exited, err: () => err };
  };
  const first = serve();
  t.true(await poll(() => readServerInfo(dir)?.pid === first.child.pid, 10_000, 50), `serve did not start: ${first.err()}`);
  let url = `http://127.0.0.1:${readServerInfo(dir)!.port}`;
  const res = await fetch(`${url}/api/wants`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ partitions: ['top/1', 'top/2', 'top/3'] }) });
  const wantId = ((await res.json()) as { want_id: string }).want_id;
  t.true(await poll(() => [1, 2, 3].filter((n) => pidsIn(dir, `slowraw-${n}.pid`).length > 0).length >= 2, 15_000, 20), 'slow runs started on the workers');
  first.child.kill('SIGKILL');
  await first.exited;
  const second = serve();
  t.true(await poll(() => readServerInfo(dir)?.pid === second.child.pid, 10_000, 50), `serve did not start again: ${second.err()}`);
  url = `http://127.0.0.1:${readServerInfo(dir)!.port}`;
  let status = '';
  for (let i = 0; i < 300 && status !== 'successful'; i++) {
    status = ((await (await fetch(`${url}/api/wants/${wantId}`)).json()) as { status: string }).status;
    if (status !== 'successful') await new Promise((r) => setTimeout(r, 100));
  }
  t.is(status, 'successful', second.err());
  const runs = ((await (await fetch(`${url}/api/job_runs?limit=100`)).json()) as { data: Array<{ outputs: string[]; status: string; worker: string }> }).data;
  t.deepEqual(runs.map((r) => r.status).sort(), Array(6).fill('succeeded'), 'one run a partition: none restarted');
  for (const r of runs) t.true(['w1', 'w2'].includes(r.worker), `${r.outputs[0]} ran on ${r.worker}`);
  for (const n of [1, 2, 3]) t.is(pidsIn(dir, `slowraw-${n}.pid`).length, 1, `slowraw/${n} ran once`);
});

redisTest('status, doctor and job-runs say when runs wait: no worker takes from the queue, or Redis does not answer', async (t) => {
  const redis = await startRedis(t);
  const dir = makeWorkspace(t);
  writeFileSync(join(dir, 'platform.json'), JSON.stringify({ ...graph, executor: redis.url }));
  const cli = async (...args: string[]) => {
    const p = runCli(t, ['-C', dir, ...args], dir, { PLATFORM_IDLE_TIMEOUT: '1h' });
    const { code } = await p.exited;
    return { code, stdout: p.stdout(), stderr: p.stderr() };
  };
  t.teardown(() => void spawnSync(process.execPath, [CLI, '-C', dir, 'stop', '--cancel-runs'], { stdio: 'ignore' }));
  type Health = { kind: string; where: string; reachable: boolean; workers: number | null; problem: string | null };
  const health = async (): Promise<Health> => (JSON.parse((await cli('--json', 'status')).stdout) as { executor: Health }).executor;
  const healthUntil = async (pred: (h: Health) => boolean, what: string): Promise<Health> => {
    let h = await health();
    for (let i = 0; i < 100 && !pred(h); i++) {
      await sleep(200);
      h = await health();
    }
    t.true(pred(h), `${what}: ${JSON.stringify(h)}`);
    return h;
  };

  t.is((await cli('build', '--detach', 'raw/1')).code, 0);
  const none = await healthUntil((h) => h.reachable && h.workers === 0, 'no worker');
  t.is(none.kind, 'redis');
  t.regex(none.where, new RegExp(`127\\.0\\.0\\.1:${redis.port} queue `));
  t.regex(none.problem ?? '', /no platform worker takes runs from queue .*'platform worker --redis redis:\/\/127\.0\.0\.1:\d+'/);
  t.regex((await cli('status')).stdout, /executor\s+redis \(.* 0 workers\)\n\s+no platform worker takes runs/);
  t.regex((await cli('job-runs', 'list')).stdout, /running\s+│.*waiting for a worker \(queue /);
  t.regex((await cli('job-runs', 'get', 'r-1')).stdout, /worker\s+│?\s*waiting for a worker \(queue /);
  // Not started: its recorded start is only when it was handed to the queue (the API says so), and Started says
  // it waits rather than give that time.
  const waiting = JSON.parse((await cli('--json', 'job-runs', 'get', 'r-1')).stdout) as { started_at: string | null; worker: string };
  t.regex(waiting.worker, /^redis:/);
  t.truthy(waiting.started_at, 'handed to the queue at');
  const row = (out: string) => out.split('\n').find((l) => l.replace(/^│?\s*/, '').startsWith('r-1 ')) ?? '';
  t.regex(row((await cli('job-runs', 'list')).stdout), /running\s+│\s+1\s+│\s+waiting\s+│/, 'Started: waiting, no time');
  t.regex((await cli('job-runs', 'get', 'r-1')).stdout, /started\s+│?\s*not yet: waiting for a worker since \d{4}-/);
  type Finding = { check: string; status: string; detail: string };
  const checks = async () => (JSON.parse((await cli('--json', 'doctor')).stdout) as { checks: Finding[] }).checks;
  const list = await checks();
  const executorFinding = list.find((f) => f.check === 'executor');
  t.is(executorFinding?.status, 'warn', JSON.stringify(list));
  t.regex(list.find((f) => f.check === 'job runs')?.detail ?? '', /1 handed to a queue, no worker has taken yet/);

  // A worker comes: the run is taken and the warning goes.
  const w = startWorker(t, dir, redis.url, 'w1');
  await w.waitForStdout(/takes runs/);
  const one = await healthUntil((h) => (h.workers ?? 0) >= 1, 'a worker');
  t.is(one.problem, null);
  // Taken and run: Started gives the time the worker took it.
  let taken = { started_at: '', status: '' };
  for (let i = 0; i < 100 && taken.status !== 'succeeded'; i++) {
    taken = JSON.parse((await cli('--json', 'job-runs', 'get', 'r-1')).stdout) as typeof taken;
    if (taken.status !== 'succeeded') await sleep(100);
  }
  t.is(taken.status, 'succeeded');
  t.not(taken.started_at, waiting.started_at, 'started when the worker took it, not when it was handed over');
  t.regex(row((await cli('job-runs', 'list')).stdout), /succeeded\s+│\s+1\s+│\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\s+│/);

  // Redis goes away: said, as an error of doctor's.
  await redis.stop();
  const down = await healthUntil((h) => !h.reachable, 'Redis down');
  t.regex(down.problem ?? '', /Redis at redis:\/\/127\.0\.0\.1:\d+ does not answer/);
  const listDown = await checks();
  t.is(listDown.find((f) => f.check === 'executor')?.status, 'error');
  await redis.restart();
  await healthUntil((h) => h.reachable, 'Redis back');
});
