import test from 'ava';
import type { EventView, JobRunView } from '../lib/client/platform-client.js';
import {
  applyEvent,
  applyRunSnapshot,
  countRuns,
  failedRuns,
  mayHaveEnded,
  newBuildModel,
  plainLine,
  renderProgress,
  type BuildModel,
  type Paint,
  type RunChange,
} from '../lib/cli/build-progress.js';
import { HeldRunEvents } from '../lib/cli/held-run-events.js';
import type { EventPayload } from '../lib/events/build-event.js';

const T0 = Date.parse('2026-01-05T10:00:00.000Z');
let nextId = 1;

function ev(payload: EventPayload, atMs: number): EventView {
  return { event_id: nextId++, timestamp: new Date(atMs).toISOString(), ...payload } as EventView;
}

function wantCreated(want_id: string, partitions: string[], at: number, parent = '', root = want_id): EventView {
  return ev(
    {
      type: 'want_created',
      want_created: {
        want_id,
        partitions,
        comment: '',
        data_timestamp: 0,
        ttl_seconds: 0,
        sla_seconds: 0,
        source: parent ? 'derived' : 'user',
        parent_want_id: parent,
        root_want_id: root,
        rebuild: 'missing', priority: 0, backfill_id: '', max_concurrent_job_runs: 0, pattern: '', schedule_tick: 0,
      },
    },
    at,
  );
}

function queued(job_run_id: string, job_label: string, outputs: string[], want_ids: string[], at: number, attempt = 1): EventView {
  return ev(
    { type: 'job_run_queued', job_run_queued: { job_run_id, job_label, config: { outputs, inputs: [], args: [], env: {} }, want_ids, attempt, exec: [], timeout_seconds: 0, input_builds: [], job_fingerprint: '', output_inputs: [], retry_of: '' } },
    at,
  );
}

const started = (id: string, at: number) => ev({ type: 'job_run_started', job_run_started: { job_run_id: id, pid: 100, worker: 'local', started_at: 0 } }, at);
const succeeded = (id: string, at: number) => ev({ type: 'job_run_succeeded', job_run_succeeded: { job_run_id: id, builds: [], ended_at: 0 } }, at);
const failed = (id: string, at: number, exit_code: number, retry_at = 0, reason = '') =>
  ev({ type: 'job_run_failed', job_run_failed: { job_run_id: id, exit_code, signal: '', reason, retry_at, ended_at: 0 } }, at);

function model(): BuildModel {
  return newBuildModel({ want_id: 'w-3', partitions: ['daily/revenue/date=2026-01-05', 'daily/revenue/date=2026-01-06'], status: 'idle' }, T0);
}

function feed(m: BuildModel, events: EventView[]): RunChange[] {
  return events.flatMap((e) => applyEvent(m, e));
}

/** A build with: 1 queued, 2 running, 1 succeeded, 1 failed. */
function busyModel(): BuildModel {
  const m = model();
  feed(m, [
    wantCreated('w-3', ['daily/revenue/date=2026-01-05', 'daily/revenue/date=2026-01-06'], T0 + 10),
    wantCreated('w-4', ['raw/a', 'raw/b', 'raw/c', 'raw/d'], T0 + 20, 'w-3', 'w-3'),
    queued('r-1', 'raw_orders', ['raw/a'], ['w-4'], T0 + 30),
    queued('r-2', 'raw_orders', ['raw/b'], ['w-4'], T0 + 30),
    queued('r-3', 'raw_customers', ['raw/c'], ['w-4'], T0 + 30),
    queued('r-4', 'raw_refunds', ['raw/d'], ['w-4'], T0 + 30),
    queued('r-5', 'daily_revenue', ['daily/revenue/date=2026-01-05'], ['w-3'], T0 + 40),
    started('r-1', T0 + 100),
    started('r-2', T0 + 200),
    succeeded('r-2', T0 + 1_000),
    started('r-3', T0 + 1_100),
    failed('r-1', T0 + 2_000, 3),
    started('r-4', T0 + 2_100),
  ]);
  m.wantStatus = 'upstream_building';
  return m;
}

