/**
 * Snapshots: a state saved at any event, loaded back (through JSON, as on disk) and folded on with the rest of
 * the events, is the state a full fold gives. A snapshot that does not fit the log or the code is ignored.
 */
import test, { type ExecutionContext } from 'ava';
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import type { BuildEvent } from '../lib/events/build-event.js';
import { EventLog } from '../lib/events/event-log.js';
import { initialState, type BuildState } from '../lib/state/build-state.js';
import { reduce } from '../lib/state/reduce.js';
import { STATE_FROM_SNAPSHOT_SLICES, fromSnapshot, toSnapshot, type Snapshot } from '../lib/state/snapshot.js';
import { SNAPSHOT_AFTER_REPLAY_EVENTS, SNAPSHOT_EVERY_EVENTS, StateStore, logProbe } from '../lib/state/state-store.js';
import { IMAGE_FORMAT, decodeSnapshotFile, deltaPathOf, encodeSnapshotFile, readSnapshot, readSnapshotOrWhy, stateCodeFingerprint, writeSnapshot, type SnapshotHeader } from '../lib/state/snapshot-file.js';
import { arbEventList } from './helpers/arbitrary-events.js';
import { makeWorkspace } from './helpers/server-fixture.js';
import { poll } from './helpers/jobs-fixture.js';
import { canon } from './helpers/state-canon.js';
import { ImageCarry } from '../lib/state/image-carry.js';
import { StartStopped, type StartProgress } from '../lib/state/store-start.js';
import { BUSY_FRAME_MS, BUSY_SHARE, QUIET_AFTER_MS, QUIET_FRAME_MS, SharePacer, frameBudgetMs, frameRestMs } from '../lib/state/frame-budget.js';
import { PAUSE_POINT, imagePieces, stateOfImage } from '../lib/state/state-image.js';

const fold = (events: readonly BuildEvent[], from: BuildState = initialState()): BuildState => events.reduce(reduce, from);
/** The last event the snapshot at `path` holds, with its delta (snapshot-delta.bin) if one is beside it; 0 without. */
const savedAt = (path: string): number =>
  Math.max(...[path, deltaPathOf(path)].map((p) => (existsSync(p) ? decodeSnapshotFile(readFileSync(p)).header.last_event_id : 0)));
const throughJson = (s: Snapshot): Snapshot => JSON.parse(JSON.stringify(s)) as Snapshot;
/** A log any snapshot at timestamp 0 fits. */
const probe = { latestId: () => Number.MAX_SAFE_INTEGER, firstId: () => 1, timestampOf: async () => 0 };

test('a snapshot taken after any prefix, loaded and folded on, equals the full fold', (t) => {
  t.notThrows(() =>
    fc.assert(
      fc.property(arbEventList({ pooled: true, maxLength: 80 }), fc.nat(), (events, cut) => {
        const k = events.length === 0 ? 0 : cut % (events.length + 1);
        const loaded = fromSnapshot(throughJson(toSnapshot(fold(events.slice(0, k)))));
        t.deepEqual(canon(fold(events.slice(k), loaded)), canon(fold(events)));
      }),
      { numRuns: 150 },
    ),
  );
});

async function logWith(t: ExecutionContext, events: number): Promise<{ dir: string; log: EventLog }> {
  const dir = await makeWorkspace(t);
  const log = await EventLog.open(join(dir, '.platform', 'bel'));
  const batch = Array.from({ length: events }, (_, i) => ({
    type: 'want_created' as const,
    want_created: {
      want_id: `w-${i + 1}`,
      partitions: [`p/${i}`],
      comment: `want ${i + 1}`,
      data_timestamp: 0,
      ttl_seconds: 0,
      sla_seconds: 0,
      source: 'user' as const,
      parent_want_id: '',
      root_want_id: `w-${i + 1}`,
      rebuild: 'missing' as const, priority: 0, backfill_id: '', max_concurrent_job_runs: 0, pattern: '', schedule_tick: 0,
    },
  }));
  await log.append(batch, 1_767_000_000_000);
  return { dir, log };
}

test('a store opens from its snapshot and reads only the events after it', async (t) => {
  const { dir, log } = await logWith(t, 30);
  t.teardown(() => log.close());
  const path = join(dir, '.platform', 'snapshot.bin');
  const first = await StateStore.open(log, path);
  t.true(await first.saveSnapshot(path, 0));
  t.false(await first.saveSnapshot(path, 1), 'nothing new since: no rewrite');
  first.close();

  // Mark the snapshot so its use shows: a reopened store that replayed the log instead would not have the mark.
  const s = first.current();
  const marked = { ...s, wants: s.wants.set('w-1', { ...s.wants.get('w-1')!, comment: 'from the snapshot' }) };
  await writeSnapshot(path, stateCodeFingerprint(), marked, 1_767_000_000_000);
  await log.append(
    [{ type: 'want_canceled', want_canceled: { want_id: 'w-2', reason: 'after the snapshot' } }],
    1_767_000_000_001,
  );
  const second = await StateStore.open(log, path);
  t.teardown(() => second.close());
  t.is(second.current().wants.get('w-1')?.comment, 'from the snapshot');
  t.is(second.current().wants.get('w-2')?.status, 'canceled', 'events after the snapshot are folded on');
  t.is(second.current().last_event_id, 31);
});

