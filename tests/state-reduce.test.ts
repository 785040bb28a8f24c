/**
 * The build state fold: property tests over random (pooled, so mutually referring) event lists, replay from a
 * real LevelDB log, index consistency, and hand-written status transitions.
 */
import { listArray, listItems } from '../lib/state/append-list.js';
import test from 'ava';
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import type { BuildEvent, EventPayload, JobConfig } from '../lib/events/build-event.js';
import { EventLog } from '../lib/events/event-log.js';
import {
  SCHEDULE_RECENT_TICKS,
  activeWantsOn,
  initialState,
  JOB_RUN_STATUSES,
  PARTITION_STATUSES,
  queueKey,
  TERMINAL_WANT_STATUSES,
  WANT_STATUSES,
  type BuildState,
} from '../lib/state/build-state.js';
import type { OrderedMap } from '../lib/state/ordered-map.js';
import { reduce } from '../lib/state/reduce.js';
import { partitionCategory } from '../lib/state/want-status.js';
import { openCount, openRefs, settled } from '../lib/state/want-window.js';
import { replayLog, StateStore } from '../lib/state/state-store.js';
import { arbEventList } from './helpers/arbitrary-events.js';
import { canon } from './helpers/state-canon.js';
import { makeWorkspace } from './helpers/server-fixture.js';
import { T0, apply } from './helpers/fold-payloads.js';

// ---------------------------------------------------------------------------------------------------------------
// Helpers

const fold = (events: readonly BuildEvent[], from: BuildState = initialState()): BuildState => events.reduce(reduce, from);

function deepFreeze<T>(value: T): T {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value;
  Object.freeze(value);
  for (const key of Reflect.ownKeys(value)) deepFreeze((value as Record<string | symbol, unknown>)[key]);
  return value;
}

