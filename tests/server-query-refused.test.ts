/**
 * A query parameter an operation does not read is refused with a 400 naming it, and nothing is done: writes too (QA,
 * session 33: `POST /api/gc?dry_run=true` ran a real gc, `POST /api/taints?dry_run=true` made a taint). The dashboard's
 * pages and /health keep whatever query they are given. The real server.
 */
import test from 'ava';
import { startServer, waitFor } from './helpers/server-fixture.js';

test('writes refuse a query parameter they do not read, naming it, and do nothing', async (t) => {
  const f = await startServer(t);
  const made = await f.postWant({ partitions: ['ok/a'] });
  t.is(made.status, 201);
  const { want_id } = (await made.json()) as { want_id: string };
  await waitFor('ok/a built', async () => ((await f.getJson(`/api/wants/${want_id}`)).status === 'successful' ? true : undefined));
  const before = f.platform.state();
  const json = { 'content-type': 'application/json' };
  const writes: Array<[string, string, string | undefined]> = [
    ['POST', '/api/gc?dry_run=true', '{}'],
    ['POST', '/api/gc?dry_run=true', undefined],
    ['POST', '/api/wants?dry_run=true', JSON.stringify({ partitions: ['ok/b'] })],
    ['POST', '/api/taints?dry_run=1', JSON.stringify({ partitions: ['ok/a'], reason: 'x' })],
    ['POST', '/api/backfills?cap=2', JSON.stringify({ partitions: ['ok/c'] })],
    ['DELETE', `/api/wants/${want_id}?force=1`, undefined],
  ];
  for (const [method, path, body] of writes) {
    const res = await f.api(path, { method, ...(body === undefined ? {} : { headers: json, body }) });
    t.is(res.status, 400, `${method} ${path}`);
    const error = ((await res.json()) as { error: string }).error;
    t.regex(error, /^Unknown query parameter '(dry_run|cap|force)'; this path takes none: nothing was done/, `${method} ${path}: ${error}`);
  }
  const after = f.platform.state();
  t.is(after.last_event_id, before.last_event_id, 'nothing was recorded');
  t.is(after.wants.size, before.wants.size);
  t.is(after.taints.size, 0);
  t.is(f.platform.log.firstId(), 1, 'no gc compacted the log');

  const status = await f.api('/api/status?verbose=1');
  t.is(status.status, 400);
  t.regex(((await status.json()) as { error: string }).error, /Unknown query parameter 'verbose'/);
  // Reads that take parameters still name what they take.
  const list = await f.api('/api/wants?bogus=1');
  t.regex(((await list.json()) as { error: string }).error, /Unknown query parameter 'bogus'; this path takes offset, limit/);
  // Not the API: probes and the dashboard's pages.
  t.is((await fetch(`${f.url}/health?probe=1`)).status, 200);
  t.not((await fetch(`${f.url}/?offset=100`)).status, 400);
});
