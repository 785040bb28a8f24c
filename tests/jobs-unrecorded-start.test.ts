/**
 * A daemon killed between starting a run and recording its start leaves the run `queued` in the log while its job
 * runs (or has ended) under the launcher that outlived the daemon. The next daemon must take that job as the run's
 * (follow it, or record how it ended), not kill it and run the same attempt again.
 */
import test from 'ava';
import { spawn } from 'node:child_process';
import { mkdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { firstValueFrom } from 'rxjs';
import { SupervisedExecutor } from '../lib/executor/supervised-executor.js';
import { markSuperseded, runDirsAmong, startFromFiles } from '../lib/executor/run-files.js';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EventLog } from '../lib/events/event-log.js';
import { serveSubprocess } from './helpers/serve-subprocess.js';
import { bash, killAtTeardown, lines, makeWorkspace, pidsIn, sleep } from './helpers/jobs-fixture.js';
import { cliAgainst } from './helpers/cli-against.js';

const CRASHER = join(dirname(fileURLToPath(import.meta.url)), 'helpers', 'crash-before-start-recorded.js');

/**
 * quick/<n> ends at once; slow/<n> takes 3 s. Each notes its pid and, once done, that it finished. `detaching`: the
 * quick job leaves a child in a session of its own (setsid), which must not be taken for the run.
 */
const graphOf = (detaching: boolean) => ({
  max_concurrent_job_runs: 4,
  jobs: [
    {
      label: 'quick',
      outputs: ['quick/(?<n>\\d+)'],
      exec: bash(`echo $$ >> quick.pid; ${detaching ? 'setsid sleep 6 </dev/null >/dev/null 2>&1 & echo $! >> child.pid; ' : ''}echo done >> quick-done.txt`),
      args: ['${n}'],
    },
    { label: 'slow', outputs: ['slow/(?<n>\\d+)'], exec: bash('echo $$ >> slow.pid; touch ready; sleep 3; echo done >> slow-done.txt'), args: ['${n}'] },
  ],
});

interface RunView {
  job_run_id: string;
  status: string;
  pid: number;
  outputs: string[];
  queued_at: string;
  started_at: string | null;
  ended_at: string | null;
}