/** Every way the indexes could disagree with the records; empty when they agree. */
function indexViolations(s: BuildState): string[] {
  const problems: string[] = [];
  const check = (ok: boolean, what: string) => {
    if (!ok) problems.push(what);
  };
  // Wants: in want_order once, in exactly the status index of their status.
  let indexedWants = 0;
  for (const st of WANT_STATUSES) indexedWants += s.wants_by_status[st].size;
  check(indexedWants === s.wants.size, `wants_by_status holds ${indexedWants} wants, there are ${s.wants.size}`);
  check(s.want_order.size === s.wants.size, `want_order holds ${s.want_order.size}, there are ${s.wants.size}`);
  const activeByRef = new Map<string, Set<string>>();
  for (const [id, w] of s.wants) {
    check(w.want_id === id, `want keyed ${id} is ${w.want_id}`);
    check(s.want_order.get(w.seq) === id, `want_order[${w.seq}] is not ${id}`);
    for (const st of WANT_STATUSES) {
      const has = s.wants_by_status[st].get(w.seq) === id;
      check(has === (st === w.status), `want ${id} (${w.status}) ${has ? 'is' : 'is not'} in the ${st} index`);
    }
    if (!TERMINAL_WANT_STATUSES.has(w.status)) {
      for (const ref of w.partitions) {
        if (!activeByRef.has(ref)) activeByRef.set(ref, new Set());
        activeByRef.get(ref)!.add(id);
      }
    }
  }
  // A want's counts of its derived wants: those it lists, still active and failed, as its status used to walk them.
  for (const [id, w] of s.wants) {
    let active = 0;
    let failed = 0;
    for (const childId of listItems(w.child_want_ids)) {
      const child = s.wants.get(childId);
      if (child === undefined) continue;
      if (child.status === 'failed' || child.status === 'upstream_failed') failed++;
      else if (!TERMINAL_WANT_STATUSES.has(child.status)) active++;
    }
    check(w.children_active === active, `want ${id} counts ${w.children_active} derived wants active, ${active} are`);
    check(w.children_failed === failed, `want ${id} counts ${w.children_failed} derived wants failed, ${failed} did`);
  }
  // active_wants_by_ref: exactly the non-terminal wants asking for each ref, no empty lists, no duplicates.
  check(s.active_wants_by_ref.size === activeByRef.size, `active_wants_by_ref has ${s.active_wants_by_ref.size} refs, expected ${activeByRef.size}`);
  for (const [ref, set] of s.active_wants_by_ref) {
    const ids = [...set.values()];
    check(ids.length > 0, `active_wants_by_ref[${ref}] is empty`);
    check(new Set(ids).size === ids.length, `active_wants_by_ref[${ref}] has duplicates`);
    for (const [seq, id] of set) check(s.wants.get(id)?.seq === seq, `active_wants_by_ref[${ref}] keys ${id} by ${seq}`);
    const expected = activeByRef.get(ref) ?? new Set();
    check(ids.length === expected.size && ids.every((id) => expected.has(id)), `active_wants_by_ref[${ref}] = ${ids} but active wants are ${[...expected]}`);
  }
  // run_wants: exactly the wants that list each run among their job_run_ids.
  let listed = 0;
  for (const [id, w] of s.wants) {
    for (const runId of listItems(w.job_run_ids)) {
      listed++;
      check(s.run_wants.get(runId)?.get(w.seq) === id, `run_wants[${runId}] lacks ${id}`);
    }
  }
  let indexed = 0;
  for (const [, set] of s.run_wants) indexed += set.size;
  check(indexed === listed, `run_wants holds ${indexed} entries, the wants list ${listed}`);
  // Queued runs: each once in the launch order, under its priority.
  check(s.queued_by_priority.size === s.job_runs_by_status.queued.size, `queued_by_priority holds ${s.queued_by_priority.size}, ${s.job_runs_by_status.queued.size} runs are queued`);
  for (const [key, id] of s.queued_by_priority) {
    const r = s.job_runs.get(id);
    check(r !== undefined && r.status === 'queued' && key === queueKey(r.priority, r.seq), `queued_by_priority ${key} -> ${id}`);
  }
  // Schedules: the statuses kept of their latest ticks' wants are those wants' statuses now (kept by the fold as each
  // want moves, never read off the wants), the latest the schedule's last want, at most SCHEDULE_RECENT_TICKS of them.
  for (const [name, r] of s.schedules) {
    check(r.recent.length <= SCHEDULE_RECENT_TICKS, `schedule ${name} keeps ${r.recent.length} recent ticks`);
    check(new Set(r.recent.map((x) => x.want_id)).size === r.recent.length, `schedule ${name} lists a want twice`);
    if (r.recent.length > 0) check(r.recent[r.recent.length - 1]!.want_id === r.want_id, `schedule ${name}'s latest recent want is not ${r.want_id}`);
    for (const x of r.recent) check(s.wants.get(x.want_id)?.status === x.status, `schedule ${name} keeps ${x.want_id} as ${x.status}, it is ${s.wants.get(x.want_id)?.status}`);
  }
  // Builds: each once in the history of its partition; the sla counter counts the wants that missed it.
  check(s.build_history.size === s.builds.size, `build_history holds ${s.build_history.size}, there are ${s.builds.size} builds`);
  for (const [key, id] of s.build_history) check(key.startsWith(`${s.builds.get(id)?.partition_ref}\u0000`), `history ${key} -> ${id} is not that build's partition`);
  check(s.wants_sla_missed === [...s.wants.values()].filter((w) => w.sla_missed).length, `wants_sla_missed is ${s.wants_sla_missed}`);
  for (const [key] of s.sla_pending) {
    const w = s.wants.get(key.split('\u0000')[1]!);
    check(w !== undefined && !w.sla_missed && w.status !== 'successful' && w.status !== 'canceled', `sla_pending holds ${key}`);
  }
  // Windows: exactly the released partitions of active windowed wants not settled for them, and no others (a
  // partition reopened by a taint beyond what was released may be open too).
  for (const [key] of s.window_open) {
    const [wantId, ref] = key.split('\u0000') as [string, string];
    const w = s.wants.get(wantId);
    check(w !== undefined && w.window > 0 && !TERMINAL_WANT_STATUSES.has(w.status), `window_open holds ${key} of no active windowed want`);
    if (w) {
      check(w.partitions.includes(ref), `window_open holds ${key}, not a partition of ${wantId}`);
      check(!settled(partitionCategory(s, s.partitions.get(ref), w)), `window_open holds ${key}, settled for ${wantId}`);
    }
  }
  for (const [, w] of s.wants) {
    if (w.window === 0 || TERMINAL_WANT_STATUSES.has(w.status)) continue;
    check(openCount(s, w.want_id) === openRefs(s, w.want_id).length, `${w.want_id}: openCount ${openCount(s, w.want_id)}, ${openRefs(s, w.want_id).length} open refs`);
    for (const ref of w.partitions.slice(0, w.released)) {
      const open = !settled(partitionCategory(s, s.partitions.get(ref), w));
      check(s.window_open.has(`${w.want_id}\u0000${ref}`) === open, `${w.want_id}'s released ${ref} is ${open ? 'not ' : ''}in window_open`);
    }
  }
  // Partitions: in exactly the status index of their status.
  let indexedPartitions = 0;
  for (const st of PARTITION_STATUSES) indexedPartitions += s.partitions_by_status[st].size;
  check(indexedPartitions === s.partitions.size, `partitions_by_status holds ${indexedPartitions}, there are ${s.partitions.size}`);
  for (const [ref, p] of s.partitions) {
    check(p.ref === ref, `partition keyed ${ref} is ${p.ref}`);
    for (const st of PARTITION_STATUSES) {
      const has = s.partitions_by_status[st].has(ref);
      check(has === (st === p.status), `partition ${ref} (${p.status}) ${has ? 'is' : 'is not'} in the ${st} index`);
    }
  }
  // Job runs likewise.
  let indexedRuns = 0;
  for (const st of JOB_RUN_STATUSES) indexedRuns += s.job_runs_by_status[st].size;
  check(indexedRuns === s.job_runs.size, `job_runs_by_status holds ${indexedRuns}, there are ${s.job_runs.size}`);
  check(s.job_run_order.size === s.job_runs.size, `job_run_order holds ${s.job_run_order.size}, there are ${s.job_runs.size}`);
  for (const [id, r] of s.job_runs) {
    check(s.job_run_order.get(r.seq) === id, `job_run_order[${r.seq}] is not ${id}`);
    for (const st of JOB_RUN_STATUSES) {
      const has = s.job_runs_by_status[st].get(r.seq) === id;
      check(has === (st === r.status), `run ${id} (${r.status}) ${has ? 'is' : 'is not'} in the ${st} index`);
    }
  }
  return problems;
}

// arbEventList leaves the array size to fast-check's default ('small': about ten events); longer histories reach
// deeper states (retries, joins, derived wants failing upstream).
fc.configureGlobal({ baseSize: 'medium' });
const pooledEvents = arbEventList({ pooled: true, maxLength: 80 });

// ---------------------------------------------------------------------------------------------------------------
// Properties