test('renderProgress shows the want, its status, the elapsed time, the counts and the running job labels', (t) => {
  const m = busyModel();
  const lines = renderProgress(m, T0 + 12_345, 200);
  const text = lines.join('\n');
  t.regex(lines[0]!, /w-3 upstream_building 12\.3s/);
  // 2 of 5 runs ended (r-1 failed, r-2 succeeded).
  t.regex(lines[0]!, /\] 2\/5 job runs ended/);
  t.regex(text, /queued 1 · running 2 · succeeded 1 · failed 1/);
  const running = lines.filter((l) => l.includes('▸'));
  t.is(running.length, 2);
  t.regex(running[0]!, /raw_customers r-3 11\.2s\s+raw\/c/);
  t.regex(running[1]!, /raw_refunds r-4 10\.2s\s+raw\/d/);
  // Labels of runs that do not run are not listed as running.
  t.false(running.some((l) => l.includes('raw_orders') || l.includes('daily_revenue')));
});

test('renderProgress counts change as events arrive', (t) => {
  const m = busyModel();
  feed(m, [succeeded('r-3', T0 + 3_000), succeeded('r-4', T0 + 3_100), started('r-5', T0 + 3_200)]);
  const lines = renderProgress(m, T0 + 4_000, 200);
  t.regex(lines.join('\n'), /queued 0 · running 1 · succeeded 3 · failed 1/);
  t.regex(lines[0]!, /4\/5 job runs ended/);
  t.deepEqual(
    lines.filter((l) => l.includes('▸')).map((l) => l.trim().split(/\s+/).slice(1, 3).join(' ')),
    ['daily_revenue r-5'],
  );
  t.deepEqual(countRuns(m), { queued: 0, running: 1, succeeded: 3, failed: 1, other: 0, total: 5 });
});

test('renderProgress keeps every line within the width and paints only after cutting', (t) => {
  const m = busyModel();
  for (const width of [20, 33, 50, 80]) {
    for (const l of renderProgress(m, T0 + 5_000, width)) t.true(l.length <= width, `${JSON.stringify(l)} is wider than ${width}`);
  }
  const brackets: Paint = { good: (s) => `<${s}>`, bad: (s) => `<${s}>`, busy: (s) => `<${s}>`, dim: (s) => `<${s}>`, bold: (s) => `<${s}>` };
  const painted = renderProgress(m, T0 + 5_000, 40, brackets);
  const plain = renderProgress(m, T0 + 5_000, 40);
  t.deepEqual(painted.map((l) => l.replace(/[<>]/g, '')), plain);
  t.true(painted[0]!.includes('<w-3>'));
});

test('renderProgress lists a few running runs and says how many more', (t) => {
  const m = model();
  feed(m, [wantCreated('w-3', ['x/0'], T0)]);
  for (let i = 1; i <= 8; i++) feed(m, [queued(`r-${i}`, `job_${i}`, [`x/${i}`], ['w-3'], T0), started(`r-${i}`, T0 + i)]);
  const lines = renderProgress(m, T0 + 1_000, 120, undefined, 5);
  t.is(lines.filter((l) => l.includes('▸')).length, 5);
  t.regex(lines.at(-1)!, /and 3 more running/);
});

