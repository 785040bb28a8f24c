import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import test from 'ava';
import fc from 'fast-check';
import { firstValueFrom, toArray } from 'rxjs';
import type { BuildEvent, EventPayload } from '../lib/events/build-event.js';
import { EventLog, eventIdOfKey, eventKey } from '../lib/events/event-log.js';
import { arbEventPayload } from './helpers/arbitrary-events.js';

const dirs: string[] = [];

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'platform-bel-'));
  dirs.push(dir);
  return dir;
}

test.after.always(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

function succeeded(id: string): EventPayload {
  return { type: 'job_run_succeeded', job_run_succeeded: { job_run_id: id, builds: [], ended_at: 0 } };
}

function canceled(id: string): EventPayload {
  return { type: 'want_canceled', want_canceled: { want_id: id, reason: 'test' } };
}

const ids = (events: BuildEvent[]): number[] => events.map((e) => e.event_id);
const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);

test('keys are 8-byte big-endian and sort like the ids', (t) => {
  t.deepEqual([...eventKey(1)], [0, 0, 0, 0, 0, 0, 0, 1]);
  t.deepEqual([...eventKey(256)], [0, 0, 0, 0, 0, 0, 1, 0]);
  t.deepEqual([...eventKey(2 ** 32 + 3)], [0, 0, 0, 1, 0, 0, 0, 3]);
  t.deepEqual([...eventKey(Number.MAX_SAFE_INTEGER)], [0, 0x1f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]);
  for (const id of [0, 1, 255, 256, 65535, 65536, 2 ** 32 - 1, 2 ** 32, Number.MAX_SAFE_INTEGER]) {
    t.is(eventIdOfKey(eventKey(id)), id);
  }
  fc.assert(
    fc.property(fc.maxSafeNat(), fc.maxSafeNat(), (a, b) => {
      const cmp = Buffer.compare(Buffer.from(eventKey(a)), Buffer.from(eventKey(b)));
      return Math.sign(cmp) === Math.sign(a - b);
    }),
  );
});

test('append gives dense ids from 1; list, get and latestId', async (t) => {
  const log = await EventLog.open(path.join(await tempDir(), 'nested', 'bel'));
  t.is(log.latestId(), 0);
  t.deepEqual(await log.list(0, 10), []);
  t.is(await log.get(1), undefined);

  t.deepEqual(await log.append([], 5), []);
  t.is(log.latestId(), 0);

  const first = await log.append([succeeded('a'), canceled('w'), succeeded('b')], 1000);
  t.deepEqual(ids(first), [1, 2, 3]);
  t.true(first.every((e) => e.timestamp === 1000));
  t.deepEqual(first[1], { event_id: 2, timestamp: 1000, type: 'want_canceled', want_canceled: { want_id: 'w', reason: 'test' } });
  const second = await log.append([succeeded('c'), succeeded('d')], 2000);
  t.deepEqual(ids(second), [4, 5]);
  t.is(log.latestId(), 5);

  const all = await log.list(0, 100);
  t.deepEqual(all, [...first, ...second]);
  t.deepEqual(ids(await log.list(0, 2)), [1, 2]);
  t.deepEqual(ids(await log.list(2, 2)), [3, 4]);
  t.deepEqual(ids(await log.list(4, 10)), [5]);
  t.deepEqual(await log.list(5, 10), []);
  t.deepEqual(await log.list(50, 10), []);
  t.deepEqual(await log.list(0, 0), []);

  t.deepEqual(await log.get(4), second[0]);
  t.deepEqual(await log.get(1), first[0]);
  t.is(await log.get(0), undefined);
  t.is(await log.get(6), undefined);
  t.is(await log.get(1_000_000), undefined);

  await log.close();
});