test('folding any event list twice gives deep-equal states', (t) => {
  t.notThrows(() =>
    fc.assert(
      fc.property(pooledEvents, (events) => {
        assert.deepStrictEqual(canon(fold(events)), canon(fold(events)));
        // And folding a copy (plain objects, as decoded from the log) agrees too.
        assert.equal(JSON.stringify(canon(fold(structuredClone(events)))), JSON.stringify(canon(fold(events))));
      }),
      { numRuns: 200, includeErrorInReport: true },
    ),
  );
});

test('reduce never mutates its input state or event', (t) => {
  t.notThrows(() =>
    fc.assert(
      fc.property(pooledEvents, (events) => {
        let state = deepFreeze(initialState());
        for (const event of events) {
          const before = JSON.stringify(canon(state));
          const eventBefore = JSON.stringify(event);
          // Frozen inputs: any write to them throws in strict mode (these modules are ESM, so strict).
          const next = reduce(state, deepFreeze(event));
          assert.equal(JSON.stringify(canon(state)), before, `reduce changed its input state on ${event.type}`);
          assert.equal(JSON.stringify(event), eventBefore);
          assert.equal(next.last_event_id, event.event_id);
          state = deepFreeze(next);
        }
      }),
      { numRuns: 120, includeErrorInReport: true },
    ),
  );
});

test('the indexes agree with the records after any event list, and after every prefix of it', (t) => {
  t.notThrows(() =>
    fc.assert(
      fc.property(pooledEvents, (events) => {
        let state = initialState();
        for (const event of events) {
          state = reduce(state, event);
          assert.deepEqual(indexViolations(state), [], `after event ${event.event_id} (${event.type})`);
        }
      }),
      { numRuns: 200, includeErrorInReport: true },
    ),
  );
});

test("a windowed want's open count is its own open refs, not a neighbour's whose id it begins or ends", (t) => {
  let open = initialState().window_open;
  const keys: Array<[string, string]> = [['w-1', 'a'], ['w-10', 'a'], ['w-10', 'b'], ['w-12', 'a'], ['w-120', 'a'], ['w-120', 'b'], ['w-120', 'c'], ['w-2', 'z']];
  for (const [id, ref] of keys) open = open.set(`${id}\u0000${ref}`, true);
  const s = { window_open: open };
  for (const id of ['w-1', 'w-10', 'w-12', 'w-120', 'w-2', 'w-3']) {
    t.is(openCount(s, id), keys.filter(([k]) => k === id).length, id);
    t.is(openCount(s, id), openRefs(s, id).length, id);
  }
});

test('the pooled generator reaches the interesting states, so the properties are not vacuous', (t) => {
  const seen = new Set<string>();
  for (const events of fc.sample(pooledEvents, { seed: 1, numRuns: 1500 })) {
    const s = fold(events);
    for (const st of WANT_STATUSES) if (s.wants_by_status[st].size > 0) seen.add(`want:${st}`);
    for (const st of PARTITION_STATUSES) if (s.partitions_by_status[st].size > 0) seen.add(`partition:${st}`);
    for (const st of JOB_RUN_STATUSES) if (s.job_runs_by_status[st].size > 0) seen.add(`run:${st}`);
  }
  for (const want of ['want:idle', 'want:building', 'want:successful', 'want:failed', 'want:canceled', 'want:upstream_failed', 'want:upstream_building', 'partition:live', 'partition:canceled', 'partition:tainted', 'partition:failed', 'run:succeeded', 'run:failed', 'run:dep_missed']) {
    t.true(seen.has(want), `${want} never reached; seen ${[...seen].join(', ')}`);
  }
});

test('replaying the log gives the incremental state, and rebuilding writes nothing', async (t) => {
  const root = await makeWorkspace(t, 'platform-state-');
  let run = 0;
  let longest = 0;

  await t.notThrowsAsync(
    fc.assert(
      fc.asyncProperty(pooledEvents, fc.integer({ min: 1, max: 7 }), async (events, chunk) => {
        // A fresh real log per run, so a counterexample stands on its own.
        const dir = join(root, `log-${++run}`);
        const log = await EventLog.open(dir);
        const store = await StateStore.open(log);
        try {
          let incremental = initialState();
          // Append in batches, as the orchestrator does; fold what append hands back.
          for (let i = 0; i < events.length; i += chunk) {
            const batch = events.slice(i, i + chunk);
            const payloads = batch.map(({ event_id: _id, timestamp: _ts, ...payload }) => payload as EventPayload);
            const stored = await log.append(payloads, batch[0]!.timestamp);
            assert.equal(stored.length, batch.length);
            incremental = fold(stored, incremental);
          }
          assert.equal(incremental.last_event_id, log.latestId());
          longest = Math.max(longest, log.latestId());
          // The live store followed along through appended$.
          assert.deepStrictEqual(canon(store.current()), canon(incremental));

          const latestBefore = log.latestId();
          const listBefore = await log.list(0, latestBefore + 10);
          const replayed = await replayLog(log);
          const replayedAgain = await replayLog(log);
          assert.equal(log.latestId(), latestBefore, 'replay appended nothing');
          assert.deepStrictEqual(await log.list(0, latestBefore + 10), listBefore, 'replay changed no stored event');
          // Compared as JSON: decoded events are plain objects, the generated ones may have null prototypes.
          assert.equal(JSON.stringify(canon(replayed)), JSON.stringify(canon(incremental)));
          assert.deepStrictEqual(canon(replayedAgain), canon(replayed));
          assert.deepEqual(indexViolations(replayed), []);

          // A fresh open of the same directory (what a restart does) replays to the same state.
          store.close();
          await log.close();
          const reopened = await EventLog.open(dir);
          try {
            const reopenedStore = await StateStore.open(reopened);
            assert.equal(JSON.stringify(canon(reopenedStore.current())), JSON.stringify(canon(incremental)));
            assert.equal(reopened.latestId(), latestBefore);
            reopenedStore.close();
          } finally {
            await reopened.close();
          }
        } finally {
          store.close();
          await log.close();
          await rm(dir, { recursive: true, force: true });
        }
      }),
      { numRuns: 40, includeErrorInReport: true },
    ),
  );
  t.true(longest > 10, 'some runs appended a real history');
});

