/**
 * The orchestrator loop over real parts (LevelDB log, state store, command queue, process executor, graph task
 * source): one step takes every pending command and writes them in one batch before replying; a step that throws
 * is logged and the loop goes on; a stop lets no new step start.
 */
import test, { type ExecutionContext } from 'ava';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { EventLog } from '../lib/events/event-log.js';
import type { JobLaunch } from '../lib/executor/job-launch.js';
import { ProcessExecutor } from '../lib/executor/process-executor.js';
import { SupervisedExecutor } from '../lib/executor/supervised-executor.js';
import { WorkspaceGraph } from '../lib/graph/workspace-graph.js';
import { parseGraph } from '../lib/graph/parse-graph.js';
import { CommandQueue, QueueClosedError } from '../lib/orchestrator/command-queue.js';
import type { CreateWantRequest } from '../lib/orchestrator/command.js';
import { GraphTaskSource } from '../lib/orchestrator/graph-task-source.js';
import { Orchestrator } from '../lib/orchestrator/orchestrator.js';
import type { TaskSource } from '../lib/orchestrator/task-source.js';
import { StateStore } from '../lib/state/state-store.js';
import { Platform } from '../lib/platform.js';
import { HoldableScheduler } from './helpers/holdable-scheduler.js';
import { makeWorkspace, sleep, TEST_GRAPH, waitFor } from './helpers/server-fixture.js';

const want = (ref: string, comment = ''): CreateWantRequest => ({ partitions: [ref], comment, data_timestamp: 0, ttl_seconds: 0, sla_seconds: 0 });

test('one step takes every pending command, appends their events in one batch, and replies only once they are durable', async (t) => {
  const dir = await makeWorkspace(t);
  const loop = new HoldableScheduler();
  const platform = await Platform.open(dir, { graph: parseGraph(TEST_GRAPH, 'test'), tickMs: 60_000, scheduler: loop });
  t.teardown(() => platform.close());
  const release = loop.hold();
  const replies = Array.from({ length: 5 }, (_, i) => platform.createWant(want('slow/batch', `c${i}`)));
  await waitFor('five commands queued', () => platform.queue.size === 5);
  const latestBefore = platform.log.latestId();
  // What the log holds at the moment the first caller hears back.
  let latestAtFirstReply = -1;
  void replies[0]!.then(() => (latestAtFirstReply = platform.log.latestId()));
  release();
  const results = await Promise.all(replies);
  t.true(latestAtFirstReply >= latestBefore + 5, `the whole batch was written before the first reply (${latestAtFirstReply})`);

  const ids: string[] = [];
  for (const r of results) {
    t.true(r.ok);
    if (!r.ok) continue;
    t.is(r.status, 201);
    ids.push(r.want_id);
    // The reply's state already holds the want, and the log holds its event: durable before the reply.
    t.truthy(r.state.wants.get(r.want_id));
  }
  t.is(new Set(ids).size, 5);
  const events = await platform.log.list(latestBefore, 100);
  const created = events.filter((e) => e.type === 'want_created');
  t.is(created.length, 5);
  t.deepEqual(
    created.map((e) => e.event_id),
    Array.from({ length: 5 }, (_, k) => latestBefore + 1 + k),
    'consecutive ids: one batch',
  );
  t.is(new Set(created.map((e) => e.timestamp)).size, 1, 'one batch, one timestamp');
  t.deepEqual(
    created.map((e) => (e.type === 'want_created' ? e.want_created.comment : '')),
    ['c0', 'c1', 'c2', 'c3', 'c4'],
    'taken in the order offered',
  );
  // The first want queued the one run; the others joined it in the same step.
  const queued = events.filter((e) => e.type === 'job_run_queued');
  t.is(queued.length, 1);
});

/**
 * An orchestrator over real parts whose task source (the real one) throws in the next `faults.count` steps, when the
 * planner reads the policy: a fault in the middle of a step.
 */
async function flakyOrchestrator(t: ExecutionContext, dir: string, graphJson: unknown, tickMs: number) {
  const real = new GraphTaskSource(await WorkspaceGraph.open(dir, parseGraph(graphJson, 'test')));
  const faults = { count: 0, message: 'injected fault' };
  const flaky: TaskSource = {
    get policy() {
      if (faults.count > 0) {
        faults.count--;
        throw new Error(faults.message);
      }
      return real.policy;
    },
    resolve: (refs) => real.resolve(refs),
  };
  const log = await EventLog.open(join(dir, '.platform', 'bel'));
  t.teardown(() => log.close());
  const store = await StateStore.open(log);
  t.teardown(() => store.close());
  const queue = new CommandQueue(100);
  const errors: string[] = [];
  const orchestrator = new Orchestrator({ log, store, queue, executor: new ProcessExecutor(), tasks: flaky, workspaceRoot: dir, tickMs, logError: (m) => errors.push(m) });
  t.teardown(() => orchestrator.shutdown());
  // Started by the test, so that what it offers right after is in the first step's batch.
  return { log, store, queue, errors, faults, start: () => orchestrator.start() };
}

