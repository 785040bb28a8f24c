/**
 * Deltas (state-delta.ts): what changed since an image, written beside it, loads with the image to the fold of the
 * same events; costs the changes, not the state; and is used only with the very image it was written against.
 */
import test, { type ExecutionContext } from 'ava';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import type { BuildEvent, EventPayload } from '../lib/events/build-event.js';
import { EventLog } from '../lib/events/event-log.js';
import { StateStore } from '../lib/state/state-store.js';
import { initialState, type BuildState } from '../lib/state/build-state.js';
import { reduce } from '../lib/state/reduce.js';
import { decodeSnapshotFile, deltaPathOf, readSnapshotOrWhy, writeDelta, writeSnapshot, type SnapshotRead } from '../lib/state/snapshot-file.js';
import { deltaBaseOf, deltaPieces, type DeltaBase } from '../lib/state/state-delta.js';
import { arbEventList } from './helpers/arbitrary-events.js';
import { makeWorkspace } from './helpers/server-fixture.js';
import { everyMap as canon } from './helpers/state-canon.js';

const fold = (events: readonly BuildEvent[], from: BuildState = initialState()): BuildState => events.reduce(reduce, from);
/** A log any snapshot at timestamp 0 fits. */
const probe = { latestId: () => Number.MAX_SAFE_INTEGER, firstId: () => 1, timestampOf: async () => 0 };

function baseOf(read: SnapshotRead): DeltaBase {
  if (!read.image) throw new Error(`no image read: ${read.why}`);
  const base = deltaBaseOf(read.image, read.imageId);
  if (!base) throw new Error('the image as loaded is not one run a map');
  return base;
}

async function pathIn(t: ExecutionContext, name: string): Promise<string> {
  return join(await makeWorkspace(t), name);
}

/** Events that make wants w-1..w-n, each of one partition. */
function wantsCreated(from: number, n: number, ref: (i: number) => string = (i) => `p/${i}`): BuildEvent[] {
  return Array.from({ length: n }, (_, k) => {
    const i = from + k;
    return {
      event_id: i,
      timestamp: 0,
      type: 'want_created' as const,
      want_created: {
        want_id: `w-${i}`, partitions: [ref(i)], comment: '', data_timestamp: 0, ttl_seconds: 0, sla_seconds: 0, source: 'user' as const,
        parent_want_id: '', root_want_id: `w-${i}`, rebuild: 'missing' as const, priority: 0, backfill_id: '', max_concurrent_job_runs: 0, pattern: '',
        schedule_tick: 0,
      },
    } as BuildEvent;
  });
}

test('property: an image, then deltas of the states folded on from it, each load to the fold of their events', async (t) => {
  const path = await pathIn(t, 'snapshot.bin');
  await fc.assert(
    fc.asyncProperty(arbEventList({ pooled: true, maxLength: 80 }), fc.array(fc.nat(), { minLength: 1, maxLength: 3 }), async (events, cuts) => {
      const at = [...new Set(cuts.map((c) => c % (events.length + 1)))].sort((a, b) => a - b);
      await writeSnapshot(path, 'v', fold(events.slice(0, at[0])), 0);
      const read = await readSnapshotOrWhy(path, 'v', probe);
      const base = baseOf(read);
      let state = read.image!;
      let done = at[0]!;
      for (const k of [...at.slice(1), events.length]) {
        state = fold(events.slice(done, k), state);
        done = k;
        if (state.last_event_id === base.last_event_id) continue;
        // Each delta is of everything since the image, written over the last.
        await writeDelta(path, 'v', state, 0, base);
        const loaded = await readSnapshotOrWhy(path, 'v', probe);
        t.is(loaded.delta?.at_event, state.last_event_id, loaded.delta?.unused);
        t.deepEqual(canon(loaded.state!), canon(fold(events.slice(0, k))));
        // A start goes on from it: folded on, it stays the fold.
        t.deepEqual(canon(fold(events.slice(k), loaded.state!)), canon(fold(events)));
      }
    }),
    { numRuns: 60 },
  );
});

test('a delta holds what changed since the image, not the state', async (t) => {
  const path = await pathIn(t, 'snapshot.bin');
  await writeSnapshot(path, 'v', fold(wantsCreated(1, 3000)), 0);
  const read = await readSnapshotOrWhy(path, 'v', probe);
  const state = fold(wantsCreated(3001, 2), read.image!);
  const lines = [...deltaPieces(state, baseOf(read))].filter((l) => Array.isArray(l) && (l[0] === 'put' || l[0] === 'gone'));
  const entries = lines.reduce((n, l) => n + (l as [string, unknown[]])[1].length, 0);
  // Two new wants: their records, orders and indexes (a few entries each), out of some 3,000 x 8 in the state.
  t.true(entries > 0 && entries <= 20, `${entries} entries in the delta`);
  await writeDelta(path, 'v', state, 0, baseOf(read));
  const loaded = await readSnapshotOrWhy(path, 'v', probe);
  t.is(loaded.state!.wants.size, 3002);
  t.deepEqual(canon(loaded.state!), canon(fold(wantsCreated(1, 3002))));
});