test('a snapshot ahead of the log, of other code or another log, unreadable or malformed is ignored: the log is replayed', async (t) => {
  const { dir, log } = await logWith(t, 5);
  t.teardown(() => log.close());
  const path = join(dir, '.platform', 'snapshot.bin');
  const full = await StateStore.open(log);
  const expected = canon(full.current());
  full.close();

  const store = await StateStore.open(log, path);
  await store.saveSnapshot(path, 0);
  store.close();
  const good = readFileSync(path);
  const { header, lines: pieces } = decodeSnapshotFile(good);
  const body = pieces.slice(0, -1);
  const end = pieces[pieces.length - 1]!;
  const file = (h: SnapshotHeader, lines: typeof pieces) => encodeSnapshotFile({ header: h, lines });
  // The wants' keys in reverse: the image's maps must be sorted.
  const wantsMap = body.findIndex((l) => l[0] === 'map' && l[1] === 'wants');
  const wantKeys = body.findIndex((l, i) => i > wantsMap && l[0] === 'keys');
  const words = (line: unknown): number[] => Array.from(new Uint32Array(Uint8Array.from(line as Uint8Array).buffer));
  const reversed = body.map((l, i) => (i === wantKeys ? (['keys', words(l[1]).reverse()] as (typeof pieces)[number]) : l));
  // A byte of a record changed in place: the checksum of the end line no longer fits.
  const flipped = Buffer.from(good);
  const at = flipped.indexOf('want 3');
  flipped[at + 5] = '7'.charCodeAt(0);

  const variants: Array<[string, Buffer]> = [
    ['ahead of the log', file({ ...header, last_event_id: 99 }, pieces)],
    ['of other code', file({ ...header, version: 'another-build' }, pieces)],
    ['of the records format', file({ ...header, format: 6 }, pieces)],
    ['unreadable', Buffer.from('{"version": ')],
    ['cut short', good.subarray(0, good.length - 3)],
    ['truncated (no end line)', file(header, body)],
    ['truncated (a line short of its count)', file(header, [...body.slice(1), end])],
    ['of an unknown line kind', file(header, [['spaceship', {}] as unknown as (typeof pieces)[number], ...body, ['end', body.length + 1, 0]])],
    ['of another log as long as this one', file({ ...header, last_event_timestamp: header.last_event_timestamp + 1 }, pieces)],
    ['malformed (keys out of order)', file(header, [...reversed, end])],
    ['changed in place', flipped],
  ];
  t.true(at > 0 && wantKeys > 0, 'the image holds the wants');
  for (const [what, content] of variants) {
    writeFileSync(path, content);
    const reopened = await StateStore.open(log, path);
    t.deepEqual(canon(reopened.current()), expected, what);
    reopened.close();
  }
});

test('a store takes snapshots in the background every N events; a reopen replays only what came after the last', async (t) => {
  const { dir, log } = await logWith(t, 0);
  t.teardown(() => log.close());
  const path = join(dir, '.platform', 'snapshot.bin');
  const store = await StateStore.open(log, path, { snapshotEveryEvents: 10 });
  const batch = (from: number, n: number) =>
    Array.from({ length: n }, (_, i) => ({ type: 'want_canceled' as const, want_canceled: { want_id: `none-${from + i}`, reason: 'x' } }));
  for (let i = 0; i < 25; i++) await log.append(batch(i, 1), 1_767_000_000_000 + i);
  // The background write finishes on its own; wait for a snapshot at 10 or more events.
  let header: SnapshotHeader | undefined;
  for (let i = 0; i < 200 && !(header && header.last_event_id >= 20); i++) {
    await new Promise((r) => setTimeout(r, 10));
    try {
      header = decodeSnapshotFile(readFileSync(path)).header;
    } catch {
      header = undefined;
    }
  }
  t.true(header !== undefined && header.last_event_id >= 20, `a snapshot at ${header?.last_event_id ?? 'none'}`);
  store.close();
  const snap = await readSnapshot(path, stateCodeFingerprint(), logProbe(log));
  t.is(snap?.last_event_id, header!.last_event_id);
  const reopened = await StateStore.open(log, path);
  t.teardown(() => reopened.close());
  t.is(reopened.current().last_event_id, 25);
});

// Serial: the property tests of this file would hold the loop past the pause it waits for.
test.serial('a pause of the log takes a snapshot of what came since the last, if enough came; appends that keep coming do not', async (t) => {
  const { dir, log } = await logWith(t, 0);
  t.teardown(() => log.close());
  const path = join(dir, '.platform', 'snapshot.bin');
  const store = await StateStore.open(log, path, { snapshotEveryEvents: 1_000, snapshotWhenQuiet: { ms: 400, events: 20 } });
  t.teardown(() => store.close());
  const cancel = (i: number) => [{ type: 'want_canceled' as const, want_canceled: { want_id: `none-${i}`, reason: 'x' } }];
  const lastSnapshot = () => (existsSync(path) ? decodeSnapshotFile(readFileSync(path)).header.last_event_id : 0);
  // Appends 50 ms apart never leave the log quiet for 400 ms: no snapshot while they come, though 30 came.
  for (let i = 1; i <= 30; i++) {
    await log.append(cancel(i), 1_767_000_000_000 + i);
    await new Promise((r) => setTimeout(r, 50));
  }
  t.is(store.snapshotsWritten, 0, 'none while the appends kept coming');
  t.true(await poll(() => lastSnapshot() === 30, 5_000), `a snapshot at the pause, at ${lastSnapshot()}`);
  await store.idle();
  // Fewer than 20 more, then a pause: left to the usual schedule.
  for (let i = 31; i <= 40; i++) await log.append(cancel(i), 1_767_000_000_000 + i);
  await new Promise((r) => setTimeout(r, 1_000));
  await store.idle();
  t.is(lastSnapshot(), 30, 'ten events and a pause: no snapshot');
  t.is(store.snapshotsWritten, 1);
  const reopened = await StateStore.open(log, path);
  t.teardown(() => reopened.close());
  t.is(reopened.start.at_event, 30);
  t.is(reopened.start.events_replayed, 10);
});