// ---------------------------------------------------------------------------------------------------------------
// Hand-written transitions

function wantCreated(want_id: string, partitions: string[], extra: Partial<Extract<EventPayload, { type: 'want_created' }>['want_created']> = {}): EventPayload {
  return {
    type: 'want_created',
    want_created: {
      want_id,
      partitions,
      comment: '',
      data_timestamp: 0,
      ttl_seconds: 0,
      sla_seconds: 0,
      source: 'user',
      parent_want_id: '',
      root_want_id: '',
      rebuild: 'missing', priority: 0, backfill_id: '', max_concurrent_job_runs: 0, pattern: '', schedule_tick: 0,
      ...extra,
    },
  };
}
const config = (outputs: string[], inputs: JobConfig['inputs'] = []): JobConfig => ({ outputs, inputs, args: [], env: {} });
const queued = (job_run_id: string, outputs: string[], want_ids: string[], attempt = 1): EventPayload => ({
  type: 'job_run_queued',
  job_run_queued: { job_run_id, job_label: 'job', config: config(outputs), want_ids, attempt, exec: [], timeout_seconds: 0, input_builds: [], job_fingerprint: '', output_inputs: [], retry_of: '' },
});
const started = (job_run_id: string, pid: number): EventPayload => ({ type: 'job_run_started', job_run_started: { job_run_id, pid, worker: 'local', started_at: 0 } });
const succeeded = (job_run_id: string): EventPayload => ({ type: 'job_run_succeeded', job_run_succeeded: { job_run_id, builds: [], ended_at: 0 } });
const failed = (job_run_id: string, retry_at = 0, exit_code = 1): EventPayload => ({
  type: 'job_run_failed',
  job_run_failed: { job_run_id, exit_code, signal: '', reason: `exited with code ${exit_code}`, retry_at, ended_at: 0 },
});
const runCanceled = (job_run_id: string, reason = 'want canceled'): EventPayload => ({ type: 'job_run_canceled', job_run_canceled: { job_run_id, reason } });
const wantCanceled = (want_id: string, reason = 'by request'): EventPayload => ({ type: 'want_canceled', want_canceled: { want_id, reason } });
const depMissed = (job_run_id: string, missing: string[]): EventPayload => ({ type: 'job_run_dep_missed', job_run_dep_missed: { job_run_id, missing, ended_at: 0 } });
const tainted = (partition_ref: string): EventPayload => ({ type: 'partition_tainted', partition_tainted: { partition_ref, reason: 'bad data' } });

const wantStatus = (s: BuildState, id: string) => s.wants.get(id)?.status;
const idsIn = (index: OrderedMap<number, string>) => [...index.values()];

test('a run handed to a queue starts when a worker takes it (job_run_placed): its wait is not its duration', (t) => {
  let s = apply(initialState(), wantCreated('w1', ['p1']), queued('r1', ['p1'], ['w1']));
  s = apply(s, { type: 'job_run_started', job_run_started: { job_run_id: 'r1', pid: 0, worker: 'redis:runs', started_at: 0 } });
  t.is(s.job_runs.get('r1')!.started_at, T0 + 3000, 'handed to the queue');
  s = apply(s, { type: 'job_run_placed', job_run_placed: { job_run_id: 'r1', worker: 'gpu-1', pid: 77, started_at: 0 } });
  t.like(s.job_runs.get('r1')!, { started_at: T0 + 4000, worker: 'gpu-1', pid: 77 });
  s = apply(s, succeeded('r1'));
  const r1 = s.job_runs.get('r1')!;
  t.is(r1.ended_at! - r1.started_at!, 1000, 'from the worker taking it to its end');
});

test("a run's end event that says when the job ended (it ended while no daemon ran) ends it then, within its start and the event", (t) => {
  const ended = (endedAt: number): number => {
    // Events at T0+1000 (want), +2000 (queued), +3000 (started), +4000 (the end).
    const s = apply(initialState(), wantCreated('w1', ['p1']), queued('r1', ['p1'], ['w1']), started('r1', 7), {
      type: 'job_run_succeeded',
      job_run_succeeded: { job_run_id: 'r1', builds: [{ partition_ref: 'p1', build_id: 'b-1' }], ended_at: endedAt },
    });
    t.is(s.partitions.get('p1')?.status, 'live');
    return s.job_runs.get('r1')!.ended_at!;
  };
  t.is(ended(T0 + 3400), T0 + 3400, 'when the job ended');
  t.is(ended(0), T0 + 4000, 'not given: the event time');
  t.is(ended(T0 + 100), T0 + 3000, 'not before its start (a clock set back)');
  t.is(ended(T0 + 9000), T0 + 4000, 'not after the event');
  const failedAt = apply(initialState(), wantCreated('w1', ['p1']), queued('r1', ['p1'], ['w1']), started('r1', 7), {
    type: 'job_run_failed',
    job_run_failed: { job_run_id: 'r1', exit_code: 2, signal: '', reason: 'exited with code 2', retry_at: 0, ended_at: T0 + 3250 },
  });
  t.is(failedAt.job_runs.get('r1')!.ended_at, T0 + 3250);
});

