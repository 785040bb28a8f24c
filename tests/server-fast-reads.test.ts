/**
 * `GET /health`, `GET /api/wants/:id` and pages of `GET /api/wants` take a fast path in front of express
 * (lib/server/fast-reads.ts). Whatever path a request takes, the answer must be the same: each is sent once plainly
 * (the fast path, where it applies) and once with the daemon's own Origin (which only express handles), and status,
 * type, ETag and body must agree. The ETag is express's own: a conditional request with it is express's 304. The
 * guards hold: a foreign Host is 403, a missing token 401 (but for /health).
 */
import test from 'ava';
import { rawRequest, startServer, waitForWant, type RawResponse } from './helpers/server-fixture.js';

const comparable = (r: RawResponse) => ({ status: r.status, type: r.headers['content-type'], etag: r.headers.etag, body: r.body });

const paths = [
  '/health',
  '/api/wants/w-1',
  '/api/wants/w-2',
  '/api/wants/w-99',
  '/api/wants/w%2D1',
  '/api/wants',
  '/api/wants?limit=2&offset=1',
  '/api/wants?order=desc&limit=1',
  '/api/wants?status=successful',
  '/api/wants?status=nonsense',
  '/api/wants?limit=5000',
  '/api/wants?limit=abc',
  '/api/wants?limit=',
  '/api/wants?limit=1&limit=2',
  '/api/wants?colour=blue',
  '/api/wants?limit=%31',
  '/api/wants/',
];

test('the fast path answers every read as express does, status, ETag and body', async (t) => {
  const f = await startServer(t);
  const w1 = (await (await f.postWant({ partitions: ['ok/alpha'] })).json()) as { want_id: string };
  await waitForWant(f, w1.want_id);
  const w2 = (await (await f.postWant({ partitions: ['fail/beta'], comment: 'second' })).json()) as { want_id: string };
  // Settled first: two reads of a want that moves between them differ whatever the paths (it flaked in CI).
  await waitForWant(f, w2.want_id);
  for (const path of paths) {
    const fast = await rawRequest(`${f.url}${path}`);
    const viaExpress = await rawRequest(`${f.url}${path}`, { headers: { origin: f.url } });
    t.deepEqual(comparable(fast), comparable(viaExpress), path);
    t.true(fast.status < 500, `${path}: ${fast.status}`);
  }
  // The fast path's ETag is the one express checks a conditional request against.
  const plain = await rawRequest(`${f.url}/api/wants/w-1`);
  t.is(plain.status, 200);
  const again = await rawRequest(`${f.url}/api/wants/w-1`, { headers: { 'if-none-match': String(plain.headers.etag) } });
  t.is(again.status, 304);
  const page = await rawRequest(`${f.url}/api/wants?limit=1`);
  t.is((JSON.parse(page.body) as { data: unknown[] }).data.length, 1);
});

test('the guards hold on the fast reads: a foreign Host is 403, a missing or wrong token 401, /health open', async (t) => {
  const f = await startServer(t, { server: { token: 'secret-token-3' } });
  const auth = { authorization: 'Bearer secret-token-3' };
  const created = await f.api('/api/wants', { method: 'POST', headers: { 'content-type': 'application/json', ...auth }, body: JSON.stringify({ partitions: ['ok/x'] }) });
  t.is(created.status, 201);
  for (const path of ['/api/wants/w-1', '/api/wants?limit=1']) {
    t.is((await rawRequest(`${f.url}${path}`)).status, 401, path);
    t.is((await rawRequest(`${f.url}${path}`, { headers: { authorization: 'Bearer wrong-token-y' } })).status, 401, path);
    t.is((await rawRequest(`${f.url}${path}`, { headers: auth })).status, 200, path);
    t.is((await rawRequest(`${f.url}${path}`, { headers: { cookie: 'platform_token=secret-token-3' } })).status, 200, path);
    const foreign = await rawRequest(`${f.url}${path}`, { headers: { ...auth, host: 'evil.example' } });
    t.is(foreign.status, 403, path);
    t.regex((JSON.parse(foreign.body) as { error: string }).error, /not a loopback name/);
  }
  const health = await rawRequest(`${f.url}/health`);
  t.is(health.status, 200);
  t.is(health.body, 'OK');
  t.is((await rawRequest(`${f.url}/health`, { headers: { host: 'evil.example' } })).status, 403);
});