test('the model follows the root want, its derived wants and the runs that serve them, and nothing else', (t) => {
  const m = model();
  const changes = feed(m, [
    // Before the root exists: another build's events are not this build's.
    queued('r-1', 'other', ['daily/revenue/date=2026-01-05'], ['w-2'], T0),
    wantCreated('w-3', ['daily/revenue/date=2026-01-05', 'daily/revenue/date=2026-01-06'], T0 + 1),
    wantCreated('w-4', ['raw/a'], T0 + 2, 'w-3', 'w-3'),
    wantCreated('w-5', ['raw/z'], T0 + 2, '', 'w-5'),
    queued('r-2', 'raw_orders', ['raw/a'], ['w-4'], T0 + 3),
    queued('r-3', 'raw_orders', ['raw/z'], ['w-5'], T0 + 3),
    // Queued for another want, but for a ref this build wants: the build joins it.
    queued('r-4', 'daily_revenue', ['daily/revenue/date=2026-01-06'], ['w-9'], T0 + 4),
    started('r-3', T0 + 5),
    started('r-2', T0 + 5),
  ]);
  t.deepEqual([...m.wants.keys()], ['w-3', 'w-4']);
  t.deepEqual([...m.runs.keys()], ['r-2', 'r-4']);
  t.deepEqual(
    changes.map((c) => `${c.run.job_run_id} ${c.status}`),
    ['r-2 queued', 'r-4 queued', 'r-2 running'],
  );
});

test('statuses only move forward, so a replayed or late event changes nothing', (t) => {
  const m = busyModel();
  t.deepEqual(applyEvent(m, started('r-2', T0 + 5_000)), []);
  t.is(m.runs.get('r-2')!.status, 'succeeded');
  t.deepEqual(applyEvent(m, queued('r-2', 'raw_orders', ['raw/b'], ['w-4'], T0 + 5_000)), []);
});

test('failedRuns names the runs that failed for good, not the ones that are retried', (t) => {
  const m = model();
  feed(m, [
    wantCreated('w-3', ['daily/revenue/date=2026-01-05'], T0),
    queued('r-1', 'daily_revenue', ['daily/revenue/date=2026-01-05'], ['w-3'], T0),
    started('r-1', T0 + 1),
    failed('r-1', T0 + 2, 1, T0 + 1_000, 'exited with code 1'),
    queued('r-2', 'daily_revenue', ['daily/revenue/date=2026-01-05'], ['w-3'], T0 + 1_000, 2),
    started('r-2', T0 + 1_001),
    failed('r-2', T0 + 1_500, 1, 0, 'exited with code 1'),
  ]);
  t.deepEqual(
    failedRuns(m).map((r) => r.job_run_id),
    ['r-2'],
  );
});

test('plainLine: one line per change, timed from the start of the build', (t) => {
  const m = busyModel();
  const changes = feed(m, [started('r-5', T0 + 12_345), failed('r-5', T0 + 13_000, 2, 0, 'exited with code 2')]);
  t.deepEqual(
    changes.map((c) => plainLine(c, m.startedAt)),
    ['[12.3s] r-5 daily_revenue running', '[13.0s] r-5 daily_revenue failed (exited with code 2)'],
  );
  const m2 = model();
  const retried = feed(m2, [
    wantCreated('w-3', ['a'], T0),
    queued('r-7', 'flaky', ['a'], ['w-3'], T0 + 61_000),
    started('r-7', T0 + 61_500),
    failed('r-7', T0 + 62_000, 4, T0 + 63_000),
    queued('r-8', 'flaky', ['a'], ['w-3'], T0 + 63_000, 2),
  ]).map((c) => plainLine(c, T0));
  t.deepEqual(retried, [
    '[1m01s] r-7 flaky queued',
    '[1m01s] r-7 flaky running',
    '[1m02s] r-7 flaky failed (exit code 4; will retry)',
    '[1m03s] r-8 flaky queued (attempt 2)',
  ]);
});

test('a run snapshot reports the steps the events would have shown', (t) => {
  const m = model();
  const view = runView('r-9', { job_label: 'raw_orders', outputs: ['daily/revenue/date=2026-01-05'], want_ids: ['w-1'], exec: ['bash', 'daily.sh'] });
  const lines = applyRunSnapshot(m, view).map((c) => plainLine(c, T0));
  t.deepEqual(lines, ['[1.0s] r-9 raw_orders queued', '[2.0s] r-9 raw_orders running', '[4.5s] r-9 raw_orders succeeded']);
  // Known and not newer: nothing.
  t.deepEqual(applyRunSnapshot(m, { ...view, status: 'running', ended_at: null }), []);
  t.is(countRuns(m).succeeded, 1);
});

