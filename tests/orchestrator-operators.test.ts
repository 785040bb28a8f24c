/**
 * The orchestrator loop's timing operators on virtual time (RxJS TestScheduler): batching inputs per step,
 * deadlines falling due, and a failed step retried with its batch. No real clock: every "nothing happened" is
 * exact.
 */
import test from 'ava';
import { ReplaySubject, map, type SchedulerAction, type SchedulerLike, throwError, timer } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { nextTurnScheduler as nextTurn } from '../lib/system/next-turn-scheduler.js';
import { dueTimes } from '../lib/orchestrator/due-times.js';
import { retryingStep } from '../lib/orchestrator/retrying-step.js';
import { stepInBatches } from '../lib/orchestrator/step-in-batches.js';
import { collectBatch, retryBatch, type OrchestratorInput } from '../lib/orchestrator/orchestrator-input.js';
import { NEWS_WAIT_MIN_HELD, NEWS_WAIT_MS, newsWaitMs } from '../lib/orchestrator/news-wait.js';
import type { PendingCommand } from '../lib/orchestrator/command-queue.js';
import { SWEEP_SLICE, TICK_SWEEP_SLICE, startPass, sweepSlice } from '../lib/orchestrator/active-sweep.js';
import { WakeList } from '../lib/orchestrator/wake-list.js';
import { initialState, type WantStatus } from '../lib/state/build-state.js';

const scheduler = (t: { deepEqual: (a: unknown, b: unknown) => void }) => new TestScheduler((actual, expected) => t.deepEqual(actual, expected));

/** `ts`, with everything scheduled on it `extra` ms late (a loop held for a while). */
const later = (ts: TestScheduler, extra: number): SchedulerLike => ({
  now: () => ts.now(),
  schedule: <T>(work: (this: SchedulerAction<T>, state?: T) => void, delay = 0, state?: T) => ts.schedule(work, delay + extra, state),
});

test('stepInBatches: a burst is one batch; inputs during a step wait and form the next; steps never overlap', (t) => {
  const ts = scheduler(t);
  ts.run(({ cold, hot, expectObservable }) => {
    const input$ = hot('  a-b-c 5ms d-e ---|');
    const starts: Array<[number, string]> = [];
    // Each step takes 4 ms and emits its batch when it ends.
    const out$ = input$.pipe(
      stepInBatches(
        (batch: string[]) => {
          starts.push([ts.now(), batch.join('')]);
          return cold('----(x|)', { x: batch.join('') });
        },
        ts,
      ),
    );
    // a starts a step at once (0); b, c (2, 4) arrive while it runs and start the next at 4 (when it ends);
    // d, e arrive at 10 and 12 while nothing runs: d starts a step at 10, e waits for it.
    expectObservable(out$).toBe('----a---b-----d---(e|)', { a: 'a', b: 'bc', d: 'd', e: 'e' });
    ts.flush();
    t.deepEqual(starts, [
      [0, 'a'],
      [4, 'bc'],
      [10, 'd'],
      [14, 'e'],
    ]);
  });
});

test('stepInBatches: inputs that may wait (delayFor) wait for more; one that may not starts the step at once', (t) => {
  const ts = scheduler(t);
  ts.run(({ hot, cold, expectObservable }) => {
    const starts: Array<[number, string]> = [];
    // Lower-case inputs may wait 5 ms for company; an upper-case one (a command, say) may not.
    const delayFor = (waiting: readonly string[]) => (waiting.every((x) => x === x.toLowerCase()) ? 5 : 0);
    const out$ = hot('a-b 10ms c-D--|').pipe(
      stepInBatches(
        (batch: string[]) => {
          starts.push([ts.now(), batch.join('')]);
          return cold('(x|)', { x: batch.join('') });
        },
        ts,
        { delayFor },
      ),
    );
    expectObservable(out$).toBe('5ms x 9ms y 2ms |', { x: 'ab', y: 'cD' });
    ts.flush();
    // a waits 5 ms and takes b with it; c waits, and D (at 15) cuts the wait short.
    t.deepEqual(starts, [
      [5, 'ab'],
      [15, 'cD'],
    ]);
  });
});

