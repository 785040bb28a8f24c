/** tailEvents: the backlog paced by its consumer, then live events, with no gap and no repeat. */
import test, { type ExecutionContext } from 'ava';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BuildEvent, EventPayload } from '../lib/events/build-event.js';
import { EventLog } from '../lib/events/event-log.js';
import { tailEvents } from '../lib/events/event-tail.js';

const canceled = (i: number): EventPayload => ({ type: 'want_canceled', want_canceled: { want_id: `w-${i}`, reason: '' } });

async function openLog(t: ExecutionContext): Promise<EventLog> {
  const dir = await mkdtemp(join(tmpdir(), 'tail-'));
  const log = await EventLog.open(dir);
  t.teardown(async () => {
    await log.close();
    await rm(dir, { recursive: true, force: true });
  });
  return log;
}

const tick = () => new Promise((r) => setTimeout(r, 50));

test('the backlog is read a page at a time, only as fast as the consumer says it is ready', async (t) => {
  const log = await openLog(t);
  await log.append(Array.from({ length: 2500 }, (_, i) => canceled(i)), 1);
  // The tail asks `ready` before each page; it blocks while no grant is left. Waiting for that block (not for a
  // fixed time) makes the test exact however slow the machine is.
  let grants = 1;
  let wake: (() => void) | undefined;
  let blocked: (() => void) | undefined;
  const nextBlock = () => new Promise<void>((r) => (blocked = r));
  const ready = async () => {
    while (grants === 0) {
      blocked?.();
      await new Promise<void>((r) => (wake = r));
    }
    grants--;
  };
  const seen: number[] = [];
  let waiting = nextBlock();
  const sub = tailEvents(log, 0, ready).subscribe((e) => seen.push(e.event_id));
  t.teardown(() => sub.unsubscribe());
  await waiting;
  t.is(seen.length, 1000, 'one page, then it waits');
  waiting = nextBlock();
  grants = 1;
  wake?.();
  await waiting;
  t.is(seen.length, 2000);
  grants = 10;
  wake?.();
  while (seen.length < 2500) await tick();
  t.deepEqual(seen, Array.from({ length: 2500 }, (_, i) => i + 1));
});

test('events appended while the backlog is read arrive once each, in order, then live ones follow', async (t) => {
  const log = await openLog(t);
  await log.append(Array.from({ length: 1500 }, (_, i) => canceled(i)), 1);
  const seen: BuildEvent[] = [];
  const sub = tailEvents(log, 200).subscribe((e) => seen.push(e));
  t.teardown(() => sub.unsubscribe());
  await log.append([canceled(9001), canceled(9002)], 2); // races the backlog read
  await tick();
  await log.append([canceled(9003)], 3); // live
  await tick();
  const ids = seen.map((e) => e.event_id);
  t.deepEqual(ids, Array.from({ length: 1503 - 200 }, (_, i) => i + 201));
});