test("a joined run's steps from before the build are timed before its start, not all at 0.0s; a few ms under it are the clocks", (t) => {
  const m = model();
  const view = runView('r-9', { job_label: 'raw_orders', outputs: ['daily/revenue/date=2026-01-05'], want_ids: ['w-1'], exec: ['bash', 'daily.sh'] });
  const lines = applyRunSnapshot(m, view).map((c) => plainLine(c, T0 + 3000));
  t.deepEqual(lines, ['[-2.0s] r-9 raw_orders queued', '[-1.0s] r-9 raw_orders running', '[1.5s] r-9 raw_orders succeeded']);
  t.is(plainLine({ run: m.runs.get('r-9')!, status: 'running', at: T0 + 2990 }, T0 + 3000), '[0.0s] r-9 raw_orders running');
});

test("a run that ended while no daemon ran is shown ending when it did (the event's ended_at), not when the event came", (t) => {
  const m = busyModel();
  const changes = feed(m, [started('r-5', T0 + 1000)]);
  t.is(changes.length, 1);
  const late = { ...succeeded('r-5', T0 + 60_000), job_run_succeeded: { job_run_id: 'r-5', builds: [], ended_at: T0 + 2500 } } as EventView;
  feed(m, [late]);
  t.is(m.runs.get('r-5')!.ended_at, T0 + 2500);
});

test('the model counts the runs for root partitions still to go, and says when the build may have ended', (t) => {
  const m = model();
  const rootRuns = () => [...m.runs.values()].filter((r) => (r.status === 'queued' || r.status === 'running') && r.outputs.some((o) => o.startsWith('daily/'))).length;
  const step = (e: EventView) => {
    const changes = applyEvent(m, e);
    t.is(m.activeRoot, rootRuns(), `activeRoot after ${e.type}`);
    return mayHaveEnded(m, changes);
  };
  t.false(step(wantCreated('w-3', ['daily/revenue/date=2026-01-05', 'daily/revenue/date=2026-01-06'], T0)));
  t.false(step(wantCreated('w-4', ['raw/a'], T0, 'w-3', 'w-3')));
  // An input's run ends well: the root's runs are still to come.
  t.false(step(queued('r-0', 'raw_orders', ['raw/a'], ['w-4'], T0 + 1)));
  t.false(step(succeeded('r-0', T0 + 1)));
  t.false(step(queued('r-1', 'daily_revenue', ['daily/revenue/date=2026-01-05'], ['w-3'], T0 + 1)));
  t.false(step(queued('r-2', 'daily_revenue', ['daily/revenue/date=2026-01-06'], ['w-3'], T0 + 1)));
  t.false(step(started('r-1', T0 + 2)));
  // One of the root's runs ended well with another to go: not yet.
  t.false(step(succeeded('r-1', T0 + 3)));
  // A late or replayed event moves nothing and asks nothing.
  t.false(step(succeeded('r-1', T0 + 4)));
  t.false(step(started('r-2', T0 + 4)));
  // A rebuild of the input, queued by someone else meanwhile, is shown but does not hold back the end.
  t.false(step(queued('r-5', 'raw_orders', ['raw/a'], ['w-9'], T0 + 4)));
  // A failure is read at once, whatever is still going (it may end the want).
  t.true(step(failed('r-5', T0 + 5, 1)));
  // The last run for a root partition ended: the want may have ended.
  t.true(step(succeeded('r-2', T0 + 6)));
  t.is(m.activeRoot, 0);
  // A run read from the server while it runs counts as the events would; its end is seen by them.
  applyRunSnapshot(m, runView('r-7', { status: 'running', ended_at: null }));
  t.is(m.activeRoot, 1);
  t.true(step(succeeded('r-7', T0 + 8)));
  t.is(m.activeRoot, 0);
});