// Serial, as the one above. The pause comes while another snapshot is being written (here the one after a start that
// replayed 20,000 events): the pause is not heard twice, so it must not be dropped for that write, only wait for it.
test.serial('a pause of the log while a snapshot is being written takes its snapshot once that write is done', async (t) => {
  const { dir, log } = await logWith(t, 20_000);
  t.teardown(() => log.close());
  const path = join(dir, '.platform', 'snapshot.bin');
  const store = await StateStore.open(log, path, { snapshotEveryEvents: 1_000_000, snapshotWhenQuiet: { ms: 5, events: 20 } });
  t.teardown(() => store.close());
  t.true(store.writingSnapshot, 'the snapshot after the replay is under way');
  const cancels = Array.from({ length: 30 }, (_, i) => ({ type: 'want_canceled' as const, want_canceled: { want_id: `none-${i}`, reason: 'x' } }));
  await log.append(cancels, 1_767_000_000_001);
  // The pause (5 ms) is over while the write of 20,000 wants still runs.
  await new Promise((r) => setTimeout(r, 20));
  t.true(store.writingSnapshot, 'the pause came during that write (else this test shows nothing)');
  // The second is a delta of the image the first wrote (state-delta.ts).
  t.true(await poll(() => savedAt(path) === 20_030, 10_000, 50), `a snapshot of the 30 events after the pause, at ${savedAt(path)}`);
  await store.idle();
  t.is(store.snapshotsWritten, 1);
  t.is(store.deltasWritten, 1);
});

test('a log closed under an open store is no pause: no snapshot is written after it', async (t) => {
  const { dir, log } = await logWith(t, 0);
  t.teardown(() => log.close());
  const path = join(dir, '.platform', 'snapshot.bin');
  const errors: unknown[] = [];
  const store = await StateStore.open(log, path, { snapshotEveryEvents: 1_000_000, snapshotWhenQuiet: { ms: 60_000, events: 20 }, onSnapshotError: (err) => errors.push(err) });
  t.teardown(() => store.close());
  const cancels = Array.from({ length: 30 }, (_, i) => ({ type: 'want_canceled' as const, want_canceled: { want_id: `none-${i}`, reason: 'x' } }));
  await log.append(cancels, 1_767_000_000_001);
  // The log goes first (a caller that closes it before the store): debounceTime would flush the pending pause now.
  await log.close();
  await new Promise((r) => setTimeout(r, 300));
  await store.idle();
  t.is(store.snapshotsWritten, 0);
  t.false(existsSync(path), 'no snapshot written after the log was closed');
  t.deepEqual(errors, []);
});

test('a start that replayed many events writes a snapshot at once; one that replayed a few does not', async (t) => {
  const { dir, log } = await logWith(t, 0);
  t.teardown(() => log.close());
  const path = join(dir, '.platform', 'snapshot.bin');
  const cancels = (from: number, n: number) =>
    Array.from({ length: n }, (_, i) => ({ type: 'want_canceled' as const, want_canceled: { want_id: `none-${from + i}`, reason: 'x' } }));
  await log.append(cancels(0, SNAPSHOT_AFTER_REPLAY_EVENTS - 1), 1_767_000_000_000);
  const few = await StateStore.open(log, path, { snapshotEveryEvents: SNAPSHOT_EVERY_EVENTS });
  await few.idle();
  few.close();
  t.false(existsSync(path), 'a replay of fewer events leaves the snapshot to the usual schedule');
  await log.append(cancels(SNAPSHOT_AFTER_REPLAY_EVENTS, 1), 1_767_000_000_001);
  const many = await StateStore.open(log, path, { snapshotEveryEvents: SNAPSHOT_EVERY_EVENTS });
  t.teardown(() => many.close());
  await many.idle();
  t.is(decodeSnapshotFile(readFileSync(path)).header.last_event_id, SNAPSHOT_AFTER_REPLAY_EVENTS, 'a restart after a crash starts from it');
});

test('property: a state written to a snapshot file and read back equals it', async (t) => {
  const { dir, log } = await logWith(t, 0);
  t.teardown(() => log.close());
  const path = join(dir, '.platform', 'roundtrip.bin');
  await fc.assert(
    fc.asyncProperty(arbEventList({ pooled: true, maxLength: 80 }), async (events) => {
      const state = fold(events);
      await writeSnapshot(path, 'v', state, 0);
      const loaded = await readSnapshot(path, 'v', probe);
      t.deepEqual(canon(loaded!), canon(state));
      // Folded on from the loaded image (records still encoded, maps as runs), it stays the full fold.
      t.deepEqual(canon(fold(events, loaded!)), canon(fold([...events, ...events])));
    }),
    { numRuns: 40 },
  );
});

test('property: an image written from a loaded one (its records copied as they are) with later events folded on loads to the full fold', async (t) => {
  const { dir, log } = await logWith(t, 0);
  t.teardown(() => log.close());
  const path = join(dir, '.platform', 'twice.bin');
  await fc.assert(
    fc.asyncProperty(arbEventList({ pooled: true, maxLength: 80 }), fc.nat(), async (events, cut) => {
      const k = events.length === 0 ? 0 : cut % (events.length + 1);
      await writeSnapshot(path, 'v', fold(events.slice(0, k)), 0);
      const loaded = await readSnapshot(path, 'v', probe);
      await writeSnapshot(path, 'v', fold(events.slice(k), loaded!), 0);
      const again = await readSnapshot(path, 'v', probe);
      t.deepEqual(canon(again!), canon(fold(events)));
    }),
    { numRuns: 40 },
  );
});