test("a start event that says when the job started (a killed daemon started it, the next one adopted it) starts it then, within its queueing and the event", (t) => {
  const startedAt = (at: number): number => {
    // Events at T0+1000 (want), +2000 (queued), +3000 (started).
    const s = apply(initialState(), wantCreated('w1', ['p1']), queued('r1', ['p1'], ['w1']), {
      type: 'job_run_started',
      job_run_started: { job_run_id: 'r1', pid: 7, worker: 'local', started_at: at },
    });
    t.is(s.job_runs.get('r1')!.status, 'running');
    return s.job_runs.get('r1')!.started_at!;
  };
  t.is(startedAt(T0 + 2400), T0 + 2400, 'when the job started');
  t.is(startedAt(0), T0 + 3000, 'not given: the event time');
  t.is(startedAt(T0 + 100), T0 + 2000, 'not before it was queued (a clock set back)');
  t.is(startedAt(T0 + 9000), T0 + 3000, 'not after the event');
});

test('a placement that says when the worker took the run (taken while no daemon ran) starts it then, and its true end stands', (t) => {
  const handedOver: EventPayload = { type: 'job_run_started', job_run_started: { job_run_id: 'r1', pid: 0, worker: 'redis:runs', started_at: 0 } };
  // Events at T0+1000 (want), +2000 (queued), +3000 (handed over), +4000 (placed), +5000 (its end).
  let s = apply(initialState(), wantCreated('w1', ['p1']), queued('r1', ['p1'], ['w1']), handedOver);
  s = apply(s, { type: 'job_run_placed', job_run_placed: { job_run_id: 'r1', worker: 'w4', pid: 77, started_at: T0 + 3500 } });
  t.like(s.job_runs.get('r1')!, { status: 'running', worker: 'w4', pid: 77, started_at: T0 + 3500 }, 'when the worker took it, not when it was told (T0+4000)');
  s = apply(s, { type: 'job_run_succeeded', job_run_succeeded: { job_run_id: 'r1', builds: [{ partition_ref: 'p1', build_id: 'b-1' }], ended_at: T0 + 3800 } });
  const r1 = s.job_runs.get('r1')!;
  t.is(r1.ended_at, T0 + 3800, 'its own end, not clamped up to a late start');
  t.is(r1.ended_at! - r1.started_at!, 300);
  const placed = (at: number) =>
    apply(initialState(), wantCreated('w1', ['p1']), queued('r1', ['p1'], ['w1']), handedOver, {
      type: 'job_run_placed',
      job_run_placed: { job_run_id: 'r1', worker: 'w4', pid: 77, started_at: at },
    }).job_runs.get('r1')!.started_at;
  t.is(placed(0), T0 + 4000, 'not given (every older log): the event time, as before');
  t.is(placed(T0 + 100), T0 + 2000, 'not before it was queued (a worker clock behind)');
  t.is(placed(T0 + 9000), T0 + 4000, 'not after the event');
});

test('a run canceled while it waited in a queue for a worker never started: no start, no duration, no worker, as one canceled while queued', (t) => {
  const handedOver: EventPayload = { type: 'job_run_started', job_run_started: { job_run_id: 'r1', pid: 0, worker: 'redis:runs', started_at: 0 } };
  let s = apply(initialState(), wantCreated('w1', ['p1']), queued('r1', ['p1'], ['w1']), handedOver, runCanceled('r1'));
  t.like(s.job_runs.get('r1')!, { status: 'canceled', started_at: null, ended_at: T0 + 4000, worker: '', pid: 0 });
  const local = apply(initialState(), wantCreated('w1', ['p1']), queued('r1', ['p1'], ['w1']), runCanceled('r1')).job_runs.get('r1')!;
  t.like(local, { status: 'canceled', started_at: null, worker: '', pid: 0 }, 'as a local run canceled while queued');
  // A worker had taken it, its word told after the cancel: it did start, up to the cancel.
  s = apply(s, { type: 'job_run_placed', job_run_placed: { job_run_id: 'r1', worker: 'w4', pid: 77, started_at: T0 + 3500 } });
  t.like(s.job_runs.get('r1')!, { status: 'canceled', started_at: T0 + 3500, ended_at: T0 + 4000, worker: 'w4', pid: 77 });
  // Canceled once a worker had it: its start and worker stay.
  const taken = apply(
    initialState(),
    wantCreated('w1', ['p1']),
    queued('r1', ['p1'], ['w1']),
    handedOver,
    { type: 'job_run_placed', job_run_placed: { job_run_id: 'r1', worker: 'w4', pid: 77, started_at: 0 } },
    runCanceled('r1'),
  ).job_runs.get('r1')!;
  t.like(taken, { status: 'canceled', started_at: T0 + 4000, ended_at: T0 + 5000, worker: 'w4' });
});