test('a delta is used only with the image it was written against, whole and of this log', async (t) => {
  const path = await pathIn(t, 'snapshot.bin');
  await writeSnapshot(path, 'v', fold(wantsCreated(1, 50)), 0);
  const read = await readSnapshotOrWhy(path, 'v', probe);
  await writeDelta(path, 'v', fold(wantsCreated(51, 5), read.image!), 0, baseOf(read));
  t.is((await readSnapshotOrWhy(path, 'v', probe)).delta?.at_event, 55);

  // Another log with the same ids: its event 55 has another timestamp.
  const other = { ...probe, timestampOf: async (id: number) => (id === 55 ? 7 : 0) };
  const notThis = await readSnapshotOrWhy(path, 'v', other);
  t.is(notThis.delta?.unused, 'not of this log (its event 55 differs)');
  t.is(notThis.state!.last_event_id, 50, 'the image alone is used');

  // A byte changed inside the delta: damaged, never trusted.
  const delta = deltaPathOf(path);
  const bytes = readFileSync(delta);
  const flipped = Buffer.from(bytes);
  flipped[flipped.length - 40] ^= 0xff;
  writeFileSync(delta, flipped);
  t.is((await readSnapshotOrWhy(path, 'v', probe)).delta?.unused, 'damaged');
  writeFileSync(delta, bytes.subarray(0, bytes.length - 10));
  t.is((await readSnapshotOrWhy(path, 'v', probe)).delta?.unused, 'cut short');
  writeFileSync(delta, bytes);
  t.is((await readSnapshotOrWhy(path, 'v', probe)).delta?.at_event, 55);

  // A new image of the same events (a rewrite): the delta was of the one before.
  await writeSnapshot(path, 'v', fold(wantsCreated(1, 50)), 0);
  const after = await readSnapshotOrWhy(path, 'v', probe);
  t.is(after.delta?.unused, 'of another snapshot');
  t.is(after.state!.last_event_id, 50);
  t.is(decodeSnapshotFile(readFileSync(delta)).header.base_image_id, baseOf(read).image_id);
});

test('a store writes deltas between its images, against the image it holds; a start from any of them is the fold of the log', async (t) => {
  const dir = await makeWorkspace(t);
  const log = await EventLog.open(join(dir, 'bel'));
  t.teardown(() => log.close());
  const path = join(dir, 'snapshot.bin');
  const errors: unknown[] = [];
  // An image every 40 events, a delta every 10 between.
  const store = await StateStore.open(log, path, { snapshotEveryEvents: 40, onSnapshotError: (err) => errors.push(err) });
  t.teardown(() => store.close());
  const seen = new Set<string>();
  for (let round = 0; round < 14; round++) {
    const made = wantsCreated(round * 12 + 1, 12).map((e) => {
      const { event_id: _id, timestamp: _at, ...payload } = e;
      return payload as EventPayload;
    });
    // Some of the wants made before are canceled: entries change and leave the status indexes.
    const canceled = round === 0 ? [] : [{ type: 'want_canceled' as const, want_canceled: { want_id: `w-${round * 12 - 5}`, reason: 'x' } }];
    for (const e of [...made, ...canceled]) await log.append([e], 1_767_000_000_000 + round);
    await store.idle();
    const reopened = await StateStore.open(log, path);
    const start = reopened.start;
    seen.add(start.snapshot_delta?.at_event ? 'delta' : start.source);
    t.is(start.snapshot_delta?.unused ?? null, null);
    t.deepEqual(canon(reopened.current()), canon(store.current()), `round ${round}: ${JSON.stringify(start)}`);
    reopened.close();
  }
  t.deepEqual(errors, []);
  t.true(store.snapshotsWritten >= 3 && store.deltasWritten >= 6, `${store.snapshotsWritten} images, ${store.deltasWritten} deltas`);
  t.true(seen.has('delta') && seen.has('snapshot'), [...seen].join(', '));
});

test('a set of more members than a line holds (wants waiting on one partition) goes a slice a line, in its place among the others', async (t) => {
  const path = await pathIn(t, 'snapshot.bin');
  // Wants on 'p/m' (the many) and on partitions before and after it in key order: the set is not the map's only change.
  const ref = (i: number) => (i % 10 === 0 ? `p/a${i}` : i % 10 === 1 ? `p/z${i}` : 'p/m');
  await writeSnapshot(path, 'v', fold(wantsCreated(1, 1500, ref)), 0);
  const read = await readSnapshotOrWhy(path, 'v', probe);
  const state = fold(wantsCreated(1501, 1500, ref), read.image!);
  const pieces = [...deltaPieces(state, baseOf(read))];
  t.true(pieces.filter((l) => Array.isArray(l) && l[0] === 'members').length >= 2, 'the set went in slices');
  await writeDelta(path, 'v', state, 0, baseOf(read));
  const loaded = await readSnapshotOrWhy(path, 'v', probe);
  t.is(loaded.delta?.at_event, 3000, loaded.delta?.unused);
  t.deepEqual(canon(loaded.state!), canon(fold(wantsCreated(1, 3000, ref))));
  t.is(loaded.state!.active_wants_by_ref.get('p/m')!.size, 2400);
});