for (const detaching of [false, true]) {
test.serial(`a run whose start a killed daemon did not record is followed by the next one, not run again${detaching ? " (a child the job put in a session of its own is not taken for it)" : ''}`, async (t) => {
  const dir = makeWorkspace(t);
  writeFileSync(join(dir, 'platform.json'), JSON.stringify(graphOf(detaching)));
  killAtTeardown(t, () => [...pidsIn(dir, 'slow.pid'), ...pidsIn(dir, 'quick.pid'), ...pidsIn(dir, 'child.pid')]);
  const crasher = spawn(process.execPath, [CRASHER, dir, 'quick/1', 'slow/1'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let crashErr = '';
  crasher.stderr!.on('data', (c: Buffer) => (crashErr += c.toString()));
  const signal = await new Promise<NodeJS.Signals | null>((resolve) => crasher.once('exit', (_code, sig) => resolve(sig)));
  t.is(signal, 'SIGKILL', `the first daemon died with its runs started: ${crashErr}`);
  const log = await EventLog.open(join(dir, '.platform', 'bel'));
  const types: string[] = [];
  for await (const batch of log.replay(1)) for (const e of batch) types.push(e.type);
  await log.close();
  t.false(types.includes('job_run_started'), 'the log has the runs queued, their starts unrecorded');
  t.deepEqual(lines(dir, 'quick-done.txt'), ['done'], 'quick/1 ran to its end while no daemon was there');
  const [slowPid] = pidsIn(dir, 'slow.pid');

  const restartAt = Date.now();
  const { url } = await serveSubprocess(t, dir);
  const runsNow = async (): Promise<RunView[]> => ((await (await fetch(`${url}/api/job_runs?limit=100`)).json()) as { data: RunView[] }).data;
  let runs: RunView[] = [];
  for (let i = 0; i < 200; i++) {
    runs = await runsNow();
    if (runs.length >= 2 && runs.every((r) => ['succeeded', 'failed', 'canceled'].includes(r.status))) break;
    await sleep(50);
  }
  t.deepEqual(runs.map((r) => [r.outputs[0], r.status]).sort(), [['quick/1', 'succeeded'], ['slow/1', 'succeeded']], 'one run each, both succeeded');
  t.is(runs.find((r) => r.outputs[0] === 'slow/1')!.pid, slowPid, 'slow/1 is the job the first daemon started');
  t.deepEqual(pidsIn(dir, 'quick.pid').length, 1, 'quick/1 ran once');
  t.deepEqual(pidsIn(dir, 'slow.pid'), [slowPid], 'slow/1 ran once');
  t.deepEqual(lines(dir, 'slow-done.txt'), ['done'], 'and to its end');
  // Each started when the first daemon started it, not when the next one adopted it: slow/1 by its process's start
  // (it still ran), quick/1 by its stdout.log's birth (it had ended), where the file system keeps one.
  const at = (iso: string | null): number => (iso === null ? Number.NaN : Date.parse(iso));
  const slow = runs.find((r) => r.outputs[0] === 'slow/1')!;
  t.true(at(slow.started_at) < restartAt, `slow/1 started before the restart (${slow.started_at}; restart ${new Date(restartAt).toISOString()})`);
  t.true(at(slow.started_at) >= at(slow.queued_at), 'and not before it was queued');
  // The same start on every surface that shows it: the event (REST and `platform events`), the run (`job-runs get`).
  const startEvents = ((await (await fetch(`${url}/api/events?limit=1000`)).json()) as { data: Array<{ event_id: number; type: string; job_run_started?: { job_run_id: string; started_at: number } }> }).data.filter(
    (e) => e.type === 'job_run_started' && e.job_run_started!.job_run_id === slow.job_run_id,
  );
  t.is(startEvents.length, 1, 'one start event for slow/1');
  const startEvent = startEvents[0]!;
  t.is(startEvent.job_run_started!.started_at, at(slow.started_at), "the events API carries the run's real start (epoch ms), as the run's view shows it");
  const cli = cliAgainst(() => url);
  const listed = await cli('events', '--offset', String(startEvent.event_id - 1), '--limit', '1');
  t.is(listed.code, 0, listed.stderr);
  t.true(listed.stdout.includes(`started ${slow.started_at}, by a daemon that did not record it`), `platform events says when it started: ${listed.stdout}`);
  const listedJson = await cli('--json', 'events', '--offset', String(startEvent.event_id - 1), '--limit', '1');
  t.is((JSON.parse(listedJson.stdout) as { data: Array<{ job_run_started: { started_at: number } }> }).data[0]!.job_run_started.started_at, at(slow.started_at), 'platform events --json');
  const got = await cli('--json', 'job-runs', 'get', slow.job_run_id);
  t.is((JSON.parse(got.stdout) as RunView).started_at, slow.started_at, 'platform job-runs get --json');
  const quick = runs.find((r) => r.outputs[0] === 'quick/1')!;
  const quickLog = join(dir, '.platform', 'logs', quick.job_run_id, 'stdout.log');
  if (statSync(quickLog).birthtimeMs > 0) {
    t.true(at(quick.started_at) < restartAt, `quick/1 started before the restart (${quick.started_at})`);
    t.true(at(quick.started_at) <= at(quick.ended_at) && at(quick.ended_at) < restartAt, `and ended before it too (${quick.ended_at})`);
  }
});
}

test('a status beside the mark of a start killed to be started again is not adopted; one without it is, as the run\'s end', async (t) => {
  const dir = makeWorkspace(t);
  const executor = new SupervisedExecutor({ workspaceRoot: dir, pollMs: 20 });
  t.teardown(() => executor.shutdown('test over'));
  const launchOf = (id: string) => {
    const log_dir = join(dir, '.platform', 'logs', id);
    mkdirSync(log_dir, { recursive: true });
    return { job_run_id: id, argv: ['/bin/true'], env: {}, outputs: [`o/${id}`], cwd: dir, stdin: '{}', log_dir, timeout_seconds: 0 };
  };
  // A pid no process has: the status's job is gone, as after any end.
  const gone = 4_194_000;
  const killed = launchOf('r-killed');
  writeFileSync(join(killed.log_dir, 'status.json'), `{"exit_code":137,"pid":${gone}}\n`);
  markSuperseded(killed.log_dir);
  const ended = launchOf('r-ended');
  writeFileSync(join(ended.log_dir, 'status.json'), `{"exit_code":0,"pid":${gone}}\n`);
  const outcome = firstValueFrom(executor.outcomes$);
  const launches = new Map([killed, ended].map((l) => [l.job_run_id, l]));
  // A queued run never handed to a launcher has no directory: never looked at.
  const asked: string[] = [];
  const adopted = executor.adoptStarted(new Set([...launches.keys(), 'r-never-launched']), (id) => {
    asked.push(id);
    return launches.get(id)!;
  });
  t.deepEqual(asked.sort(), ['r-ended', 'r-killed']);
  // Its start unknown (no stdout.log of its own): the event's time.
  t.deepEqual([...adopted], [['r-ended', { pid: gone, started_at: 0 }]]);
  t.like(await outcome, { job_run_id: 'r-ended', status: 'succeeded' });
});

test('the runs with a directory are found by a look each among a few queued runs, by one listing among many: the same', (t) => {
  const dir = makeWorkspace(t);
  for (const id of ['r-2', 'r-4000', 'r-other']) mkdirSync(join(dir, '.platform', 'logs', id), { recursive: true });
  const few = new Set(['r-1', 'r-2', 'r-3']);
  const many = new Set(Array.from({ length: 5000 }, (_, i) => `r-${i + 1}`));
  t.deepEqual(runDirsAmong(dir, few), ['r-2']);
  t.deepEqual(runDirsAmong(dir, many).sort(), ['r-2', 'r-4000']);
});

test("an ended run's start is its stdout.log's birth only when that file is this attempt's (born after its stdin.json, not after its status)", (t) => {
  const dir = join(makeWorkspace(t), '.platform', 'logs', 'r-1');
  mkdirSync(dir, { recursive: true });
  const now = Date.now() / 1000;
  writeFileSync(join(dir, 'stdin.json'), '{}');
  utimesSync(join(dir, 'stdin.json'), now - 60, now - 60);
  writeFileSync(join(dir, 'stdout.log'), '');
  const born = statSync(join(dir, 'stdout.log')).birthtimeMs;
  if (born <= 0) return t.pass('this file system keeps no birth times');
  t.is(startFromFiles(dir), Math.floor(born), 'born after the hand-over: the start');
  writeFileSync(join(dir, 'status.json'), '{"exit_code":0,"pid":4194000}\n');
  utimesSync(join(dir, 'status.json'), now - 30, now - 30);
  t.is(startFromFiles(dir), 0, 'born after the status: not this attempt\'s start');
  utimesSync(join(dir, 'status.json'), now + 60, now + 60);
  utimesSync(join(dir, 'stdin.json'), now + 30, now + 30);
  t.is(startFromFiles(dir), 0, 'born before this attempt was handed over: an earlier attempt\'s file');

  // The native launcher writes no stdin.json (the config goes on a memfd): the directory's birth is the hand-over.
  const fresh = join(dirname(dir), 'r-2');
  mkdirSync(fresh);
  writeFileSync(join(fresh, 'stdout.log'), '');
  t.is(startFromFiles(fresh), Math.floor(statSync(join(fresh, 'stdout.log')).birthtimeMs), 'born in a directory of its own: the start');
});