test("a 'stale' or 'all' want that joined a run queued before the job was edited does not end on that run's build: it is stale at once", (t) => {
  for (const rebuild of ['stale', 'all'] as const) {
    const queuedOld: EventPayload = {
      type: 'job_run_queued',
      job_run_queued: { job_run_id: 'r1', job_label: 'job', config: config(['p1']), want_ids: ['w1'], attempt: 1, exec: [], timeout_seconds: 0, input_builds: [], job_fingerprint: 'f1', output_inputs: [], retry_of: '' },
    };
    let s = apply(initialState(), wantCreated('w1', ['p1']), queuedOld, started('r1', 7));
    s = apply(s, { type: 'job_definitions_changed', job_definitions_changed: { jobs: [{ job_label: 'job', fingerprint: 'f2' }] } });
    s = apply(s, wantCreated('w2', ['p1'], { rebuild }));
    t.is(wantStatus(s, 'w2'), 'building', `${rebuild}: it joins the run`);
    s = apply(s, { type: 'job_run_succeeded', job_run_succeeded: { job_run_id: 'r1', builds: [{ partition_ref: 'p1', build_id: 'b-1' }], ended_at: 0 } });
    t.deepEqual(s.partitions.get('p1')!.stale_reasons, ['job job changed since this build (fingerprint f1 -> f2)']);
    t.is(wantStatus(s, 'w1'), 'successful', 'a want for what is missing takes the build');
    t.not(wantStatus(s, 'w2'), 'successful', `${rebuild}: the build is stale, so it must rebuild`);
  }
});

test("a 'stale' want takes its own rebuild though an input it only queries stays stale: it does not rebuild for ever", (t) => {
  const run = (id: string, out: string, inputs: Array<[string, string]>, wants: string[] = []): EventPayload => ({
    type: 'job_run_queued',
    job_run_queued: {
      job_run_id: id, job_label: 'job', want_ids: wants, attempt: 1, exec: [], timeout_seconds: 0, job_fingerprint: '', output_inputs: [], retry_of: '',
      config: { outputs: [out], inputs: inputs.map(([ref]) => ({ dep_type: 'QUERY' as const, partition_ref: ref })), args: [], env: {} },
      input_builds: inputs.map(([partition_ref, build_id]) => ({ partition_ref, build_id })),
    },
  });
  const built = (id: string, out: string, build: string): EventPayload => ({ type: 'job_run_succeeded', job_run_succeeded: { job_run_id: id, builds: [{ partition_ref: out, build_id: build }], ended_at: 0 } });
  let s = apply(
    initialState(),
    run('r1', 'r', []), built('r1', 'r', 'b-1'),
    run('r2', 'q', [['r', 'b-1']]), built('r2', 'q', 'b-2'),
    run('r3', 'p', [['q', 'b-2']]), built('r3', 'p', 'b-3'),
    run('r4', 'r', []), built('r4', 'r', 'b-4'),
  );
  t.deepEqual(s.partitions.get('p')!.stale_reasons, ['input q is stale']);
  s = apply(s, wantCreated('w1', ['p'], { rebuild: 'stale' }));
  t.not(wantStatus(s, 'w1'), 'successful', 'p is stale: it is rebuilt');
  s = apply(s, run('r5', 'p', [['q', 'b-2']], ['w1']), built('r5', 'p', 'b-5'));
  t.deepEqual(s.partitions.get('p')!.stale_reasons, ['input q is stale'], 'still stale: q is only queried, and nobody rebuilt it');
  t.is(wantStatus(s, 'w1'), 'successful', 'its own rebuild is taken');
});

test("a 'stale' want that joined a run queued before it does not end on that run's build when it came out stale; on its own rebuild's it does", (t) => {
  const run = (id: string, out: string, inputs: Array<[string, string]>, wants: string[]): EventPayload => ({
    type: 'job_run_queued',
    job_run_queued: {
      job_run_id: id, job_label: 'job', want_ids: wants, attempt: 1, exec: [], timeout_seconds: 0, job_fingerprint: '', output_inputs: [], retry_of: '',
      config: { outputs: [out], inputs: inputs.map(([ref]) => ({ dep_type: 'MATERIALIZE' as const, partition_ref: ref })), args: [], env: {} },
      input_builds: inputs.map(([partition_ref, build_id]) => ({ partition_ref, build_id })),
    },
  });
  const built = (id: string, out: string, build: string): EventPayload => ({ type: 'job_run_succeeded', job_run_succeeded: { job_run_id: id, builds: [{ partition_ref: out, build_id: build }], ended_at: 0 } });
  let s = apply(initialState(), wantCreated('w0', ['q', 'p']), run('r1', 'q', [], ['w0']), built('r1', 'q', 'b-1'), run('r2', 'p', [['q', 'b-1']], ['w0']));
  // q is built again (someone's taint, say) while p's run, which read q's first build, still runs; then a want for
  // what is stale joins that run.
  s = apply(s, wantCreated('w9', ['q'], { rebuild: 'all' }), run('r3', 'q', [], ['w9']), built('r3', 'q', 'b-2'));
  s = apply(s, wantCreated('w1', ['p'], { rebuild: 'stale' }));
  t.is(wantStatus(s, 'w1'), 'building', 'it joins the run in flight');
  s = apply(s, built('r2', 'p', 'b-3'));
  t.deepEqual(s.partitions.get('p')!.stale_reasons, ['input q was rebuilt since b-1']);
  t.not(wantStatus(s, 'w1'), 'successful', 'the joined run built from what was there before the want: rebuilt');
  s = apply(s, run('r4', 'p', [['q', 'b-2']], ['w1']), built('r4', 'p', 'b-4'));
  t.deepEqual(s.partitions.get('p')!.stale_reasons, []);
  t.is(wantStatus(s, 'w1'), 'successful');
});