test('stepInBatches: 50,000 inputs that come while a step waits are taken in linear time, not each asked with all before it', (t) => {
  // Each input that came during the wait had delayFor asked of the whole waiting list (newsWaitMs walks it): a burst of
  // n run news, as the launcher's pipe gives them, cost n^2/2 steps (50,000: 2.2 s, 100,000: 9 s of a blocked loop).
  const source = new ReplaySubject<OrchestratorInput>();
  let asked = 0;
  const delayFor = (waiting: readonly OrchestratorInput[]) => {
    asked += waiting.length;
    return newsWaitMs(waiting, () => NEWS_WAIT_MIN_HELD);
  };
  const sub = source.pipe(stepInBatches((batch: OrchestratorInput[]) => timer(0).pipe(map(() => batch.length)), nextTurn, { delayFor })).subscribe();
  t.teardown(() => sub.unsubscribe());
  const n = 50_000;
  const ended: OrchestratorInput = { kind: 'outcome', outcome: { job_run_id: 'r-1', status: 'succeeded' } };
  for (let i = 0; i < n; i++) source.next(ended);
  t.true(asked <= 2 * n, `delayFor looked at ${asked} inputs for ${n}`);
});

test('a step of run news alone waits for more while the launcher holds enough runs; anything else starts it at once', (t) => {
  const started: OrchestratorInput = { kind: 'started', job_run_id: 'r-1', pid: 1, worker: 'local' };
  const ended: OrchestratorInput = { kind: 'outcome', outcome: { job_run_id: 'r-1', status: 'succeeded' } };
  t.is(newsWaitMs([started, ended], () => NEWS_WAIT_MIN_HELD), NEWS_WAIT_MS);
  t.is(newsWaitMs([started, ended], () => NEWS_WAIT_MIN_HELD - 1), 0, 'too few held: a slot could fall idle');
  t.is(newsWaitMs([started, { kind: 'tick' }], () => 64), 0, 'a tick (or a write, a deadline) does not wait');
  const counted: number[] = [];
  t.is(newsWaitMs([{ kind: 'command', pending: {} as PendingCommand }], () => counted.push(64)), 0);
  t.deepEqual(counted, [], 'the executor is not asked to count its runs for a step that may not wait anyway');
});

test('stepInBatches: the batch is cut when the step starts, not when it is asked for', (t) => {
  const ts = scheduler(t);
  ts.run(({ hot, expectObservable, cold }) => {
    // A scheduler that runs steps 3 ms after they are asked for (a held loop, say).
    const late = later(ts, 3);
    const out$ = hot('abc----|').pipe(stepInBatches((batch: string[]) => cold('(x|)', { x: batch.join('') }), late));
    expectObservable(out$).toBe('---x---|', { x: 'abc' });
  });
});

test('stepInBatches: completion starts no new step and hands over what no step took', (t) => {
  const ts = scheduler(t);
  ts.run(({ hot, cold, expectObservable }) => {
    const left: string[][] = [];
    const out$ = hot('a-b|').pipe(
      stepInBatches((batch: string[]) => cold('-----(x|)', { x: batch.join('') }), ts, { leftover: (inputs) => left.push(inputs) }),
    );
    // The step of a finishes at 5; b never gets a step of its own.
    expectObservable(out$).toBe('-----(a|)', { a: 'a' });
    ts.flush();
    t.deepEqual(left, [['b']]);
  });
});

test('stepInBatches: a step that was asked for but not started when the input completes never starts', (t) => {
  const ts = scheduler(t);
  ts.run(({ hot, cold, expectObservable }) => {
    let steps = 0;
    const left: string[][] = [];
    const held = later(ts, 10);
    const out$ = hot('a|').pipe(
      stepInBatches(
        (batch: string[]) => {
          steps++;
          return cold('(x|)', { x: batch.join('') });
        },
        held,
        { leftover: (inputs) => left.push(inputs) },
      ),
    );
    expectObservable(out$).toBe('-|');
    ts.flush();
    t.is(steps, 0);
    t.deepEqual(left, [['a']]);
  });
});

test('dueTimes: one emission per distinct deadline when it falls due, however often it is named', (t) => {
  const ts = scheduler(t);
  ts.run(({ hot, expectObservable }) => {
    // Deadlines are absolute times; +1 ms so a step never comes before them.
    const deadlines$ = hot('a-b-a-c', { a: 10, b: 5, c: 10 });
    expectObservable(deadlines$.pipe(dueTimes(ts))).toBe('------b----a', { a: 10, b: 5 });
  });
});