test('a step that throws is logged, its callers get the error, and the loop goes on', async (t) => {
  const dir = await makeWorkspace(t);
  const { log, store, queue, errors, faults, start } = await flakyOrchestrator(t, dir, TEST_GRAPH, 50);
  faults.count = 1;
  faults.message = 'injected resolver fault';
  start();
  const first = queue.offer({ kind: 'create_want', request: want('ok/one') });
  await t.throwsAsync(first, { message: /injected resolver fault/ });
  await waitFor('the fault to be logged', () => errors.length > 0);
  t.regex(errors[0]!, /step failed, continuing/);
  t.is(log.latestId(), 0, 'nothing of the failed step was recorded');

  const second = await queue.offer({ kind: 'create_want', request: want('ok/two') });
  t.true(second.ok);
  if (!second.ok) return;
  await waitFor('the second want to be built', () => store.current().wants.get(second.want_id)?.status === 'successful');
  t.is(store.current().wants.size, 1);
});

test('closing lets no new step start: a command still waiting is refused, nothing more is written', async (t) => {
  const dir = await makeWorkspace(t);
  const loop = new HoldableScheduler();
  const platform = await Platform.open(dir, { graph: parseGraph(TEST_GRAPH, 'test'), tickMs: 60_000, scheduler: loop });
  const done = await platform.createWant(want('ok/before-close'));
  t.true(done.ok);
  const release = loop.hold();
  const waiting = platform.createWant(want('ok/never'));
  await waitFor('the command to be queued', () => platform.queue.size === 1);
  const latest = platform.log.latestId();
  const closing = platform.close();
  release();
  await closing;
  await t.throwsAsync(waiting, { instanceOf: QueueClosedError });
  await t.throwsAsync(platform.createWant(want('ok/after')), { instanceOf: QueueClosedError, message: /closed \(or closing\).*open the workspace again \(Platform\.open\)/ });

  const reopened = await Platform.open(dir, { graph: parseGraph(TEST_GRAPH, 'test'), tickMs: 60_000 });
  t.teardown(() => reopened.close());
  const wants = [...reopened.state().wants.values()].map((w) => w.partitions[0]);
  t.false(wants.includes('ok/never'), 'the refused command left no trace');
  t.true(wants.includes('ok/before-close'));
  // Whatever the final step recorded (runs that ended), no want was created after the close began.
  const after = await reopened.log.list(latest, 1000);
  t.false(after.some((e) => e.type === 'want_created'));
});

test('a step that fails loses no job-run news: the started and exited of a run are recorded once the retry succeeds', async (t) => {
  const dir = await makeWorkspace(t);
  const graphJson = { jobs: [{ label: 'gate', outputs: ['gate/(?<n>\\d+)'], exec: ['bash', '-c', 'while [ ! -f release ]; do sleep 0.02; done', 'gate'] }] };
  const { log, store, queue, errors, faults, start } = await flakyOrchestrator(t, dir, graphJson, 60_000);
  start();
  const created = await queue.offer({ kind: 'create_want', request: want('gate/1') });
  if (!created.ok) return t.fail(created.error);
  // The step that launched the run has replied; the next one, which records the start, fails twice.
  faults.count = 2;
  const run = await waitFor('the run to be recorded running', () => [...store.current().job_runs.values()].find((r) => r.status === 'running'));
  t.is(errors.length, 2);
  t.true(run.pid > 0, 'the pid from the failed steps was kept');
  // Now the step that records its exit fails once.
  faults.count = 1;
  writeFileSync(join(dir, 'release'), '');
  await waitFor('the want to be built', () => store.current().wants.get(created.want_id)?.status === 'successful');
  t.is(errors.length, 3);
  t.true(errors.every((e) => /step failed, continuing: Error: injected fault/.test(e)));
  const events = await log.list(0, 1000);
  t.is(events.filter((e) => e.type === 'job_run_started').length, 1, 'started once');
  t.is(events.filter((e) => e.type === 'job_run_succeeded').length, 1, 'exited once');
  t.is(store.current().job_runs.size, 1, 'nothing was run twice');
});