test('want -> job queued -> started -> succeeded: the want ends successful, the partition live', (t) => {
  let s = apply(initialState(), wantCreated('w1', ['p1', 'p2', 'p1']));
  const w = s.wants.get('w1')!;
  t.is(w.status, 'idle');
  t.deepEqual(w.partitions, ['p1', 'p2']);
  t.is(w.root_want_id, 'w1', 'a want with no root is its own root');
  t.is(w.created_at, T0 + 1000);
  t.deepEqual([...activeWantsOn(s, 'p1')], ['w1']);
  t.deepEqual(idsIn(s.wants_by_status.idle), ['w1']);
  t.false(s.partitions.has('p1'), 'a ref never built is absent');

  s = apply(s, queued('r1', ['p1'], ['w1']), queued('r2', ['p2'], ['w1']));
  t.is(wantStatus(s, 'w1'), 'building');
  t.deepEqual(listArray(s.wants.get('w1')!.job_run_ids), ['r1', 'r2']);
  t.is(s.job_runs.get('r1')!.status, 'queued');
  t.is(s.partitions.get('p1')!.status, 'building');
  t.is(s.partitions.get('p1')!.job_run_id, 'r1');
  t.deepEqual(idsIn(s.wants_by_status.building), ['w1']);
  t.deepEqual(idsIn(s.wants_by_status.idle), []);

  s = apply(s, started('r1', 4242));
  const r1 = s.job_runs.get('r1')!;
  t.is(r1.status, 'running');
  t.is(r1.pid, 4242);
  t.is(r1.started_at, T0 + 4000);
  t.deepEqual(idsIn(s.job_runs_by_status.running), ['r1']);

  s = apply(s, succeeded('r1'));
  t.is(s.job_runs.get('r1')!.status, 'succeeded');
  t.is(s.job_runs.get('r1')!.exit_code, 0);
  t.is(s.job_runs.get('r1')!.ended_at, T0 + 5000);
  t.is(s.partitions.get('p1')!.status, 'live');
  t.is(wantStatus(s, 'w1'), 'building', 'one of two partitions is live: still building');

  s = apply(s, started('r2', 4343), succeeded('r2'));
  t.is(wantStatus(s, 'w1'), 'successful');
  t.is(s.wants.get('w1')!.updated_at, T0 + 7000);
  t.deepEqual(idsIn(s.wants_by_status.successful), ['w1']);
  t.deepEqual(idsIn(s.wants_by_status.building), []);
  t.false(s.active_wants_by_ref.has('p1'), 'a terminal want is no longer active for its refs');
  t.deepEqual([...s.partitions_by_status.live.keys()], ['p1', 'p2']);

  // A later want for live partitions is successful at once; a duplicate want_created changes nothing.
  s = apply(s, wantCreated('w2', ['p2']));
  t.is(wantStatus(s, 'w2'), 'successful');
  const dup = apply(s, wantCreated('w2', ['p9']));
  t.deepEqual(dup.wants.get('w2'), s.wants.get('w2'));
  t.deepEqual(indexViolations(dup), []);
});

test('a failure with retry_at keeps the partition building; the retry succeeds', (t) => {
  let s = apply(initialState(), wantCreated('w1', ['p1']), queued('r1', ['p1'], ['w1']), started('r1', 10));
  const retryAt = T0 + 60_000;
  s = apply(s, failed('r1', retryAt, 2));
  const r1 = s.job_runs.get('r1')!;
  t.is(r1.status, 'failed');
  t.is(r1.exit_code, 2);
  t.is(r1.retry_at, retryAt);
  t.is(s.partitions.get('p1')!.status, 'building', 'a retried failure keeps the partition building');
  const status = wantStatus(s, 'w1')!;
  t.false(TERMINAL_WANT_STATUSES.has(status), `the want waits for the retry, got ${status}`);
  t.true(['building', 'upstream_building'].includes(status), status);
  t.deepEqual([...activeWantsOn(s, 'p1')], ['w1']);

  s = apply(s, queued('r2', ['p1'], ['w1'], 2));
  t.is(wantStatus(s, 'w1'), 'building');
  t.is(s.partitions.get('p1')!.job_run_id, 'r2');
  t.deepEqual(listArray(s.wants.get('w1')!.job_run_ids), ['r1', 'r2']);
  t.is(s.job_runs.get('r2')!.attempt, 2);

  s = apply(s, started('r2', 11), succeeded('r2'));
  t.is(wantStatus(s, 'w1'), 'successful');
  t.is(s.job_runs.get('r1')!.status, 'failed', 'the first attempt stays failed on record');
  t.deepEqual(indexViolations(s), []);
});

test('a final failure fails the want and makes every want above it upstream_failed', (t) => {
  // root (asks for q1) <- mid (derived: asks for m1) <- leaf (derived: asks for p1)
  let s = apply(
    initialState(),
    wantCreated('root', ['q1']),
    wantCreated('mid', ['m1'], { source: 'derived', parent_want_id: 'root', root_want_id: 'root', rebuild: 'missing', priority: 0 }),
    wantCreated('leaf', ['p1'], { source: 'derived', parent_want_id: 'mid', root_want_id: 'root', rebuild: 'missing', priority: 0 }),
  );
  t.deepEqual(listArray(s.wants.get('root')!.child_want_ids), ['mid']);
  t.deepEqual(listArray(s.wants.get('mid')!.child_want_ids), ['leaf']);
  t.is(wantStatus(s, 'root'), 'upstream_building', 'waiting on a derived want');
  t.is(wantStatus(s, 'mid'), 'upstream_building');
  t.is(wantStatus(s, 'leaf'), 'idle');

  s = apply(s, queued('r1', ['p1'], ['leaf']), started('r1', 7));
  t.is(wantStatus(s, 'leaf'), 'building');
  t.is(wantStatus(s, 'root'), 'upstream_building');

  s = apply(s, failed('r1', 0, 3));
  t.is(s.partitions.get('p1')!.status, 'failed');
  t.is(wantStatus(s, 'leaf'), 'failed');
  t.is(wantStatus(s, 'mid'), 'upstream_failed');
  t.is(wantStatus(s, 'root'), 'upstream_failed');
  t.deepEqual(idsIn(s.wants_by_status.upstream_failed).sort(), ['mid', 'root']);
  t.is(s.active_wants_by_ref.size, 0, 'no want is active any more');

  // A failure older than a want is not that want's failure: it is why the want rebuilds.
  s = apply(s, wantCreated('again', ['p1']));
  t.is(wantStatus(s, 'again'), 'idle');
  s = apply(s, queued('r2', ['p1'], ['again']), started('r2', 8), failed('r2', 0));
  t.is(wantStatus(s, 'again'), 'failed', 'its own failure does fail it');
  t.deepEqual(indexViolations(s), []);
});