test('dueTimes: a deadline named again after it fired fires again; one in the past fires at once', (t) => {
  const ts = scheduler(t);
  ts.run(({ hot, expectObservable }) => {
    const deadlines$ = hot('a 10ms a 5ms p', { a: 3, p: 0 });
    // 3 fires at 4; named again at 11 (already past) it fires at 12; 0 named at 17 fires at 18.
    expectObservable(deadlines$.pipe(dueTimes(ts))).toBe('----a-------a-----p', { a: 3, p: 0 });
  });
});

test('retryingStep: a failing step is retried with the rest of its batch after the delay until it succeeds', (t) => {
  const ts = scheduler(t);
  ts.run(({ expectObservable }) => {
    const stop$ = new ReplaySubject<void>(1);
    const attempts: Array<[number, string[]]> = [];
    const failures: string[] = [];
    let fail = 2;
    const step = retryingStep(
      (batch: { commands: string[]; news: string[] }) => {
        attempts.push([ts.now(), [...batch.commands, ...batch.news]]);
        return fail-- > 0 ? throwError(() => new Error('disk fault')) : timer(1, ts);
      },
      {
        delayMs: 250,
        scheduler: ts,
        stop$,
        onFailure: (batch, err) => {
          failures.push((err as Error).message);
          return { commands: [], news: batch.news };
        },
      },
    );
    // Completes once the third attempt (at 500) has run for 1 ms; emits nothing: all was recorded.
    expectObservable(step({ commands: ['create w'], news: ['r-1 exited'] })).toBe('501ms |');
    ts.flush();
    t.deepEqual(attempts, [
      [0, ['create w', 'r-1 exited']],
      [250, ['r-1 exited']],
      [500, ['r-1 exited']],
    ]);
    t.deepEqual(failures, ['disk fault', 'disk fault']);
  });
});

test('retryingStep: a stop while a retry waits hands the rest of the batch over at once', (t) => {
  const ts = scheduler(t);
  ts.run(({ expectObservable, cold }) => {
    const stop$ = new ReplaySubject<void>(1);
    cold('100ms a').subscribe(() => stop$.next());
    let runs = 0;
    const step = retryingStep(
      () => {
        runs++;
        return throwError(() => new Error('still failing'));
      },
      { delayMs: 250, scheduler: ts, stop$, onFailure: (batch: string[]) => batch.filter((x) => x !== 'command') },
    );
    expectObservable(step(['command', 'news'])).toBe('100ms (r|)', { r: ['news'] });
    ts.flush();
    t.is(runs, 1, 'no retry after the stop');
  });
});

test('collectBatch: job-run news and commands keep their order; a tick asks for a slice of the sweep, a scan or a graph edit for a pass, a deadline for housekeeping only', (t) => {
  const noop = () => undefined;
  const cmd = (comment: string) => ({
    command: { kind: 'create_want' as const, request: { partitions: ['a'], comment, data_timestamp: 0, ttl_seconds: 0, sla_seconds: 0 } },
    resolve: noop,
    reject: noop,
  });
  const narrow = collectBatch([
    { kind: 'command', pending: cmd('one') },
    { kind: 'started', job_run_id: 'r-1', pid: 10, worker: 'local' },
    { kind: 'outcome', outcome: { job_run_id: 'r-1', status: 'succeeded' } },
    { kind: 'command', pending: cmd('two') },
    { kind: 'configs', refs: ['x'] },
  ]);
  t.deepEqual(
    narrow.commands.map((c) => (c.command.kind === 'create_want' ? c.command.request.comment : '')),
    ['one', 'two'],
  );
  t.deepEqual(narrow.started, [{ job_run_id: 'r-1', pid: 10, worker: 'local' }]);
  t.deepEqual(narrow.outcomes, [{ job_run_id: 'r-1', status: 'succeeded' }]);
  t.deepEqual(narrow.resolvedRefs, ['x']);
  t.is(narrow.sweep, undefined);
  t.false(narrow.housekeeping);
  t.is(collectBatch([{ kind: 'tick' }]).sweep, 'slice');
  for (const kind of ['scan', 'graph'] as const) t.is(collectBatch([{ kind }]).sweep, 'pass', kind);
  t.is(collectBatch([{ kind: 'tick' }, { kind: 'scan' }, { kind: 'tick' }]).sweep, 'pass', 'a pass is not narrowed by a tick');
  for (const kind of ['tick', 'scan', 'graph'] as const) t.true(collectBatch([{ kind }]).housekeeping, kind);
  const deadline = collectBatch([{ kind: 'deadline', at: 5 }]);
  t.true(deadline.housekeeping);
  t.is(deadline.sweep, undefined, 'the wants due are on the wake list: no sweep');
  const rest = retryBatch(narrow);
  t.deepEqual(rest.commands, [], 'commands were answered with the fault');
  t.deepEqual(rest.outcomes, narrow.outcomes, 'news is kept');
  t.is(rest.sweep, 'pass');
});

