/**
 * A platform opened with `start: false` (as the daemon opens one before its port is bound) takes commands before
 * `start()`: they wait, counted against the queue's capacity, and the first steps after `start()` take them in the
 * order offered. They were dropped from the orchestrator's input unseen, never answered, each holding a slot for ever.
 */
import test from 'ava';
import { QueueFullError } from '../lib/orchestrator/command-queue.js';
import type { CommandResult } from '../lib/orchestrator/command.js';
import { makeWorkspace, openPlatform, waitForWant } from './helpers/jobs-fixture.js';

const graph = { jobs: [{ label: 'a', outputs: ['a/(?<n>\\w+)'], exec: ['true'] }] };

/** Within `ms`, or a failure saying what did not settle (a hang would otherwise read as ava's own timeout). */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} did not settle within ${ms} ms`)), ms)));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

test('commands offered before start() are taken by the first steps after it, in order; none is lost or left waiting', async (t) => {
  const dir = makeWorkspace(t);
  const platform = await openPlatform(t, dir, graph, { start: false, queueCapacity: 2 });
  const offered = [platform.createWant({ partitions: ['a/1'] }), platform.createWant({ partitions: ['a/2'] })];
  const refused = await Promise.allSettled([platform.createWant({ partitions: ['a/3'] }), platform.createTaint({ partitions: ['a/1'] })]);
  for (const r of refused) t.true(r.status === 'rejected' && r.reason instanceof QueueFullError, 'past the capacity: refused at once');
  t.is(platform.queue.size, 2, 'the two accepted wait for the orchestrator');
  t.is(platform.log.latestId(), 0, 'nothing is done before start()');

  platform.start();
  const replies: CommandResult[] = await within(Promise.all(offered), 10_000, 'the commands offered before start()');
  const ids = replies.map((r) => (r.ok ? r.want_id : `refused: ${r.error}`));
  t.deepEqual(ids, ['w-1', 'w-2'], 'answered, in the order offered');
  t.is(platform.queue.size, 0, 'no slot is held any more');
  for (const id of ids) await waitForWant(platform, id, ['successful']);
  t.deepEqual(
    ids.map((id) => platform.state().wants.get(id)?.partitions),
    [['a/1'], ['a/2']],
  );

  // And the queue takes commands as usual once started.
  const after = await within(platform.createWant({ partitions: ['a/3'] }), 10_000, 'a command after start()');
  t.true(after.ok);
});

test('a platform closed without ever starting refuses what was offered before, rather than leave it waiting', async (t) => {
  const dir = makeWorkspace(t);
  const platform = await openPlatform(t, dir, graph, { start: false });
  const offered = platform.createWant({ partitions: ['a/1'] });
  await platform.close();
  const err = await t.throwsAsync(within(offered, 10_000, 'a command offered before a close'));
  t.is(err?.name, 'QueueClosedError');
  t.is(platform.queue.size, 0);
});