test('events of a run not yet known, which come while its read is out, are applied after the read\'s older answer', (t) => {
  // The build joined r-9, a run for a root partition queued by another want: only a read of runs makes it known.
  const follow = (withHeld: boolean) => {
    const m = model();
    const held = new HeldRunEvents();
    feed(m, [wantCreated('w-3', ['daily/revenue/date=2026-01-05', 'daily/revenue/date=2026-01-06'], T0)]);
    held.readStarted();
    // The run's start and end come on the stream before the read's answer: the model cannot place them yet.
    for (const e of [started('r-9', T0 + 2_000), succeeded('r-9', T0 + 4_500)]) {
      t.deepEqual(applyEvent(m, e), []);
      held.offer(e, (id) => m.runs.has(id));
    }
    // The answer was made before the run ended: running.
    const changes = applyRunSnapshot(m, runView('r-9', { status: 'running', ended_at: null }));
    if (withHeld) changes.push(...held.after('r-9').flatMap((e) => applyEvent(m, e)));
    held.readEnded();
    return { m, changes };
  };
  const { m, changes } = follow(true);
  t.is(m.runs.get('r-9')?.status, 'succeeded');
  t.is(m.activeRoot, 0);
  t.true(mayHaveEnded(m, changes));
  t.deepEqual(changes.map((c) => c.status), ['queued', 'running', 'succeeded']);
  // Without them the run stays running after its end, and nothing says the build may have ended.
  const stale = follow(false);
  t.is(stale.m.runs.get('r-9')?.status, 'running');
  t.false(mayHaveEnded(stale.m, stale.changes));
});

test('run events are held only while a read is out, only for unknown runs, and let go when the last read ends', (t) => {
  const held = new HeldRunEvents();
  const known = new Set(['r-1']);
  const isKnown = (id: string) => known.has(id);
  held.offer(succeeded('r-2', T0), isKnown);
  t.deepEqual(held.after('r-2'), []);
  held.readStarted();
  held.readStarted();
  const [a, b] = [started('r-2', T0 + 1), succeeded('r-2', T0 + 2)];
  held.offer(a, isKnown);
  held.offer(succeeded('r-1', T0 + 2), isKnown);
  held.offer(wantCreated('w-5', ['raw/a'], T0 + 2), isKnown);
  held.offer(b, isKnown);
  t.deepEqual(held.after('r-2'), [a, b]);
  t.deepEqual(held.after('r-1'), []);
  held.readEnded();
  t.deepEqual(held.after('r-2'), [a, b], 'another read is still out');
  held.readEnded();
  t.deepEqual(held.after('r-2'), []);
});

/** A job run as the server shows it: succeeded, queued at 1 s, started at 2 s, ended at 4.5 s; `over` changes it. */
function runView(job_run_id: string, over: Partial<JobRunView> = {}): JobRunView {
  const outputs = over.outputs ?? ['daily/revenue/date=2026-01-06'];
  return {
    job_run_id,
    job_label: 'daily_revenue',
    status: 'succeeded',
    outputs,
    outputs_total: outputs.length,
    config: { outputs, inputs: [], args: [], env: {} },
    inputs_total: 0,
    env_total: 0,
    truncated: false,
    want_ids: ['w-3'],
    wants_total: 1,
    attempt: 1,
    exec: ['true'],
    timeout_seconds: 0,
    pid: 4,
    worker: 'local',
    exit_code: 0,
    signal: null,
    reason: null,
    missing: [],
    retry_at: null,
    retried_by: null,
    queued_at: new Date(T0 + 1_000).toISOString(),
    started_at: new Date(T0 + 2_000).toISOString(),
    ended_at: new Date(T0 + 4_500).toISOString(),
    duration_ms: 2_500,
    priority: 0,
    ...over,
  };
}