test('property: images written one after another by one carry (a store\'s snapshots) each load to the fold of their events, as does the state each holds', async (t) => {
  const { dir, log } = await logWith(t, 0);
  t.teardown(() => log.close());
  const path = join(dir, '.platform', 'carried.bin');
  await fc.assert(
    fc.asyncProperty(
      arbEventList({ pooled: true, maxLength: 80 }),
      fc.array(fc.tuple(fc.nat(), fc.boolean()), { minLength: 1, maxLength: 4 }),
      fc.boolean(),
      async (events, cuts, fromImage) => {
        const at = [...new Map(cuts.map(([c, take]) => [events.length === 0 ? 0 : c % (events.length + 1), take])).entries()].sort((a, b) => a[0] - b[0]);
        const carry = new ImageCarry();
        let state = initialState();
        let done = 0;
        // Started from a loaded image (its records still encoded) or from a fold, as a store is.
        if (fromImage && at.length > 0) {
          await writeSnapshot(path, 'v', fold(events.slice(0, at[0]![0])), 0);
          state = (await readSnapshot(path, 'v', probe))!;
          done = at[0]![0];
        }
        for (const [k, take] of [...at, [events.length, false] as const]) {
          state = fold(events.slice(done, k), state);
          done = k;
          await writeSnapshot(path, 'v', state, 0, carry);
          const expected = canon(fold(events.slice(0, k)));
          t.deepEqual(canon((await readSnapshot(path, 'v', probe))!), expected);
          // Read by another version (an upgrade): its records, every index built again, are the same state.
          const upgraded = await readSnapshotOrWhy(path, 'v-next', probe);
          t.true(upgraded.otherVersion, upgraded.why);
          t.deepEqual(canon(upgraded.state!), expected);
          // A store goes on from the state its image holds (or, after a prune came between, from its fold).
          if (take) {
            state = stateOfImage(state, carry)!;
            t.deepEqual(canon(state), expected);
          }
        }
      },
    ),
    { numRuns: 60 },
  );
});

test('an image of another version read as its records says how far it got: its records made, then the slices of its indexes built', async (t) => {
  const { dir, log } = await logWith(t, 0);
  t.teardown(() => log.close());
  const path = join(dir, '.platform', 'upgrade.bin');
  const events = fc.sample(arbEventList({ pooled: true, minLength: 200, maxLength: 300 }), { numRuns: 1, seed: 7 })[0]!;
  const state = fold(events);
  await writeSnapshot(path, 'v-before', state, 0);
  const told: Array<[string, number, number]> = [];
  const read = await readSnapshotOrWhy(path, 'v-after', probe, undefined, (done, total, phase) => void told.push([phase, done, total]));
  t.true(read.otherVersion, read.why);
  const records = state.wants.size + state.partitions.size + state.job_runs.size + state.builds.size + state.taints.size + state.schedules.size;
  const made = told.filter(([phase]) => phase === 'records');
  t.true(made.length >= 1);
  t.true(made.every(([, done, total]) => total === records && done < total), JSON.stringify(made));
  const built = told.filter(([phase]) => phase === 'indexes');
  // Each slice once, in order, of the count the generator yields (a slice added without the count would show here).
  t.deepEqual(
    built.map(([, done, total]) => [done, total]),
    Array.from({ length: STATE_FROM_SNAPSHOT_SLICES }, (_, i) => [i + 1, STATE_FROM_SNAPSHOT_SLICES]),
  );
  // After the records: the phases in order.
  t.true(told.findIndex(([phase]) => phase === 'indexes') > told.findLastIndex(([phase]) => phase === 'records'));
});

test('an image of another version is read as its records when it says their format, and only then; one of a records format this code does not read is not', async (t) => {
  const { dir, log } = await logWith(t, 0);
  t.teardown(() => log.close());
  const path = join(dir, '.platform', 'upgrade.bin');
  const events = fc.sample(arbEventList({ pooled: true, minLength: 40, maxLength: 80 }), { numRuns: 1, seed: 32 })[0]!;
  const state = fold(events);
  await writeSnapshot(path, 'v-before', state, 0);
  const read = await readSnapshotOrWhy(path, 'v-after', probe);
  t.true(read.otherVersion);
  t.deepEqual(canon(read.state!), canon(state));
  // Folded on, it is the fold: the indexes it built are the fold's own.
  t.deepEqual(canon(fold(events, read.state!)), canon(fold([...events, ...events])));
  // A want whose derived wants fill chunks of its list (append-list.ts) and a tail: read whole, in order.
  const created = (id: string, parent: string, event_id: number): BuildEvent =>
    ({
      type: 'want_created',
      event_id,
      timestamp: 1_767_000_000_000,
      want_created: { want_id: id, partitions: [`p/${id}`], comment: '', data_timestamp: 0, ttl_seconds: 0, sla_seconds: 0, source: parent ? 'derived' : 'user', parent_want_id: parent, root_want_id: parent || id, rebuild: 'missing', priority: 0, backfill_id: '', max_concurrent_job_runs: 0, pattern: '', schedule_tick: 0 },
    }) as unknown as BuildEvent;
  const wide = fold([created('top', '', 1), ...Array.from({ length: 600 }, (_, i) => created(`d-${i}`, 'top', i + 2))]);
  await writeSnapshot(path, 'v-before', wide, 0);
  const wideRead = await readSnapshotOrWhy(path, 'v-after', probe);
  t.deepEqual(canon(wideRead.state!), canon(wide));
  t.is(wideRead.state!.wants.get('top')!.children_active, 600);
  const rewritten = (change: (header: SnapshotHeader) => SnapshotHeader): void => {
    const data = readFileSync(path);
    const eol = data.indexOf(0x0a);
    const header = change(JSON.parse(data.subarray(0, eol).toString('utf8')) as SnapshotHeader);
    writeFileSync(path, Buffer.concat([Buffer.from(JSON.stringify(header)), data.subarray(eol)]));
  };
  // Written before images said their records format: the log is replayed, as before.
  rewritten(({ records_format: _, ...header }) => header);
  t.deepEqual(await readSnapshotOrWhy(path, 'v-after', probe), { why: 'written by another version of platform' });
  rewritten((header) => ({ ...header, records_format: 99 }));
  const later = await readSnapshotOrWhy(path, 'v-after', probe);
  t.is(later.state, undefined);
  t.regex(later.why ?? '', /^written by another version of platform \(its records of format 99, this platform reads .*9\)$/);
});

