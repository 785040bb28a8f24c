/**
 * Text with no UTF-8 form (a lone UTF-16 surrogate, which JSON's "\ud800" decodes to) is refused with a 400 wherever
 * it comes in, and nothing of it is recorded: written, it was bytes the log's own decoder refuses, and the next start
 * could not read the log. The real server on a real LevelDB log, reopened after each attempt.
 */
import test from 'ava';
import { TEST_GRAPH, startServer } from './helpers/server-fixture.js';
import { encodeEvent } from '../lib/events/event-codec.js';
import type { BuildEvent } from '../lib/events/build-event.js';

const LONE = 'late \ud800 rows';
const GRAPH = { ...TEST_GRAPH, schedules: [{ name: 'nightly', cron: '0 3 * * *', partitions: ['ok/n${date}'] }] };

test('a comment, a reason or a ref with a lone surrogate is a 400 naming the field; the log still opens after it', async (t) => {
  const f = await startServer(t, { graph: GRAPH });
  // JSON.stringify writes a lone surrogate as the escape "\ud800", as a client would send it.
  const post = (path: string, body: unknown) => f.api(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const refused = async (path: string, body: unknown, field: RegExp) => {
    const res = await post(path, body);
    t.is(res.status, 400, path);
    t.regex(((await res.json()) as { error: string }).error, field);
  };
  await refused('/api/wants', { partitions: ['ok/1'], comment: LONE }, /^comment holds text that is not valid Unicode/);
  await refused('/api/wants', { partitions: [`ok/${LONE}`] }, /^partitions\[0\] holds text that is not valid Unicode/);
  await refused('/api/taints', { partitions: ['ok/1'], reason: LONE }, /^reason holds text/);
  await refused('/api/schedules/nightly/pause', { reason: LONE }, /^reason holds text/);
  const created = await post('/api/wants', { partitions: ['ok/1'], comment: 'fine' });
  t.is(created.status, 201);
  const { want_id } = (await created.json()) as { want_id: string };

  // The embedding API, which no JSON schema guards, refuses them too.
  const embedded = await f.platform.createWant({ partitions: ['ok/2'], comment: LONE, data_timestamp: 0, ttl_seconds: 0, sla_seconds: 0 });
  t.like(embedded, { ok: false, status: 400 });
  t.like(await f.platform.pauseSchedule('nightly', LONE), { ok: false, status: 400 });

  const latest = f.platform.state().last_event_id;
  await f.close();
  const again = await startServer(t, { dir: f.dir, graph: GRAPH });
  t.true(again.platform.state().last_event_id >= latest, 'the log opens, with all that was accepted');
  const all = await again.platform.log.list(0, 10_000);
  t.false(all.some((e) => JSON.stringify(e).includes('\\ud800')), 'nothing of the refused text was recorded');
  t.is(again.platform.state().wants.get(want_id)?.comment, 'fine');
});

test("the log's codec refuses a lone surrogate as a last guard, rather than write what it cannot read", (t) => {
  const event: BuildEvent = { event_id: 1, timestamp: 0, type: 'taint_created', taint_created: { taint_id: 't-1', partitions: ['a'], reason: LONE, downstream: false } };
  t.throws(() => encodeEvent(event), { message: /lone UTF-16 surrogate/ });
});