test('invalid arguments are RangeErrors', async (t) => {
  const log = await EventLog.open(await tempDir());
  await t.throwsAsync(log.list(-1, 10), { instanceOf: RangeError, message: /offset/ });
  await t.throwsAsync(log.list(0, 1.5), { instanceOf: RangeError, message: /limit/ });
  await t.throwsAsync(log.list(0, -1), { instanceOf: RangeError, message: /limit/ });
  await t.throwsAsync(log.list(Number.NaN, 1), { instanceOf: RangeError });
  await t.throwsAsync(log.get(-1), { instanceOf: RangeError, message: /id/ });
  await t.throwsAsync(log.get(2.5), { instanceOf: RangeError, message: /id/ });
  await t.throwsAsync(log.append([succeeded('a')], 1.5), { instanceOf: RangeError, message: /timestamp/ });
  t.throws(() => log.replay(-1), { instanceOf: RangeError, message: /fromId/ });
  t.throws(() => log.replay(1, 0), { instanceOf: RangeError, message: /batchSize/ });
  // An invalid payload rejects the whole batch and writes nothing.
  const bad = { type: 'job_run_started', job_run_started: { job_run_id: 'r', pid: -4 } } as EventPayload;
  await t.throwsAsync(log.append([succeeded('a'), bad], 1), { message: /event 2.*pid/ });
  t.is(log.latestId(), 0);
  t.deepEqual(await log.list(0, 10), []);
  t.deepEqual(ids(await log.append([succeeded('a')], 1)), [1]);
  await log.close();
  await t.throwsAsync(log.append([succeeded('b')], 1), { message: /closed/ });
});

test('reopen keeps everything and continues ids', async (t) => {
  const dir = await tempDir();
  const log = await EventLog.open(dir);
  const written = await log.append([succeeded('a'), succeeded('b'), canceled('w')], 10);
  await log.close();

  const again = await EventLog.open(dir);
  t.is(again.latestId(), 3);
  t.deepEqual(await again.list(0, 10), written);
  const more = await again.append([succeeded('c')], 20);
  t.deepEqual(ids(more), [4]);
  await again.close();

  const third = await EventLog.open(dir);
  t.is(third.latestId(), 4);
  t.deepEqual(await third.list(0, 10), [...written, ...more]);
  await third.close();
});

test('unsynced appends are kept in order with synced ones across a reopen', async (t) => {
  const dir = await tempDir();
  const log = await EventLog.open(dir);
  const a = await log.append([succeeded('a')], 10, { sync: false });
  const b = await log.append([succeeded('b'), succeeded('c')], 11);
  const c = await log.append([canceled('w')], 12, { sync: false });
  t.deepEqual([...ids(a), ...ids(b), ...ids(c)], [1, 2, 3, 4]);
  await log.close();
  const again = await EventLog.open(dir);
  t.is(again.latestId(), 4);
  t.deepEqual(await again.list(0, 10), [...a, ...b, ...c]);
  await again.close();
});

test('a second open of the same dir fails while the first holds the lock', async (t) => {
  const dir = await tempDir();
  const log = await EventLog.open(dir);
  await t.throwsAsync(EventLog.open(dir), { message: /already open in this process/ });
  await log.close();
  // Closed, it opens again here.
  const again = await EventLog.open(dir);
  await again.close();
});

test('appended$ emits each event in order after it is durably written', async (t) => {
  const dir = await tempDir();
  const log = await EventLog.open(dir);
  const seen: BuildEvent[] = [];
  const checks: Array<Promise<void>> = [];
  const all = firstValueFrom(log.appended$.pipe(toArray()));
  log.appended$.subscribe((e) => {
    seen.push(e);
    t.true(log.latestId() >= e.event_id, 'latestId already covers the emitted event');
    // The event is readable from the store when it is emitted.
    checks.push(
      log.get(e.event_id).then((stored) => {
        t.deepEqual(stored, e);
      }),
    );
  });
  const a = log.append([succeeded('a'), succeeded('b')], 1);
  t.is(seen.length, 0, 'nothing is emitted before the write');
  const b = log.append([canceled('w')], 2);
  const [ra, rb] = await Promise.all([a, b]);
  t.deepEqual(seen, [...ra, ...rb]);
  await Promise.all(checks);
  await log.close();
  t.deepEqual(ids(await all), [1, 2, 3], 'close completes appended$');
});