test('an image after the last packs only the records and sets that changed, and refers to the strings as the last did', async (t) => {
  const events: BuildEvent[] = [];
  for (let i = 1; i <= 300; i++) {
    const want_created = { want_id: `w-${i}`, partitions: [`p/${i}`, 'shared'], comment: '', data_timestamp: 0, ttl_seconds: 0, sla_seconds: 0, source: 'user', parent_want_id: '', root_want_id: `w-${i}`, rebuild: 'missing', priority: 0, backfill_id: '', max_concurrent_job_runs: 0, pattern: '', schedule_tick: 0 };
    events.push({ type: 'want_created', want_created, event_id: i, timestamp: 1_767_000_000_000 } as unknown as BuildEvent);
  }
  const folded = fold(events);
  const carry = new ImageCarry();
  const image = (s: BuildState): { bytes: Buffer; strings: number } => {
    const lines: unknown[] = [];
    let strings = 0;
    for (const line of imagePieces(s, carry)) {
      if (line === PAUSE_POINT) continue;
      if (line[0] === 'strings') strings += line[1].length;
      lines.push(line);
    }
    return { bytes: encodeSnapshotFile({ header: { version: 'v', format: IMAGE_FORMAT, last_event_id: s.last_event_id, last_event_timestamp: 0 }, lines: lines as never }), strings };
  };
  const first = image(folded);
  // 300 wants and the sets of wants on their 301 partitions.
  t.deepEqual(carry.counts, { packed: 601, copied: 0, ranged: 0 });
  const held = stateOfImage(folded, carry)!;
  t.deepEqual(canon(held), canon(folded));
  t.is(stateOfImage(reduce(held, events[0]!), carry), undefined, 'only the state imaged last has its image');
  const second = image(held);
  // Every entry of every map (the 601 records and sets, and the 300 of `want_order` and of `wants_by_status`) copied
  // as ranges of the runs the held state is made of.
  t.deepEqual(carry.counts, { packed: 0, copied: 601, ranged: 601 + 2 * 300 });
  t.is(second.strings, first.strings, 'the same strings, each written once');
  // As a store does, the state the second image holds goes on.
  const canceled = reduce(stateOfImage(held, carry)!, { type: 'want_canceled', want_canceled: { want_id: 'w-7', reason: 'x' }, event_id: 301, timestamp: 1_767_000_000_001 } as unknown as BuildEvent);
  image(canceled);
  // The want and the set of active wants on 'shared' (the set on 'p/7' is gone); the other 598 as they were, those
  // on the paths the change opened too.
  t.like(carry.counts, { packed: 2, copied: 598 });
  // All but the entries on the paths the cancel opened (nodes now, a few a map), and the two changed.
  t.true(carry.counts.ranged > 1100 && carry.counts.ranged < 1201, `${carry.counts.ranged} entries copied as ranges`);
  // A state of far fewer strings: the first image after it still writes the kept table, the next a table of its own.
  const small = fold(events.slice(0, 10));
  const whole = image(small).strings;
  t.true(whole > first.strings / 2, `the table is written whole once more (${whole} strings)`);
  const own = image(small).strings;
  let alone = 0;
  for (const line of imagePieces(small)) if (line !== PAUSE_POINT && line[0] === 'strings') alone += line[1].length;
  t.is(own, alone, 'then the table is only what the state refers to');
});

test('an image of more record shapes than it shares is read, and written again after reads of the records that carry their own', async (t) => {
  const { dir, log } = await logWith(t, 0);
  t.teardown(() => log.close());
  const path = join(dir, '.platform', 'shapes.bin');
  // Each run's environment has keys of its own: a record shape each, beyond the 32 an image shares.
  const events: BuildEvent[] = [];
  for (let i = 1; i <= 100; i++) {
    const ref = `p/${i}`;
    const payloads = [
      { type: 'want_created', want_created: { want_id: `w-${i}`, partitions: [ref], comment: '', data_timestamp: 0, ttl_seconds: 0, sla_seconds: 0, source: 'user', parent_want_id: '', root_want_id: `w-${i}`, rebuild: 'missing', priority: 0, backfill_id: '', max_concurrent_job_runs: 0, pattern: '', schedule_tick: 0 } },
      { type: 'job_run_queued', job_run_queued: { job_run_id: `r-${i}`, job_label: 'j', config: { outputs: [ref], inputs: [], args: [], env: { [`KEY_${i}`]: 'v' } }, want_ids: [`w-${i}`], attempt: 1, exec: ['true'], timeout_seconds: 0, input_builds: [], job_fingerprint: '', output_inputs: [], retry_of: '' } },
    ];
    for (const p of payloads) events.push({ ...p, event_id: events.length + 1, timestamp: 1_767_000_000_000 } as unknown as BuildEvent);
  }
  await writeSnapshot(path, 'v', fold(events), 0);
  const loaded = (await readSnapshot(path, 'v', probe))!;
  t.deepEqual(canon(loaded), canon(fold(events)));
  for (let i = 100; i >= 1; i--) t.deepEqual(loaded.job_runs.get(`r-${i}`)?.config.env, { [`KEY_${i}`]: 'v' });
  const more = { type: 'want_canceled', want_canceled: { want_id: 'w-1', reason: 'after' }, event_id: events.length + 1, timestamp: 1_767_000_000_001 } as unknown as BuildEvent;
  await writeSnapshot(path, 'v', reduce(loaded, more), 0);
  t.deepEqual(canon((await readSnapshot(path, 'v', probe))!), canon(fold([...events, more])));
});

