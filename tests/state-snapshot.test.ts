/**
 * Snapshots: a state saved at any event, loaded back (through JSON, as on disk) and folded on with the rest of
 * the events, is the state a full fold gives. A snapshot that does not fit the log or the code is ignored.
 */
import test, { type ExecutionContext } from 'ava';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import type { BuildEvent } from '../lib/events/build-event.js';
import { EventLog } from '../lib/events/event-log.js';
import { initialState, type BuildState } from '../lib/state/build-state.js';
import { reduce } from '../lib/state/reduce.js';
import { fromSnapshot, toSnapshot, type Snapshot } from '../lib/state/snapshot.js';
import { StateStore } from '../lib/state/state-store.js';
import { arbEventList } from './helpers/arbitrary-events.js';
import { makeWorkspace } from './helpers/server-fixture.js';
import { canon } from './helpers/state-canon.js';

const fold = (events: readonly BuildEvent[], from: BuildState = initialState()): BuildState => events.reduce(reduce, from);
const throughJson = (s: Snapshot): Snapshot => JSON.parse(JSON.stringify(s)) as Snapshot;

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
  const path = join(dir, '.platform', 'snapshot.json');
  const first = await StateStore.open(log, path);
  t.true(await first.saveSnapshot(path, 0));
  t.false(await first.saveSnapshot(path, 1), 'nothing new since: no rewrite');
  first.close();

  // Mark the snapshot so its use shows: a reopened store that replayed the log instead would not have the mark.
  const file = JSON.parse(readFileSync(path, 'utf8')) as { snapshot: Snapshot };
  file.snapshot.wants = file.snapshot.wants.map((w) => (w.want_id === 'w-1' ? { ...w, comment: 'from the snapshot' } : w));
  writeFileSync(path, JSON.stringify(file));
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
  const path = join(dir, '.platform', 'snapshot.json');
  const full = await StateStore.open(log);
  const expected = canon(full.current());
  full.close();

  const store = await StateStore.open(log, path);
  await store.saveSnapshot(path, 0);
  store.close();
  const good = JSON.parse(readFileSync(path, 'utf8')) as { version: string; last_event_timestamp: number; snapshot: Snapshot };

  const variants: Array<[string, string]> = [
    ['ahead of the log', JSON.stringify({ ...good, snapshot: { ...good.snapshot, last_event_id: 99 } })],
    ['of other code', JSON.stringify({ ...good, version: 'another-build', snapshot: { ...good.snapshot, wants: [] } })],
    ['unreadable', '{"version": '],
    ['of another log as long as this one', JSON.stringify({ ...good, last_event_timestamp: good.last_event_timestamp + 1 })],
    ['malformed (records out of order)', JSON.stringify({ ...good, snapshot: { ...good.snapshot, wants: [...good.snapshot.wants].reverse() } })],
  ];
  for (const [what, text] of variants) {
    writeFileSync(path, text);
    const reopened = await StateStore.open(log, path);
    t.deepEqual(canon(reopened.current()), expected, what);
    reopened.close();
  }
});