test('dueTimes: a deadline beyond setTimeout ceiling waits the ceiling (one early wake-up), not 1 ms', (t) => {
  const ts = scheduler(t);
  ts.run(({ cold, expectObservable }) => {
    const thirtyDays = 30 * 24 * 3600_000;
    expectObservable(cold('a', { a: thirtyDays }).pipe(dueTimes(ts))).toBe(`${2 ** 31 - 1}ms a`, { a: thirtyDays });
  });
});

test('sweepSlice walks the active wants in creation order, a slice at a time, and a pass ends at the last', (t) => {
  let state = initialState();
  const statuses: WantStatus[] = ['idle', 'building', 'successful', 'upstream_building', 'failed'];
  const active = new Set<WantStatus>(['idle', 'building', 'upstream_building']);
  const expected: string[] = [];
  for (let seq = 1; seq <= 23; seq++) {
    const status = statuses[seq % statuses.length]!;
    state = { ...state, wants_by_status: { ...state.wants_by_status, [status]: state.wants_by_status[status].set(seq, `w-${seq}`) } };
    if (active.has(status)) expected.push(`w-${seq}`);
  }
  const seen: string[] = [];
  let cursor = startPass();
  let steps = 0;
  do {
    const slice = sweepSlice(state, cursor, 4);
    t.true(slice.wantIds.length <= 4);
    seen.push(...slice.wantIds);
    cursor = slice.cursor;
    steps++;
  } while (cursor.passing && steps < 100);
  t.deepEqual(seen, expected, 'every active want once, in creation order');
  t.is(steps, Math.ceil(expected.length / 4));
  t.is(cursor.next, 0, 'the next sweep starts from the first again');
  // Ticks (no pass) wrap around.
  const tick = sweepSlice(state, { next: 22, passing: false }, 4);
  t.false(tick.cursor.passing);
  t.is(tick.cursor.next, 0);
});

test('sweepSlice: a tick looks at a smaller slice than a pass, so the idle safety net holds the loop little', (t) => {
  let byStatus = initialState().wants_by_status.building;
  for (let seq = 1; seq <= 1_000; seq++) byStatus = byStatus.set(seq, `w-${seq}`);
  const state = { wants_by_status: { ...initialState().wants_by_status, building: byStatus } };
  const tick = sweepSlice(state, { next: 0, passing: false });
  t.is(tick.wantIds.length, TICK_SWEEP_SLICE);
  t.is(tick.cursor.next, TICK_SWEEP_SLICE + 1, 'the next tick goes on after the last one looked at');
  const pass = sweepSlice(state, startPass());
  t.is(pass.wantIds.length, SWEEP_SLICE);
  t.true(TICK_SWEEP_SLICE < SWEEP_SLICE);
});

test('WakeList gives the wants due by now, once, merged by want', (t) => {
  const wakes = new WakeList();
  wakes.add([
    [30, 'w-3', null],
    [10, 'w-1', 'a'],
    [10, 'w-1', 'b'],
    [20, 'w-2', 'c'],
  ]);
  const due = new Map();
  wakes.takeDue(20, due);
  t.deepEqual([...due.entries()].map(([id, refs]) => [id, refs && [...refs].sort()]), [
    ['w-1', ['a', 'b']],
    ['w-2', ['c']],
  ]);
  const again = new Map();
  wakes.takeDue(25, again);
  t.is(again.size, 0, 'taken once');
  wakes.takeDue(30, again);
  t.deepEqual([...again.entries()], [['w-3', null]]);
  t.is(wakes.size, 0);
});
