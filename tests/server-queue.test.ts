/**
 * The bounded command queue (capacity 100) between the HTTP write handlers and the orchestrator: with the loop
 * held, 100 writes wait, the 101st is refused at once with 503 + Retry-After, and once the loop goes on every
 * accepted write is answered and recorded.
 */
import test from 'ava';
import { HoldableScheduler } from './helpers/holdable-scheduler.js';
import { QueueFullError } from '../lib/index.js';
import { startServer, waitFor, waitForWant } from './helpers/server-fixture.js';

test('a full command queue answers 503 with Retry-After; every accepted write completes once the loop runs', async (t) => {
  const loop = new HoldableScheduler();
  const f = await startServer(t, { platform: { scheduler: loop } });
  t.is(f.platform.queue.capacity, 100);
  const release = loop.hold();
  let released = false;
  t.teardown(() => {
    if (!released) release();
  });

  const accepted = Array.from({ length: 100 }, (_, i) =>
    f.postWant({ partitions: ['ok/queued'], comment: `queued ${i}` }).then(async (res) => ({ status: res.status, body: (await res.json()) as any })),
  );
  await waitFor('100 commands waiting in the queue', () => f.platform.queue.size === 100);

  // Nothing was answered while the loop is held.
  let settled = 0;
  for (const p of accepted) void p.then(() => settled++);
  await new Promise((r) => setImmediate(r));
  t.is(settled, 0);

  const refused = await f.postWant({ partitions: ['ok/one-too-many'] });
  t.is(refused.status, 503);
  const retryAfter = refused.headers.get('retry-after');
  t.truthy(retryAfter);
  t.true(Number(retryAfter) > 0, `Retry-After: ${retryAfter}`);
  t.regex(refused.headers.get('content-type') ?? '', /application\/json/);
  const error = (await refused.json()) as { error: string };
  t.is(typeof error.error, 'string');
  t.regex(error.error, /^The daemon's command queue is full: 100 writes are waiting[^]*nothing was done\. Retry it after the Retry-After seconds/);

  // Cancels share the queue.
  const refusedDelete = await f.api('/api/wants/w-1', { method: 'DELETE' });
  t.is(refusedDelete.status, 503);
  t.truthy(refusedDelete.headers.get('retry-after'));

  // Reads do not go through the queue: they answer while it is full.
  t.is((await f.api('/health')).status, 200);
  const metrics = await (await f.api('/metrics')).text();
  t.regex(metrics, /^platform_command_queue_depth 100$/m);
  t.is((await f.getJson('/api/wants')).total, 0, 'nothing is recorded before the orchestrator takes it');
  t.is(f.platform.queue.size, 100, 'the refused requests took no place in the queue');

  release();
  released = true;
  const results = await Promise.all(accepted);
  t.deepEqual(
    results.map((r) => r.status),
    Array(100).fill(201),
  );
  const ids = results.map((r) => r.body.want_id as string);
  t.is(new Set(ids).size, 100, 'every accepted write got its own want');
  results.forEach((r, i) => t.is(r.body.want.comment, `queued ${i}`));

  const list = await f.getJson('/api/wants?limit=1000');
  t.is(list.total, 100, 'the refused write created nothing');
  t.deepEqual(new Set(list.data.map((w: any) => w.want_id)), new Set(ids));
  t.false(list.data.some((w: any) => w.partitions.includes('ok/one-too-many')));
  t.is(f.platform.queue.size, 0);

  // The queue works again, and the held wants were really scheduled.
  const after = await f.postWant({ partitions: ['ok/after-release'] });
  t.is(after.status, 201);
  t.is((await waitForWant(f, ids[99]!)).status, 'successful');
});

test('an embedder whose command queue is full is refused with a QueueFullError naming the capacity and queueCapacity, and what to do', async (t) => {
  const loop = new HoldableScheduler();
  const f = await startServer(t, { platform: { scheduler: loop, queueCapacity: 2 } });
  const release = loop.hold();
  t.teardown(release);
  const want = (ref: string) => f.platform.createWant({ partitions: [ref], comment: '', data_timestamp: 0, ttl_seconds: 0, sla_seconds: 0 });
  const accepted = [want('ok/a'), want('ok/b')];
  const err = await t.throwsAsync(want('ok/c'), { instanceOf: QueueFullError });
  t.is(err?.capacity, 2);
  t.regex(err?.message ?? '', /^The command queue is full: 2 commands are waiting[^]*PlatformOptions\.queueCapacity[^]*nothing was done\. Retry it once some of those are answered, or open the platform with a larger queueCapacity\.$/);
  release();
  t.deepEqual((await Promise.all(accepted)).map((r) => r.ok), [true, true]);
});

test('a write to a server whose platform has closed is a 503 saying the server is shutting down, with Retry-After', async (t) => {
  const f = await startServer(t);
  await f.platform.close();
  for (const res of [await f.postWant({ partitions: ['ok/late'] }), await f.api('/api/wants/w-1', { method: 'DELETE' })]) {
    t.is(res.status, 503);
    t.is(res.headers.get('retry-after'), '5');
    t.regex(((await res.json()) as { error: string }).error, /^The server is shutting down and takes no new requests; retry once it runs again\.$/);
  }
});