test('a set larger than a slice (thousands of wants on one partition) is written a slice at a time and reads back whole', async (t) => {
  const { dir, log } = await logWith(t, 0);
  t.teardown(() => log.close());
  const path = join(dir, '.platform', 'sets.bin');
  // 3,000 wants of one partition: one entry of active_wants_by_ref with 3,000 members (slices of 1,024).
  const events = Array.from({ length: 3000 }, (_, i) => ({
    event_id: i + 1,
    timestamp: 1_767_000_000_000,
    type: 'want_created',
    want_created: { want_id: `w-${i + 1}`, partitions: ['shared'], comment: '', data_timestamp: 0, ttl_seconds: 0, sla_seconds: 0, source: 'user', parent_want_id: '', root_want_id: `w-${i + 1}`, rebuild: 'missing', priority: 0, backfill_id: '', max_concurrent_job_runs: 0, pattern: '', schedule_tick: 0 },
  })) as unknown as BuildEvent[];
  const state = fold(events);
  t.is(state.active_wants_by_ref.get('shared')?.size, 3000);
  // The writer may let the loop go between slices of it (1,024 members), and once its members add up to a slice;
  // and every 1,024 units of other work: a record packed is 48 (its entry 16, its packing 32), an entry 16.
  const pauses = new Map<string, number>();
  let section = '';
  for (const piece of imagePieces(state)) {
    if (piece === PAUSE_POINT) pauses.set(section, (pauses.get(section) ?? 0) + 1);
    else if (piece[0] === 'map') section = piece[1];
  }
  const inSet = pauses.get('active_wants_by_ref') ?? 0;
  t.true(inSet >= 2 && inSet <= 3, `${inSet} pauses in the set of 3,000`);
  t.true((pauses.get('wants') ?? 0) >= 0.9 * ((3000 * 48) / 1024), `${pauses.get('wants')} pauses among 3,000 wants`);
  // A plain map's entries, one by one: every 64 (3,000 in want_order).
  t.true((pauses.get('want_order') ?? 0) >= 0.9 * ((3000 * 16) / 1024), `${pauses.get('want_order')} pauses among 3,000 entries`);
  await writeSnapshot(path, 'v', state, 0);
  const loaded = (await readSnapshot(path, 'v', probe))!;
  t.deepEqual(canon(loaded), canon(state));
  t.deepEqual([...loaded.active_wants_by_ref.get('shared')!], [...state.active_wants_by_ref.get('shared')!]);
  // Written again from the loaded image, with a want canceled: the set changed, and is sliced again.
  const more = { type: 'want_canceled', want_canceled: { want_id: 'w-7', reason: 'after' }, event_id: 3001, timestamp: 1_767_000_000_001 } as unknown as BuildEvent;
  await writeSnapshot(path, 'v', reduce(loaded, more), 0);
  const again = (await readSnapshot(path, 'v', probe))!;
  t.is(again.active_wants_by_ref.get('shared')?.size, 2999);
  t.deepEqual(canon(again), canon(fold([...events, more])));
});

test('after a background snapshot a store holds the state its image holds, records encoded, with the events of meanwhile folded on', async (t) => {
  const { dir, log } = await logWith(t, 2000);
  t.teardown(() => log.close());
  const path = join(dir, '.platform', 'snapshot.bin');
  const errors: unknown[] = [];
  const store = await StateStore.open(log, path, { snapshotEveryEvents: 1000, onSnapshotError: (err) => errors.push(err) });
  // Events keep coming while the snapshots are written: wants made, and some of the first ones canceled.
  for (let i = 0; i < 60; i++) {
    const made = Array.from({ length: 50 }, (_, k) => ({
      type: 'want_created' as const,
      want_created: { want_id: `more-${i}-${k}`, partitions: [`q/${i}/${k}`, 'shared'], comment: '', data_timestamp: 0, ttl_seconds: 0, sla_seconds: 0, source: 'user' as const, parent_want_id: '', root_want_id: `more-${i}-${k}`, rebuild: 'missing' as const, priority: 0, backfill_id: '', max_concurrent_job_runs: 0, pattern: '', schedule_tick: 0 },
    }));
    await log.append([...made, { type: 'want_canceled', want_canceled: { want_id: `w-${i + 1}`, reason: 'meanwhile' } }], 1_767_000_000_000 + i);
    if (i % 7 === 0) await new Promise((resolve) => setImmediate(resolve));
  }
  await store.idle();
  t.deepEqual(errors, []);
  t.true(store.imagedStates >= 1, `${store.imagedStates} times the imaged state was taken`);
  const first = store.current().wants.keptEntries().next().value!;
  t.is(first.length, 4, 'the records are kept encoded, as after a restart');
  const replayed = await StateStore.open(log);
  t.is(store.current().last_event_id, 2000 + 60 * 51);
  t.deepEqual(canon(store.current()), canon(replayed.current()));
  replayed.close();
  store.close();
});