test('concurrent appends are serialized and never collide', async (t) => {
  const log = await EventLog.open(await tempDir());
  const calls = Array.from({ length: 20 }, (_, i) =>
    log.append(
      Array.from({ length: (i % 4) + 1 }, (_, j) => succeeded(`${i}.${j}`)),
      i,
    ),
  );
  const closing = log.close(); // waits for the in-flight appends
  const results = await Promise.all(calls);
  await closing;
  const flat = results.flat();
  t.deepEqual(ids(flat), range(1, flat.length), 'ids are dense and in call order');
  results.forEach((events, i) => {
    t.is(events.length, (i % 4) + 1);
    t.true(events.every((e) => e.timestamp === i));
  });
});

test('random payloads are stored and read back unchanged', async (t) => {
  const log = await EventLog.open(await tempDir());
  const payloads = fc.sample(arbEventPayload(), { numRuns: 300, seed: 42 });
  const written = await log.append(payloads, 1_700_000_000_000);
  t.deepEqual(await log.list(0, 1000), written);
  t.deepEqual(
    written.map((e) => ({ ...e })),
    payloads.map((p, i) => ({ event_id: i + 1, timestamp: 1_700_000_000_000, ...p })),
  );
  await log.close();
});

test('keys sort numerically beyond 255 and 65535; replay streams everything in order', async (t) => {
  const dir = await tempDir();
  const log = await EventLog.open(dir);
  const total = 70_200;
  const batch = 17_550;
  for (let start = 0; start < total; start += batch) {
    const payloads = Array.from({ length: batch }, (_, i) => succeeded(`r${start + i + 1}`));
    await log.append(payloads, start);
  }
  t.is(log.latestId(), total);

  const around = async (offset: number, limit: number): Promise<void> => {
    const events = await log.list(offset, limit);
    t.deepEqual(ids(events), range(offset + 1, Math.min(offset + limit, total)), `list(${offset}, ${limit})`);
    for (const e of events) {
      t.is(e.type === 'job_run_succeeded' ? e.job_run_succeeded.job_run_id : '', `r${e.event_id}`);
    }
  };
  await around(250, 10); // 251..260 crosses 255/256
  await around(0, 300);
  await around(65530, 10); // crosses 65535/65536
  await around(65535, 2);
  await around(70_190, 100); // runs past the end
  t.deepEqual(await log.list(total, 5), []);
  t.is((await log.get(256))?.event_id, 256);
  t.is((await log.get(65536))?.event_id, 65536);
  await log.close();

  // Reopen: the latest id is found by key order (a lexicographic bug would find 255 or 65535).
  const again = await EventLog.open(dir);
  t.is(again.latestId(), total);

  let expected = 1;
  let batches = 0;
  for await (const chunk of again.replay(undefined, 5000)) {
    t.true(chunk.length > 0 && chunk.length <= 5000);
    batches += 1;
    for (const e of chunk) {
      if (e.event_id !== expected) {
        t.fail(`replay out of order: got ${e.event_id}, expected ${expected}`);
        return;
      }
      expected += 1;
    }
  }
  t.is(expected - 1, total);
  t.is(batches, Math.ceil(total / 5000));

  const tail: number[] = [];
  for await (const chunk of again.replay(65_530, 4)) tail.push(...ids(chunk));
  t.deepEqual(tail, range(65_530, total));

  // Breaking out of a replay early closes its iterator (close() below would fail otherwise).
  for await (const chunk of again.replay(1, 10)) {
    t.deepEqual(ids(chunk), range(1, 10));
    break;
  }
  await again.close();
});
