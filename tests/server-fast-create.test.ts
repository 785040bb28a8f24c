/**
 * `POST /api/wants` takes a fast path in front of express (lib/server/fast-create-want.ts). Whatever path a request
 * takes, the answer must be the same: each body below is sent once plainly (the fast path) and once with the
 * daemon's own Origin (which only express handles), and the two replies must agree, status, error text and all.
 * The guards hold on the fast path too: a foreign Host, a missing token, a body over the limit.
 */
import test from 'ava';
import { request } from 'node:http';
import { connect } from 'node:net';
import { startServer, type ServerFixture } from './helpers/server-fixture.js';

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function raw(url: string, headers: Record<string, string>, body: string | Buffer): Promise<Reply> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, path: '/api/wants', method: 'POST', headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text }));
    });
    // A server that closes a too-large upload before reading it all may reset the socket under the write.
    req.on('error', reject);
    req.end(body);
  });
}

const json = { 'content-type': 'application/json' };

/** The reply's body with the ids (which differ between two creates) taken out. */
function comparable(r: Reply): unknown {
  const parsed = JSON.parse(r.body) as Record<string, unknown>;
  if (r.status !== 201) return { status: r.status, body: parsed };
  const want = parsed.want as Record<string, unknown>;
  // Where the build stands differs too: the first want's run may end before the second want is made (it then finds
  // the partition live instead of joining the run).
  const { want_id: _a, created_at: _b, root_want_id: _c, updated_at: _d, status: _e, partition_status: _f, ...rest } = want;
  return { status: r.status, keys: Object.keys(parsed).sort(), want: rest };
}

const bodies: Array<[string, string]> = [
  ['a valid want', JSON.stringify({ partitions: ['ok/fast-a'], comment: 'c' })],
  ['a want for a ref no job makes', JSON.stringify({ partitions: ['nothing/here'] })],
  ['a body that is not JSON', '{"partitions": ['],
  ['an empty body', ''],
  ['JSON that is not an object', '[1, 2]'],
  ['partitions missing', JSON.stringify({ comment: 'no partitions' })],
  ['a field of the wrong type', JSON.stringify({ partitions: ['ok/x'], ttl_seconds: 'soon' })],
  ['an unknown field', JSON.stringify({ partitions: ['ok/x'], colour: 'blue' })],
  ['JSON after a UTF-8 byte order mark', `\ufeff${JSON.stringify({ partitions: ['ok/bom'] })}`],
];

for (const [what, body] of bodies) {
  test(`${what}: the fast path answers as express does`, async (t) => {
    const f: ServerFixture = await startServer(t);
    const fast = await raw(f.url, json, body);
    const viaExpress = await raw(f.url, { ...json, origin: f.url }, body);
    t.deepEqual(comparable(fast), comparable(viaExpress), `fast: ${fast.body}\nexpress: ${viaExpress.body}`);
    t.regex(String(fast.headers['content-type']), /^application\/json; charset=utf-8$/);
    // The fast path really was taken: express's `res.json` tags every answer with an ETag, the fast path does not.
    t.is(fast.headers.etag, undefined);
    t.truthy(viaExpress.headers.etag);
    if (fast.status === 201) {
      const id = (JSON.parse(fast.body) as { want_id: string }).want_id;
      t.is((await f.getJson<{ want_id: string }>(`/api/wants/${id}`)).want_id, id, 'the want is there');
    } else {
      t.true(fast.status >= 400 && fast.status < 500, `a client error, not ${fast.status}`);
    }
  });
}

test('a body over the 1 MiB limit is 413 on the fast path, declared or not, and the daemon goes on', async (t) => {
  const f = await startServer(t);
  const big = JSON.stringify({ partitions: ['ok/x'], comment: 'x'.repeat(1024 * 1024 + 10) });
  const declared = await raw(f.url, json, big);
  t.is(declared.status, 413);
  t.regex(JSON.parse(declared.body).error, /larger than the limit of 1048576 bytes/);
  // Chunked: no Content-Length to refuse it by; the limit is found while reading.
  const chunked = await raw(f.url, { ...json, 'transfer-encoding': 'chunked' }, big);
  t.is(chunked.status, 413);
  const ok = await raw(f.url, json, JSON.stringify({ partitions: ['ok/after'] }));
  t.is(ok.status, 201);
});

