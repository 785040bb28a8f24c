/**
 * The fold takes the planner's state for a step's own events (StateStore.expectFold) instead of reducing them
 * again. It must come to exactly what reducing the log does: checked on a real build (retries, a failure and its
 * upstream failure, a join of two wants on one ref) against a fold of the whole log from nothing, and on the store
 * itself, where a planned result that does not follow from the state is never taken.
 */
import test from 'ava';
import { join } from 'node:path';
import { EventLog } from '../lib/events/event-log.js';
import type { EventPayload } from '../lib/events/build-event.js';
import { initialState, type BuildState } from '../lib/state/build-state.js';
import { reduce } from '../lib/state/reduce.js';
import { StateStore } from '../lib/state/state-store.js';
import { bash, makeWorkspace, openPlatform, waitForWant, want } from './helpers/jobs-fixture.js';
import { canon } from './helpers/state-canon.js';

/** A one-partition want made by a user. */
const created = (i: number): EventPayload => ({
  type: 'want_created',
  want_created: {
    want_id: `w-${i}`, partitions: [`p/${i}`], comment: '', data_timestamp: 0, ttl_seconds: 0, sla_seconds: 0, source: 'user', parent_want_id: '',
    root_want_id: `w-${i}`, rebuild: 'missing', priority: 0, backfill_id: '', max_concurrent_job_runs: 0, pattern: '', schedule_tick: 0,
  },
});
const at = 1_700_000_000_000;
/** What the planner folds a batch to from `base`: the events as the log will number them. */
const plan = (base: BuildState, payloads: EventPayload[]): BuildState =>
  payloads.reduce((s, p, i) => reduce(s, { event_id: base.last_event_id + 1 + i, timestamp: at, ...p } as never), base);

async function foldOfLog(log: EventLog): Promise<BuildState> {
  let state = initialState();
  for await (const batch of log.replay()) for (const e of batch) state = reduce(state, e);
  return state;
}

test("a build's state, kept with the planner's states, equals the fold of its log from nothing", async (t) => {
  const dir = makeWorkspace(t);
  const graph = {
    max_concurrent_job_runs: 2,
    jobs: [
      { label: 'raw', outputs: ['raw/(?<n>\\d+)'], exec: bash('echo raw') },
      { label: 'daily', outputs: ['daily/(?<n>\\d+)'], inputs: [{ partition_ref: 'raw/${n}', dep_type: 'MATERIALIZE' }], exec: bash('echo daily') },
      { label: 'flaky', outputs: ['flaky/(?<n>\\d+)'], retries: 1, exec: bash('if [ -e flaky-ok ]; then exit 0; fi; touch flaky-ok; exit 4') },
      { label: 'bad', outputs: ['bad/(?<n>\\d+)'], exec: bash('exit 3') },
      { label: 'after', outputs: ['after/(?<n>\\d+)'], inputs: [{ partition_ref: 'bad/${n}', dep_type: 'MATERIALIZE' }], exec: bash('echo never') },
    ],
  };
  const platform = await openPlatform(t, dir, graph, { executor: 'supervised' });
  const ids = [
    await want(platform, Array.from({ length: 12 }, (_, i) => `daily/${i}`)),
    await want(platform, ['daily/3', 'daily/4', 'raw/20']),
    await want(platform, ['flaky/1']),
    await want(platform, ['after/1']),
  ];
  for (const id of ids) await waitForWant(platform, id, ['successful', 'failed', 'upstream_failed'], 30_000);
  const kept = platform.state();
  t.true(kept.last_event_id > 50, `a build of some size (${kept.last_event_id} events)`);
  t.deepEqual(canon(kept), canon(await foldOfLog(platform.log)));
});

test("a close that cancels the running runs leaves the state its planned step made, which is the fold of the log", async (t) => {
  const dir = makeWorkspace(t);
  const graph = {
    jobs: [
      { label: 'slow', outputs: ['slow'], exec: bash('sleep 60') },
      { label: 'down', outputs: ['down/(?<n>\\d+)'], inputs: [{ partition_ref: 'slow', dep_type: 'MATERIALIZE' }], exec: bash('echo down') },
    ],
  };
  const platform = await openPlatform(t, dir, graph, { executor: 'supervised' });
  const ids = [];
  for (let i = 0; i < 20; i++) ids.push(await want(platform, [`down/${i}`]));
  for (const id of ids) await waitForWant(platform, id, ['upstream_building'], 10_000);
  await platform.close({ cancelRuns: true });
  const kept = platform.state();
  t.is(kept.job_runs_by_status.canceled.size, 1, 'the slow run is recorded canceled');
  const log = await EventLog.open(join(dir, '.platform', 'bel'));
  t.teardown(() => log.close());
  t.deepEqual(canon(kept), canon(await foldOfLog(log)));
});

test('the store takes a planned result only for the events that follow its base; otherwise it reduces', async (t) => {
  const dir = makeWorkspace(t);
  const log = await EventLog.open(join(dir, '.platform', 'bel'));
  t.teardown(() => log.close());
  const store = await StateStore.open(log);

  // Planned from the current state: taken as it is (the very object), after the batch's last event.
  const base = store.current();
  const batch = [created(1), created(2)];
  const planned = plan(base, batch);
  store.expectFold(base, planned, batch);
  await log.append(batch, at);
  t.is(store.current(), planned);

  // A planned result from a state that is not the store's: ignored, the events are reduced.
  const other = [created(9)];
  const stale = plan(initialState(), other);
  store.expectFold(initialState(), stale, other);
  await log.append([created(3)], at);
  t.not(store.current(), stale);
  t.true(store.current().wants.has('w-3'));
  t.false(store.current().wants.has('w-9'));

  // The same ids from the store's own state, but other payloads (a reopen emitting an earlier failed batch's events):
  // not the planned batch, so reduced. Here the planned one would have made w-7, the log holds w-4.
  const now = store.current();
  const mine = [created(7)];
  const notThese = plan(now, mine);
  store.expectFold(now, notThese, mine);
  await log.append([created(4)], at);
  t.not(store.current(), notThese);
  t.true(store.current().wants.has('w-4'));
  t.false(store.current().wants.has('w-7'));
  t.deepEqual(canon(store.current()), canon(await foldOfLog(log)));
});

test('a snapshot that starts in the middle of a planned batch does not put in place a state that missed its first events', async (t) => {
  const dir = makeWorkspace(t);
  const log = await EventLog.open(join(dir, '.platform', 'bel'));
  t.teardown(() => log.close());
  await log.append(Array.from({ length: 20 }, (_, i) => created(i + 1)), at);
  const path = join(dir, '.platform', 'snapshot.bin');
  const store = await StateStore.open(log, path);
  t.teardown(() => store.close());
  // A planned batch: the state stays its base until the last event. A snapshot started at the first event (as the
  // background one does when it is due then) is of the base, and hears the batch from its second event on.
  const base = store.current();
  const batch = [created(21), created(22), created(23)];
  const planned = plan(base, batch);
  let started: Promise<boolean> | undefined;
  const listening = log.appended$.subscribe((event) => {
    if (event.event_id === base.last_event_id + 1) started = store.saveSnapshot(path, 1);
  });
  store.expectFold(base, planned, batch);
  await log.append(batch, at);
  listening.unsubscribe();
  t.true(await started, 'a snapshot was written from the middle of the batch');
  await store.idle();
  t.true(store.current().wants.has('w-21'), 'the first event of the batch is in the state');
  t.deepEqual(canon(store.current()), canon(await foldOfLog(log)));
});