test('a pause of the log takes a delta, or an image once half an image\'s interval came since the last', async (t) => {
  const dir = await makeWorkspace(t);
  const log = await EventLog.open(join(dir, 'bel'));
  t.teardown(() => log.close());
  const path = join(dir, 'snapshot.bin');
  const store = await StateStore.open(log, path, { snapshotEveryEvents: 40, snapshotWhenQuiet: { ms: 100, events: 5 } });
  t.teardown(() => store.close());
  let made = 0;
  const pauseAfter = async (n: number) => {
    await log.append(
      wantsCreated(made + 1, n).map(({ event_id: _id, timestamp: _at, ...payload }) => payload as EventPayload),
      1_767_000_000_000,
    );
    made += n;
    // The pause, and the write it asks for.
    await new Promise((r) => setTimeout(r, 300));
    await store.idle();
    return { images: store.snapshotsWritten, deltas: store.deltasWritten };
  };
  t.deepEqual(await pauseAfter(8), { images: 1, deltas: 0 }, 'no image yet: an image');
  t.deepEqual(await pauseAfter(8), { images: 1, deltas: 1 }, '8 since the image: a delta');
  t.deepEqual(await pauseAfter(8), { images: 1, deltas: 2 }, '16 since the image: a delta');
  t.deepEqual(await pauseAfter(8), { images: 2, deltas: 2 }, '24 since the image, past half of 40: an image');
  const reopened = await StateStore.open(log, path);
  t.is(reopened.start.events_replayed, 0);
  t.is(reopened.start.snapshot_delta, null, 'the delta of the image before was removed with it');
  reopened.close();
});

test('a delta carries every map the events change: builds and their history, taints, sla deadlines', async (t) => {
  const path = await pathIn(t, 'snapshot.bin');
  let id = 0;
  const ev = (type: string, body: unknown): BuildEvent => ({ event_id: ++id, timestamp: 1_767_000_000_000 + id, type, [type]: body }) as unknown as BuildEvent;
  const wantOf = (wid: string, refs: string[], sla = 0) =>
    ev('want_created', {
      want_id: wid, partitions: refs, comment: '', data_timestamp: 0, ttl_seconds: 0, sla_seconds: sla, source: 'user', parent_want_id: '',
      root_want_id: wid, rebuild: 'all', priority: 0, backfill_id: '', max_concurrent_job_runs: 0, pattern: '', schedule_tick: 0,
    });
  const build = (wid: string, ref: string, tag: string, inputs: Array<{ partition_ref: string; build_id: string }> = []) => [
    ev('job_run_queued', { job_run_id: `r-${tag}`, job_label: 'j', config: { outputs: [ref], inputs: inputs.map((i) => ({ partition_ref: i.partition_ref, dep_type: 'MATERIALIZE' })), args: [], env: {} }, want_ids: [wid], attempt: 1, exec: ['true'], timeout_seconds: 0, input_builds: inputs, job_fingerprint: 'fp-1', output_inputs: [], retry_of: '' }),
    ev('job_run_started', { job_run_id: `r-${tag}`, pid: 1, worker: 'local', started_at: 0 }),
    ev('job_run_succeeded', { job_run_id: `r-${tag}`, builds: [{ partition_ref: ref, build_id: `b-${tag}` }], ended_at: 0 }),
  ];
  const before = [wantOf('w-1', ['in/1', 'out/1'], 3600), ...build('w-1', 'in/1', 'a'), ...build('w-1', 'out/1', 'b', [{ partition_ref: 'in/1', build_id: 'b-a' }])];
  await writeSnapshot(path, 'v', fold(before), 0);
  const read = await readSnapshotOrWhy(path, 'v', probe);
  // After the image: a rebuild of the input (history, consumers turn stale), a taint, a new want with an sla.
  const after = [
    wantOf('w-2', ['in/1']),
    ...build('w-2', 'in/1', 'c'),
    ev('taint_created', { taint_id: 't-1', partitions: ['out/1'], reason: 'bad', downstream: false }),
    wantOf('w-3', ['in/2'], 60),
  ];
  const state = fold(after, read.image!);
  for (const name of ['builds', 'build_history', 'taints', 'taint_order', 'sla_pending']) {
    t.not((state as unknown as Record<string, unknown>)[name], (read.image as unknown as Record<string, unknown>)[name], `${name} changed after the image`);
  }
  await writeDelta(path, 'v', state, 0, baseOf(read));
  const loaded = await readSnapshotOrWhy(path, 'v', probe);
  t.is(loaded.delta?.at_event, state.last_event_id, loaded.delta?.unused);
  t.deepEqual(canon(loaded.state!), canon(fold([...before, ...after])));
});