test('the guards hold on the fast path: a foreign Host is 403, a missing or wrong token 401, the right one 201', async (t) => {
  const f = await startServer(t, { server: { token: 'secret-token-1' } });
  const body = JSON.stringify({ partitions: ['ok/guarded'] });
  const foreign = await raw(f.url, { ...json, host: 'evil.example:80', authorization: 'Bearer secret-token-1' }, body);
  t.is(foreign.status, 403);
  t.regex(JSON.parse(foreign.body).error, /not a loopback name/);
  t.is((await raw(f.url, json, body)).status, 401);
  t.is((await raw(f.url, { ...json, authorization: 'Bearer wrong-token-x' }, body)).status, 401);
  const good = await raw(f.url, { ...json, authorization: 'Bearer secret-token-1' }, body);
  t.is(good.status, 201, good.body);
  t.is(good.headers.etag, undefined, 'taken by the fast path');
  const cookie = await raw(f.url, { ...json, cookie: 'platform_token=secret-token-1' }, body);
  t.is(cookie.status, 201, cookie.body);
  // Another site's page cannot write, token or not (express's origin guard: the fast path steps aside).
  const foreignOrigin = await raw(f.url, { ...json, origin: 'http://evil.example', authorization: 'Bearer secret-token-1' }, body);
  t.is(foreignOrigin.status, 403);
});

test('other encodings and types are left to express: 415 for a latin1 charset, 400 or 415 for a non-JSON type', async (t) => {
  const f = await startServer(t);
  const body = JSON.stringify({ partitions: ['ok/enc'] });
  const latin = await raw(f.url, { 'content-type': 'application/json; charset=latin1' }, body);
  t.is(latin.status, 415);
  t.truthy(latin.headers.etag);
  const odd = await raw(f.url, { 'content-type': 'application/json;;' }, body);
  t.truthy(odd.headers.etag, 'an odd Content-Type is left to express');
  const text = await raw(f.url, { 'content-type': 'text/plain' }, body);
  t.true(text.status === 400 || text.status === 415, `${text.status}`);
  t.truthy(text.headers.etag);
});

test('a client that goes away mid-body creates nothing, is not logged as a fault, and the daemon goes on', async (t) => {
  const f = await startServer(t);
  const u = new URL(f.url);
  const socket = connect(Number(u.port), u.hostname);
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  socket.write(`POST /api/wants HTTP/1.1\r\nHost: 127.0.0.1:${u.port}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"partitions": [`);
  await new Promise((r) => setTimeout(r, 100));
  socket.destroy();
  await new Promise((r) => setTimeout(r, 200));
  const ok = await raw(f.url, json, JSON.stringify({ partitions: ['ok/after-abort'] }));
  t.is(ok.status, 201, ok.body);
  t.is((JSON.parse(ok.body) as { want_id: string }).want_id, 'w-1', 'the aborted request made no want');
  t.deepEqual(f.errorLines.filter((l) => /POST \/api\/wants/.test(l)), []);
});

test('a token cookie that is not percent-encoding is a 401, not a crash', async (t) => {
  const f = await startServer(t, { server: { token: 'secret-token-2' } });
  const body = JSON.stringify({ partitions: ['ok/cookie'] });
  const bad = await raw(f.url, { ...json, cookie: 'platform_token=%E0%A4' }, body);
  t.is(bad.status, 401, bad.body);
  const good = await raw(f.url, { ...json, authorization: 'Bearer secret-token-2' }, body);
  t.is(good.status, 201, 'the daemon is still there');
});