test("a step's follow-up looks only at what the step's own scheduling changed, not again at what it just looked at", async (t) => {
  const dir = await makeWorkspace(t);
  const graph = { jobs: [{ label: 'raw', outputs: ['raw/(?<n>\\d+)'], exec: ['true'] }] };
  const platform = await Platform.open(dir, { graph: parseGraph(graph, 'test'), tickMs: 60_000, executor: 'supervised', cancelRunsOnClose: true });
  t.teardown(() => platform.close());
  const request = { partitions: ['raw/1'], comment: '', data_timestamp: 0, ttl_seconds: 0, sla_seconds: 0 };
  await sleep(100);
  const steps: number[] = [];
  const counting = platform.orchestrator.steps$.subscribe((s) => steps.push(s.events));
  t.teardown(() => counting.unsubscribe());
  const first = await platform.createWant(request);
  if (!first.ok) return t.fail(first.error);
  await waitFor('raw/1 to be built', () => platform.state().wants.get(first.want_id)?.status === 'successful');
  await sleep(100);
  // Created and queued, started, ended: every step of the build wrote something (the queued run woke nobody).
  t.false(steps.includes(0), `steps of the build, by events written: ${steps.join(' ')}`);
  steps.length = 0;
  // Each want for the live partition is created, looked at and found successful in the step that takes it.
  for (let i = 0; i < 10; i++) {
    const r = await platform.createWant(request);
    if (!r.ok) return t.fail(r.error);
    t.is(platform.state().wants.get(r.want_id)?.status, 'successful');
  }
  await sleep(200);
  t.is(steps.length, 10, `one step a want, no follow-up that looks at it again (${steps.length} steps: ${steps.join(' ')} events)`);
});