test('a snapshot asks its frame budget before each frame and ends frames by it; frames are short once the log is quiet', async (t) => {
  const { dir, log } = await logWith(t, 3000);
  t.teardown(() => log.close());
  const store = await StateStore.open(log);
  const state = store.current();
  store.close();
  const write = async (ms: number): Promise<number> => {
    let asked = 0;
    await writeSnapshot(join(dir, `frames-${ms}.bin`), 'v', state, 0, undefined, () => {
      asked++;
      return ms;
    });
    t.deepEqual(canon((await readSnapshot(join(dir, `frames-${ms}.bin`), 'v', probe))!), canon(state));
    return asked;
  };
  const everyLine = await write(0);
  const roomy = await write(60_000);
  // A budget of nothing ends a frame at each line (or pause point); one of a minute only at 2,000 lines.
  t.true(everyLine > [...imagePieces(state)].length / 2, `asked ${everyLine} times`);
  t.is(roomy, 1);
  t.is(frameBudgetMs(0), BUSY_FRAME_MS);
  t.is(frameBudgetMs(QUIET_AFTER_MS), QUIET_FRAME_MS);
  t.true(QUIET_FRAME_MS < BUSY_FRAME_MS);
});

test('while steps come, a snapshot rests after each frame for what it held the loop, leaving steps their share', async (t) => {
  const { dir, log } = await logWith(t, 3000);
  t.teardown(() => log.close());
  const store = await StateStore.open(log);
  const state = store.current();
  store.close();
  // Frames of nothing (one a line), each followed by a rest: asked once a frame, with what the frame held the loop.
  const worked: number[] = [];
  let framesAsked = 0;
  const path = join(dir, 'rested.bin');
  await writeSnapshot(path, 'v', state, 0, undefined, () => {
    framesAsked++;
    return 0;
  }, (ms) => {
    worked.push(ms);
    return 1;
  });
  t.deepEqual(canon((await readSnapshot(path, 'v', probe))!), canon(state));
  t.true(worked.length > 10, `rested ${worked.length} times`);
  t.true(worked.length <= framesAsked);
  t.true(worked.every((ms) => ms >= 0));
  // The rule: while the log takes appends, the frames' share of the loop is BUSY_SHARE; quiet, no rest.
  t.is(frameRestMs(0, 3), 3 * (1 / BUSY_SHARE - 1));
  t.is(frameRestMs(QUIET_AFTER_MS, 3), 0);
  t.true(BUSY_SHARE > 0 && BUSY_SHARE < 1);
});

test('a store started from its snapshot writes the next one copying what did not change as ranges, and it loads to the fold', async (t) => {
  const { dir, log } = await logWith(t, 3000);
  t.teardown(() => log.close());
  const path = join(dir, '.platform', 'snapshot.bin');
  const first = await StateStore.open(log, path);
  t.true(await first.saveSnapshot(path, 1, { last: true }));
  first.close();
  // Restarted from it; then a few new wants and cancels, the rest unchanged.
  const again = await StateStore.open(log, path);
  const made = Array.from({ length: 30 }, (_, k) => ({
    type: 'want_created' as const,
    want_created: { want_id: `more-${k}`, partitions: [`q/${k}`, 'p/7'], comment: '', data_timestamp: 0, ttl_seconds: 0, sla_seconds: 0, source: 'user' as const, parent_want_id: '', root_want_id: `more-${k}`, rebuild: 'missing' as const, priority: 0, backfill_id: '', max_concurrent_job_runs: 0, pattern: '', schedule_tick: 0 },
  }));
  const canceled = Array.from({ length: 10 }, (_, k) => ({ type: 'want_canceled' as const, want_canceled: { want_id: `w-${1 + k * 300}`, reason: 'later' } }));
  await log.append([...made, ...canceled], 1_767_000_000_001);
  t.true(await again.saveSnapshot(path, 1, { image: true }));
  const counts = again.imageCounts;
  // The first image after a start copies the loaded stretches as ranges: most of 3,000 wants and their indexes.
  t.true(counts.ranged > 6000, `${JSON.stringify(counts)}`);
  t.true(counts.packed < 200, `${JSON.stringify(counts)}`);
  const replayed = await StateStore.open(log);
  const reread = await StateStore.open(log, path);
  t.is(reread.current().last_event_id, 3040);
  t.deepEqual(canon(reread.current()), canon(replayed.current()));
  t.deepEqual(canon(again.current()), canon(replayed.current()));
  for (const s of [again, replayed, reread]) s.close();
});

test('the last snapshot before a close is written and leaves the fold in place; an earlier one puts the imaged state there', async (t) => {
  const { dir, log } = await logWith(t, 3000);
  t.teardown(() => log.close());
  const path = join(dir, '.platform', 'snapshot.bin');
  const store = await StateStore.open(log);
  const folded = store.current();
  t.true(await store.saveSnapshot(path, 1000, { last: true }));
  t.is(store.snapshotsWritten, 1);
  t.is(store.imagedStates, 0, 'no state made from the image only to be dropped at the close');
  t.is(store.current(), folded);
  const reread = await StateStore.open(log, path);
  t.deepEqual(canon(reread.current()), canon(folded));
  reread.close();
  // A snapshot that is not the last one: its image's state takes the fold's place.
  await log.append([{ type: 'want_canceled', want_canceled: { want_id: 'w-1', reason: 'after' } }], 1_767_000_000_000);
  const before = store.current();
  t.true(await store.saveSnapshot(path, 1));
  t.is(store.imagedStates, 1);
  t.not(store.current(), before);
  store.close();
});