test('a run handed to a queue that no worker took yet reads as waiting for a worker, live and in plain lines, until a worker takes it', (t) => {
  const m = model();
  feed(m, [wantCreated('w-3', ['daily/revenue/date=2026-01-05'], T0 + 10), queued('r-1', 'daily_revenue', ['daily/revenue/date=2026-01-05'], ['w-3'], T0 + 20)]);
  const changes = feed(m, [ev({ type: 'job_run_started', job_run_started: { job_run_id: 'r-1', pid: 0, worker: 'redis:platform-runs', started_at: 0 } }, T0 + 30)]);
  t.regex(plainLine(changes[0]!, T0), /r-1 daily_revenue running \(handed to queue platform-runs, waiting for a worker\)$/);
  t.regex(renderProgress(m, T0 + 5_000, 200).find((l) => l.includes('▸'))!, /daily_revenue r-1 waiting for a worker \(queue platform-runs\) 5\.0s/);
  const placed = feed(m, [ev({ type: 'job_run_placed', job_run_placed: { job_run_id: 'r-1', pid: 4242, worker: 'w1', started_at: 0 } }, T0 + 6_000)]);
  t.is(placed.length, 1);
  t.regex(plainLine(placed[0]!, T0), /^\[6\.0s\] r-1 daily_revenue taken by worker w1$/, 'a plain line says which worker took it');
  t.false(mayHaveEnded(m, placed));
  const taken = renderProgress(m, T0 + 7_000, 200).find((l) => l.includes('▸'))!;
  t.regex(taken, /daily_revenue r-1 on w1 1\.0s/, 'timed from when the worker took it, on the worker that took it');
  t.notRegex(taken, /waiting/);
});

test('a run a worker took while no daemon ran is timed from when the worker took it (job_run_placed started_at), as the state has it', (t) => {
  const m = model();
  feed(m, [wantCreated('w-3', ['daily/revenue/date=2026-01-05'], T0 + 10), queued('r-1', 'daily_revenue', ['daily/revenue/date=2026-01-05'], ['w-3'], T0 + 20)]);
  feed(m, [ev({ type: 'job_run_started', job_run_started: { job_run_id: 'r-1', pid: 0, worker: 'redis:platform-runs', started_at: 0 } }, T0 + 30)]);
  // Told by the next daemon at T0+20 s; the worker took it at T0+1 s.
  feed(m, [ev({ type: 'job_run_placed', job_run_placed: { job_run_id: 'r-1', pid: 4242, worker: 'w1', started_at: T0 + 1_000 } }, T0 + 20_000)]);
  t.is(m.runs.get('r-1')!.started_at, T0 + 1_000);
  t.regex(renderProgress(m, T0 + 21_000, 200).find((l) => l.includes("▸"))!, /daily_revenue r-1 on w1 20\.0s/);
});

test('a run canceled while it waited in a queue for a worker never started, as the state has it', (t) => {
  const m = model();
  feed(m, [wantCreated('w-3', ['daily/revenue/date=2026-01-05'], T0 + 10), queued('r-1', 'daily_revenue', ['daily/revenue/date=2026-01-05'], ['w-3'], T0 + 20)]);
  feed(m, [ev({ type: 'job_run_started', job_run_started: { job_run_id: 'r-1', pid: 0, worker: 'redis:platform-runs', started_at: 0 } }, T0 + 30)]);
  const changes = feed(m, [ev({ type: 'job_run_canceled', job_run_canceled: { job_run_id: 'r-1', reason: 'want w-3 canceled' } }, T0 + 5_000)]);
  t.regex(plainLine(changes[0]!, T0), /r-1 daily_revenue canceled \(want w-3 canceled\)$/);
  t.like(m.runs.get('r-1')!, { status: 'canceled', started_at: null, ended_at: T0 + 5_000, waiting_in: undefined });
});

test('renderProgress groups the counts of a build of thousands of runs', (t) => {
  const m = model();
  feed(m, [
    wantCreated('w-3', ['daily/revenue/date=2026-01-05', 'daily/revenue/date=2026-01-06'], T0 + 10),
    ...Array.from({ length: 1_200 }, (_, i) => queued(`r-${i + 1}`, 'raw_orders', [`raw/${i}`], ['w-3'], T0 + 30)),
  ]);
  const lines = renderProgress(m, T0 + 1_000, 200);
  t.regex(lines[0]!, /\] 0\/1,200 job runs ended/);
  t.regex(lines[1]!, /queued 1,200 · running 0/);
});