test("a run queued by an earlier step starts while the step that freed its slot is written; one queued by that step only once it is durable", async (t) => {
  const dir = await makeWorkspace(t);
  const graph = {
    max_concurrent_job_runs: 1,
    jobs: [
      { label: 'p', outputs: ['p/(?<n>\\d+)'], exec: ['true'] },
      { label: 'q', outputs: ['q/(?<n>\\d+)'], inputs: [{ partition_ref: 'p/${n}', dep_type: 'MATERIALIZE' }], exec: ['true'] },
    ],
  };
  const tasks = new GraphTaskSource(await WorkspaceGraph.open(dir, parseGraph(graph, 'test')));
  const log = await EventLog.open(join(dir, '.platform', 'bel'));
  t.teardown(() => log.close());
  const store = await StateStore.open(log);
  t.teardown(() => store.close());
  const real = new SupervisedExecutor({ workspaceRoot: dir });
  // The real executor, told apart only in what the log held when each run was handed to it.
  const starts: Array<{ id: string; latest: number }> = [];
  const executor = new Proxy(real, {
    get(target, key) {
      if (key === 'start') return (launch: JobLaunch) => (starts.push({ id: launch.job_run_id, latest: log.latestId() }), target.start(launch));
      // Without runs held past the cap (the shell launcher's way, and the in-process executor's): with them the run
      // after a full slot is handed over even before the end that frees it (tests/jobs-held-runs.test.ts).
      if (key === 'holdBeyond') return undefined;
      const value: unknown = Reflect.get(target, key);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  const queue = new CommandQueue(100);
  const orchestrator = new Orchestrator({ log, store, queue, executor, tasks, workspaceRoot: dir, tickMs: 60_000 });
  t.teardown(() => orchestrator.shutdown());
  orchestrator.start();
  const created = await queue.offer({ kind: 'create_want', request: { ...want('q/1'), partitions: ['q/1', 'q/2'] } });
  if (!created.ok) return t.fail(created.error);
  await waitFor('the want to be built', () => store.current().wants.get(created.want_id)?.status === 'successful');

  const events = await log.list(0, 1000);
  const queuedAt = new Map(events.flatMap((e) => (e.type === 'job_run_queued' ? [[e.job_run_queued.job_run_id, e.event_id] as const] : [])));
  const endedAt = new Map(events.flatMap((e) => (e.type === 'job_run_succeeded' ? [[e.job_run_succeeded.job_run_id, e.event_id] as const] : [])));
  const outputOf = (id: string) => store.current().job_runs.get(id)!.config.outputs[0]!;
  t.deepEqual(starts.map((s) => outputOf(s.id)), ['p/1', 'p/2', 'q/1', 'q/2'], 'one at a time, oldest first');
  for (const s of starts) t.true(queuedAt.get(s.id)! <= s.latest, `${outputOf(s.id)} started only once its queueing was in the log`);
  // p/2 and the q runs were queued before the slot they took was freed: each started before the end that freed it
  // was written (without waiting for that step's append).
  for (let i = 1; i < starts.length; i++) {
    const freedBy = endedAt.get(starts[i - 1]!.id)!;
    t.true(starts[i]!.latest < freedBy, `${outputOf(starts[i]!.id)} started while the end of ${outputOf(starts[i - 1]!.id)} was being written`);
  }
});

/**
 * A loop over a real log, store and in-process executor (its start hands back the pid at once, and refuses a run it
 * already runs), with the outputs of each run it was asked to start, in order, and what the loop logged as errors.
 */
async function loopWithStarts(t: ExecutionContext, graph: unknown) {
  const dir = await makeWorkspace(t);
  const tasks = new GraphTaskSource(await WorkspaceGraph.open(dir, parseGraph(graph, 'test')));
  const log = await EventLog.open(join(dir, '.platform', 'bel'));
  const store = await StateStore.open(log);
  t.teardown(() => store.close());
  const real = new ProcessExecutor();
  const starts: string[] = [];
  const executor = new Proxy(real, {
    get(target, key) {
      if (key === 'start') return (launch: JobLaunch) => (starts.push(launch.outputs[0]!), target.start(launch));
      const value: unknown = Reflect.get(target, key);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  const errors: string[] = [];
  const queue = new CommandQueue(100);
  const orchestrator = new Orchestrator({ log, store, queue, executor, tasks, workspaceRoot: dir, tickMs: 60_000, logError: (m) => errors.push(m) });
  t.teardown(async () => {
    await orchestrator.shutdown({ cancelRuns: true }).catch(() => undefined);
    await real.shutdown('test over');
  });
  orchestrator.start();
  return { dir, log, store, queue, real, starts, errors };
}

test('a step whose append fails after it started a run early does not start that run again when it is retried', async (t) => {
  const { dir, log, store, queue, starts, errors } = await loopWithStarts(t, {
    max_concurrent_job_runs: 1,
    jobs: [{ label: 'p', outputs: ['p/(?<n>\\d+)'], args: ['${n}'], exec: ['bash', '-c', 'if [ "$1" = 1 ]; then while [ ! -f release ]; do sleep 0.02; done; fi', '_'] }],
  });
  const created = await queue.offer({ kind: 'create_want', request: { ...want('p/1'), partitions: ['p/1', 'p/2'] } });
  if (!created.ok) return t.fail(created.error);
  await waitFor('p/1 to be recorded running', () => [...store.current().job_runs.values()].some((r) => r.status === 'running'));
  // Every append from here on fails: the step of p/1's end starts p/2 (queued by the first step) before its append,
  // then fails and is retried again and again.
  await log.close();
  writeFileSync(join(dir, 'release'), '');
  await waitFor('the step of p/1\'s end to be retried', () => errors.filter((e) => /step failed, continuing/.test(e)).length >= 3);
  t.deepEqual(starts, ['p/1', 'p/2'], 'p/2 started once, whatever the retries');
  t.false(errors.some((e) => /already running/.test(e)), errors.join('\n'));
});

test('a step that kills a run to free its slot starts nothing early: were its append to fail, the kill would not happen', async (t) => {
  const { log, store, queue, real, starts, errors } = await loopWithStarts(t, {
    max_concurrent_job_runs: 1,
    jobs: [{ label: 'p', outputs: ['p/(?<n>\\d+)'], exec: ['sleep', '30'] }],
  });
  const first = await queue.offer({ kind: 'create_want', request: want('p/1') });
  if (!first.ok) return t.fail(first.error);
  await waitFor('p/1 to be recorded running', () => [...store.current().job_runs.values()].some((r) => r.status === 'running'));
  const second = await queue.offer({ kind: 'create_want', request: want('p/2') });
  if (!second.ok) return t.fail(second.error);
  t.is([...store.current().job_runs.values()].find((r) => r.config.outputs[0] === 'p/2')?.status, 'queued', 'p/2 waits for the one slot');
  // The cancel's step would free p/1's slot for p/2; every append from here on fails, so the kill never comes.
  await log.close();
  void queue.offer({ kind: 'cancel_want', want_id: first.want_id, reason: 'test' }).catch(() => undefined);
  await waitFor('the cancel\'s step to fail', () => errors.some((e) => /step failed, continuing/.test(e)));
  await sleep(200);
  t.deepEqual(starts, ['p/1'], 'p/2 was not started beside p/1, which is still running');
  t.is(real.runningCount(), 1);
});