test('background snapshots are written one at a time under a burst of events, with no failed write and no file left over', async (t) => {
  const { dir, log } = await logWith(t, 0);
  t.teardown(() => log.close());
  const path = join(dir, '.platform', 'snapshot.bin');
  // What a killed writer leaves, and a snapshot of an older format: removed at open.
  writeFileSync(`${path}.999.1.tmp`, 'half a snapshot');
  writeFileSync(`${deltaPathOf(path)}.999.2.tmp`, 'half a delta');
  writeFileSync(join(dir, '.platform', 'snapshot.json'), '{}');
  const errors: unknown[] = [];
  const store = await StateStore.open(log, path, { snapshotEveryEvents: 100, onSnapshotError: (err) => errors.push(err) });
  t.false(existsSync(`${path}.999.1.tmp`));
  t.false(existsSync(`${deltaPathOf(path)}.999.2.tmp`), 'a delta\'s too');
  t.false(existsSync(join(dir, '.platform', 'snapshot.json')));
  const wants = Array.from({ length: 3000 }, (_, i) => ({
    type: 'want_canceled' as const,
    want_canceled: { want_id: `none-${i}`, reason: 'x' },
  }));
  await log.append(wants, 1_767_000_000_000);
  for (let i = 0; i < 200; i++) await log.append([wants[i]!], 1_767_000_000_001 + i);
  await store.idle();
  await store.saveSnapshot(path, 1);
  store.close();
  t.deepEqual(errors, [], 'no write failed');
  // One at a time, each starting once 25 events (a delta's share of 100) came since the last: a write per 25 events at
  // most (a writer per event, as when nothing held them back, is hundreds).
  const writes = store.snapshotsWritten + store.deltasWritten;
  t.true(store.snapshotsWritten >= 1 && writes >= 2 && writes <= 3200 / 25 + 1, `${store.snapshotsWritten} images and ${store.deltasWritten} deltas written`);
  t.deepEqual(readdirSync(join(dir, '.platform')).filter((f) => f.endsWith('.tmp')), [], 'no temporary file left');
  t.is(savedAt(path), 3200);
  const reread = await StateStore.open(log, path);
  t.is(reread.start.events_replayed, 0);
  t.deepEqual(canon(reread.current()), canon(store.current()));
  reread.close();
});

test('a writer\'s rests keep its frames to BUSY_SHARE of the time since the log became busy: none while it is behind, none when quiet', (t) => {
  const pacer = new SharePacer();
  const full = 3 * (1 / BUSY_SHARE - 1);
  // On time: the frame's full rest.
  t.is(pacer.rest(3, 0, 3), full);
  // The rest ended late (a busy loop): behind its share, the next frame follows at once.
  t.is(pacer.rest(3, 0, 60), 0);
  t.is(pacer.rest(3, 0, 61), 0);
  // Caught up again (frames back to back until its share is reached): rests come back, never more than a frame's.
  let now = 61;
  let rested = 0;
  for (let i = 0; i < 20; i++) {
    now += 3;
    const r = pacer.rest(3, 0, now);
    t.true(r >= 0 && r <= full);
    rested += r;
    now += r;
  }
  t.true(rested > 0, 'it rests again once ahead');
  // Over the whole busy time the frames took about their share.
  t.true((3 * 23) / now <= BUSY_SHARE + 0.05, `${((3 * 23) / now).toFixed(2)} of the loop`);
  // Quiet: no rest, and the count starts again.
  t.is(pacer.rest(3, QUIET_AFTER_MS, now + 3), 0);
  t.is(pacer.rest(3, 0, now + 1000), full);
});

test("a store's open says how far its read of the snapshot got, before any replay; a stop said there ends the open, not the snapshot's use", async (t) => {
  const { dir, log } = await logWith(t, 30);
  t.teardown(() => log.close());
  const path = join(dir, '.platform', 'snapshot.bin');
  const first = await StateStore.open(log, path);
  t.true(await first.saveSnapshot(path, 0));
  first.close();
  const size = statSync(path).size;
  const told: StartProgress[] = [];
  // Said once the read went on a while (here at once); a read that is over sooner (than a minute, here) says nothing.
  const quiet: StartProgress[] = [];
  (await StateStore.open(log, path, { onReplay: (p) => void quiet.push(p), snapshotNewsAfterMs: 60_000 })).close();
  t.deepEqual(quiet.filter((p) => (p.snapshot_bytes ?? 0) > 0), []);
  const second = await StateStore.open(log, path, { onReplay: (p) => void told.push(p), snapshotNewsAfterMs: 0 });
  second.close();
  t.is(second.start.source, 'snapshot');
  const reads = told.filter((p) => (p.snapshot_bytes ?? 0) > 0);
  t.true(reads.length >= 1, JSON.stringify(told));
  // Read from the disk a piece at a time (this one in one), then decoded (said every 250 ms: not here).
  t.like(reads[0], { events_replayed: 0, events_to_replay: 0, snapshot_bytes: size, snapshot_bytes_read: size, snapshot_bytes_decoded: 0 });
  // `platform stop` while the daemon reads its snapshot: the open ends (it was read as a damaged snapshot, and replayed).
  await t.throwsAsync(
    StateStore.open(log, path, {
      snapshotNewsAfterMs: 0,
      onReplay: (p) => {
        if ((p.snapshot_bytes ?? 0) > 0) throw new StartStopped('stopped by SIGTERM while starting');
      },
    }),
    { instanceOf: StartStopped },
  );
});