test('cancel: the want is canceled, its run canceled, its partition canceled; repeats and late outcomes change nothing', (t) => {
  let s = apply(
    initialState(),
    wantCreated('w1', ['p1']),
    queued('r1', ['p1'], ['w1']),
    started('r1', 99),
    // w2 joins the same partition, w3 wants another one.
    wantCreated('w2', ['p1']),
    wantCreated('w3', ['p3']),
    queued('r3', ['p3'], ['w3']),
  );
  t.deepEqual(listArray(s.wants.get('w2')!.job_run_ids), ['r1'], 'a want for a partition being built joins its run');
  t.is(wantStatus(s, 'w2'), 'building');
  t.deepEqual([...activeWantsOn(s, 'p1')], ['w1', 'w2']);

  s = apply(s, wantCanceled('w1', 'changed my mind'));
  t.is(wantStatus(s, 'w1'), 'canceled');
  t.is(s.wants.get('w1')!.cancel_reason, 'changed my mind');
  t.deepEqual([...activeWantsOn(s, 'p1')], ['w2'], 'the joined want still wants p1');
  t.is(s.job_runs.get('r1')!.status, 'running', 'a run another want needs goes on');

  s = apply(s, wantCanceled('w3'), runCanceled('r3'));
  t.is(wantStatus(s, 'w3'), 'canceled');
  t.is(s.job_runs.get('r3')!.status, 'canceled');
  t.is(s.job_runs.get('r3')!.reason, 'want canceled');
  t.is(s.partitions.get('p3')!.status, 'canceled');
  t.false(s.active_wants_by_ref.has('p3'));
  t.deepEqual(idsIn(s.wants_by_status.canceled), ['w1', 'w3']);

  // Canceling again, or a late outcome of the canceled run, changes nothing but the event id.
  const again = apply(s, wantCanceled('w3', 'twice'), succeeded('r3'));
  t.deepEqual({ ...canon(again), last_event_id: 0 }, { ...canon(s), last_event_id: 0 });
  // A start heard after the cancel (it was being launched) is recorded, from when it was canceled: it ran for a
  // moment. Its status stays; a second start changes nothing.
  const startedLate = apply(s, started('r3', 5));
  t.like(startedLate.job_runs.get('r3'), { status: 'canceled', pid: 5, started_at: s.job_runs.get('r3')!.ended_at });
  t.deepEqual({ ...canon(apply(startedLate, started('r3', 6))), last_event_id: 0 }, { ...canon(startedLate), last_event_id: 0 });
  t.is(startedLate.job_runs_by_status.canceled.size, s.job_runs_by_status.canceled.size);

  // The run w2 still needs finishes: w2 successful, w1 stays canceled (terminal is final).
  s = apply(s, succeeded('r1'));
  t.is(wantStatus(s, 'w2'), 'successful');
  t.is(wantStatus(s, 'w1'), 'canceled');

  // A successful want cannot be canceled by an event either.
  const late = apply(s, wantCanceled('w2'));
  t.is(wantStatus(late, 'w2'), 'successful');
  t.deepEqual(indexViolations(late), []);
});

test('dep_missed keeps the outputs building; a taint marks a live partition without reopening finished wants', (t) => {
  let s = apply(initialState(), wantCreated('w1', ['p1']), queued('r1', ['p1'], ['w1']), started('r1', 1), depMissed('r1', ['p0']));
  t.is(s.job_runs.get('r1')!.status, 'dep_missed');
  t.deepEqual(s.job_runs.get('r1')!.missing, ['p0']);
  t.is(s.partitions.get('p1')!.status, 'building');
  t.false(TERMINAL_WANT_STATUSES.has(wantStatus(s, 'w1')!));

  s = apply(s, queued('r2', ['p1'], ['w1']), started('r2', 2), succeeded('r2'));
  t.is(wantStatus(s, 'w1'), 'successful');
  const liveSince = s.partitions.get('p1')!.changed_event_id;

  s = apply(s, tainted('p1'));
  t.is(s.partitions.get('p1')!.status, 'tainted');
  t.true(s.partitions.get('p1')!.changed_event_id > liveSince);
  t.is(wantStatus(s, 'w1'), 'successful');
  t.deepEqual([...s.partitions_by_status.tainted.keys()], ['p1']);
  t.deepEqual([...s.partitions_by_status.live.keys()], []);

  const unknown = apply(s, tainted('nope'));
  t.false(unknown.partitions.has('nope'));
  t.deepEqual(indexViolations(unknown), []);
});
