/**
 * Every HTTP endpoint's success and error paths, against the real server on port 0 over a real LevelDB log in a
 * temp workspace, with real job processes (`bash -c`) from tests/helpers/server-fixture.ts.
 */
import test from 'ava';
import { listJobRuns } from '../lib/index.js';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import {
  createWant,
  rawRequest,
  SseReader,
  startServer,
  waitFor,
  waitForWant,
  type ServerFixture,
} from './helpers/server-fixture.js';
import { isPidAlive } from '../lib/system/pid-liveness.js';
import { EVENT_PAGE_BYTES } from '../lib/api/schemas/events.js';
import { InProcessExecutor } from '../lib/executor/in-process-executor.js';
import type { ExecutorHealth } from '../lib/index.js';

const JSON_HEADERS = { 'content-type': 'application/json' };

async function wantsTotal(f: ServerFixture): Promise<number> {
  return (await f.getJson('/api/wants')).total;
}

/** Asserts the JSON error shape `{"error": string, "want_id"?: string}` and returns it. */
async function errorOf(t: import('ava').ExecutionContext, res: Response, status: number): Promise<{ error: string; want_id?: string }> {
  const text = await res.text();
  t.is(res.status, status, text);
  t.regex(res.headers.get('content-type') ?? '', /application\/json/);
  const body = JSON.parse(text) as { error: string; want_id?: string };
  t.is(typeof body.error, 'string');
  t.true(body.error.length > 0);
  for (const key of Object.keys(body)) t.true(key === 'error' || key === 'want_id', `unexpected key ${key} in ${text}`);
  return body;
}

test('GET /health answers 200 with a plain OK', async (t) => {
  const f = await startServer(t);
  const res = await f.api('/health');
  t.is(res.status, 200);
  t.regex(res.headers.get('content-type') ?? '', /^text\/plain/);
  t.is(await res.text(), 'OK');
});

test('POST /api/wants answers 201 with the want detail, and GET sees it right after the reply', async (t) => {
  const f = await startServer(t);
  // Data of a minute ago: ttl and sla count from it (not from the want's creation), so both are still ahead.
  const dataTimestamp = new Date(Math.floor(Date.now() / 1000) * 1000 - 60_000).toISOString();
  const res = await f.postWant({
    partitions: ['ok/first', 'ok/second', 'ok/first'],
    comment: 'from the test',
    ttl_seconds: 600,
    sla_seconds: 120,
    data_timestamp: dataTimestamp,
  });
  t.is(res.status, 201);
  const body = (await res.json()) as { want_id: string; want: any };
  t.is(typeof body.want_id, 'string');
  const w = body.want;
  t.is(w.want_id, body.want_id);
  t.deepEqual(w.partitions, ['ok/first', 'ok/second'], 'duplicate refs are dropped, order kept');
  t.is(w.comment, 'from the test');
  t.is(w.ttl_seconds, 600);
  t.is(w.sla_seconds, 120);
  t.is(w.data_timestamp, dataTimestamp);
  t.is(w.expires_at, new Date(Date.parse(dataTimestamp) + 600_000).toISOString());
  t.is(w.sla_deadline, new Date(Date.parse(dataTimestamp) + 120_000).toISOString());
  t.is(w.source, 'user');
  t.is(w.parent_want_id, null);
  t.is(w.root_want_id, body.want_id);
  t.true(['idle', 'building', 'upstream_building'].includes(w.status), w.status);
  t.false(Number.isNaN(Date.parse(w.created_at)));
  t.regex(w.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  t.deepEqual(Object.keys(w.partition_status).sort(), ['ok/first', 'ok/second']);
  t.true(Array.isArray(w.job_run_ids));

  // Read-your-write: no polling, the very next GET has it.
  const got = await f.api(`/api/wants/${body.want_id}`);
  t.is(got.status, 200);
  const detail = (await got.json()) as any;
  t.is(detail.want_id, body.want_id);
  t.deepEqual(detail.partitions, ['ok/first', 'ok/second']);
  const list = await f.getJson('/api/wants');
  t.deepEqual(
    list.data.map((x: any) => x.want_id),
    [body.want_id],
  );

  // And the job really runs: the want ends successful, the job wrote its files.
  const done = await waitForWant(f, body.want_id);
  t.is(done.status, 'successful');
  t.deepEqual(done.partition_status, { 'ok/first': 'live', 'ok/second': 'live' });
  t.is(readFileSync(join(f.dir, 'out', 'first'), 'utf8'), 'built first\n');
  t.is(readFileSync(join(f.dir, 'out', 'second'), 'utf8'), 'built second\n');
});

test('POST /api/wants refuses invalid requests with 400 (415 for a body that is not JSON) and a JSON error, and creates nothing', async (t) => {
  const f = await startServer(t);
  const tooLong = `ok/${'a'.repeat(1022)}`; // 1025 characters
  const cases: Array<{ name: string; body: string | undefined; headers?: Record<string, string>; mention?: RegExp; status?: number }> = [
    { name: 'malformed JSON', body: '{"partitions": ["ok/a"', mention: /JSON/ },
    { name: 'trailing garbage', body: '{"partitions": ["ok/a"]} x', mention: /JSON/ },
    { name: 'body an array', body: '["ok/a"]', mention: /object/ },
    { name: 'body a string', body: '"ok/a"', mention: /object/ },
    { name: 'body a number', body: '42', mention: /object/ },
    { name: 'body null', body: 'null', mention: /object/ },
    { name: 'no body at all', body: undefined, headers: {} },
    // What a page's empty <form enctype=text/plain> sends, which needs no CORS preflight: not taken as no body.
    { name: 'an empty body named text/plain', body: '', headers: { 'content-type': 'text/plain' }, status: 415, mention: /this one came as text\/plain/ },
    { name: 'an empty form', body: '', headers: { 'content-type': 'application/x-www-form-urlencoded' }, status: 415, mention: /must be JSON/ },
    { name: 'not JSON content type', body: 'partitions=ok/a', headers: { 'content-type': 'application/x-www-form-urlencoded' }, status: 415, mention: /Content-Type: application\/json, like \{"partitions"/ },
    { name: 'missing partitions', body: '{}', mention: /partitions/ },
    { name: 'empty partitions', body: '{"partitions": []}', mention: /partitions/ },
    { name: 'partitions not an array', body: '{"partitions": "ok/a"}', mention: /partitions/ },
    { name: 'non-string ref', body: '{"partitions": [1]}', mention: /partitions\[0\]/ },
    { name: 'null ref', body: '{"partitions": ["ok/a", null]}', mention: /partitions\[1\]/ },
    { name: 'object ref', body: '{"partitions": [{"ref": "ok/a"}]}', mention: /partitions\[0\]/ },
    { name: 'empty ref', body: '{"partitions": [""]}', mention: /empty/ },
    { name: 'blank ref', body: '{"partitions": ["   "]}', mention: /empty/ },
    { name: 'ref with a control character', body: JSON.stringify({ partitions: ['ok/a\nb'] }), mention: /control/ },
    { name: 'ref over 1024 characters', body: JSON.stringify({ partitions: [tooLong] }), mention: /1024/ },
    { name: 'unknown field', body: '{"partitions": ["ok/a"], "urgency": 5}', mention: /urgency/ },
    { name: 'ttl as a string', body: '{"partitions": ["ok/a"], "ttl_seconds": "60"}', mention: /ttl_seconds/ },
    { name: 'negative ttl', body: '{"partitions": ["ok/a"], "ttl_seconds": -1}', mention: /ttl_seconds/ },
    { name: 'fractional ttl', body: '{"partitions": ["ok/a"], "ttl_seconds": 1.5}', mention: /ttl_seconds/ },
    { name: 'sla as a boolean', body: '{"partitions": ["ok/a"], "sla_seconds": true}', mention: /sla_seconds/ },
    { name: 'comment a number', body: '{"partitions": ["ok/a"], "comment": 7}', mention: /comment/ },
    { name: 'bad data_timestamp', body: '{"partitions": ["ok/a"], "data_timestamp": "yesterday-ish"}', mention: /data_timestamp/ },
    // Times that no date can hold: they were recorded, and then every read of the want was a 500.
    { name: 'ttl past any date', body: `{"partitions": ["ok/a"], "ttl_seconds": ${Number.MAX_SAFE_INTEGER}}`, mention: /ttl_seconds/ },
    { name: 'sla past any date', body: '{"partitions": ["ok/a"], "sla_seconds": 4000000000}', mention: /sla_seconds/ },
    { name: 'data_timestamp past any date', body: `{"partitions": ["ok/a"], "data_timestamp": ${Number.MAX_SAFE_INTEGER}}`, mention: /data_timestamp/ },
    { name: 'data_timestamp in the year 10000', body: '{"partitions": ["ok/a"], "data_timestamp": "+010000-01-01T00:00:00Z"}', mention: /data_timestamp/ },
    { name: 'ref no job produces', body: '{"partitions": ["ok/a", "nothing/makes/this"]}', mention: /nothing\/makes\/this/ },
    { name: 'ref matching a job only partly', body: '{"partitions": ["ok/UPPER"]}', mention: /ok\/UPPER/ },
  ];
  for (const c of cases) {
    const res = await f.api('/api/wants', { method: 'POST', headers: c.headers ?? JSON_HEADERS, body: c.body });
    const err = await errorOf(t, res, c.status ?? 400);
    if (c.mention) t.regex(err.error, c.mention, `${c.name}: ${err.error}`);
  }
  t.is(await wantsTotal(f), 0, 'no invalid request created a want');
  t.is(f.platform.log.latestId(), 0, 'no invalid request wrote an event');

  // The boundary: a ref of exactly 1024 characters is fine.
  const exact = `fail/${'b'.repeat(1019)}`;
  t.is(exact.length, 1024);
  const ok = await f.postWant({ partitions: [exact] });
  t.is(ok.status, 201);
  t.is(await wantsTotal(f), 1);
});

test('a body over 1 MiB is refused with 413 and a JSON error', async (t) => {
  const f = await startServer(t);
  const body = JSON.stringify({ partitions: ['ok/a'], comment: 'x'.repeat(1024 * 1024) });
  const err = await errorOf(t, await f.api('/api/wants', { method: 'POST', headers: JSON_HEADERS, body }), 413);
  t.regex(err.error, /larger than/);
  t.is(await wantsTotal(f), 0);
  // Just under the limit is read (and then judged on its content: the comment is too long for a want).
  const under = JSON.stringify({ partitions: ['ok/a'], comment: 'y'.repeat(1024 * 1024 - 100) });
  t.true(Buffer.byteLength(under) <= 1024 * 1024);
  await errorOf(t, await f.api('/api/wants', { method: 'POST', headers: JSON_HEADERS, body: under }), 400);
});

test('garbage bodies, paths and query strings never get a 500, and the daemon still answers afterwards', async (t) => {
  const f = await startServer(t);
  const garbageBodies: Array<string | Buffer> = [
    '',
    '{',
    '}}}',
    'undefined',
    'NaN',
    '{"partitions": ["ok/a"],}',
    '{"__proto__": {"partitions": ["ok/a"]}}',
    '{"partitions": {"__proto__": ["ok/a"]}}',
    '{"constructor": {"prototype": {"polluted": true}}}',
    '{"partitions": [["ok/a"]]}',
    '{"partitions": ["ok/a"], "ttl_seconds": 1e400}',
    '{"partitions": ["ok/a"], "ttl_seconds": 9007199254740993}',
    '{"partitions": ["ok/a"], "data_timestamp": -5}',
    '{"partitions": ["\\ud800"]}',
    `{"partitions": [${'"ok/x",'.repeat(20_000)}"ok/y"]}`,
    '['.repeat(200_000),
    `${'['.repeat(5_000)}${']'.repeat(5_000)}`,
    Buffer.from([0xff, 0xfe, 0x00, 0x7b, 0x22, 0xc3, 0x28]),
    Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0x01, 0x02]),
    ...fc.sample(fc.string({ unit: 'binary', maxLength: 64 }), { seed: 42, numRuns: 40 }),
    ...fc.sample(fc.json(), { seed: 7, numRuns: 40 }),
  ];
  const contentTypes = [
    'application/json',
    'application/json; charset=latin1',
    'application/json; charset=utf-16',
    'text/plain',
    'application/octet-stream',
  ];
  const statuses = new Map<number, number>();
  const record = (s: number) => statuses.set(s, (statuses.get(s) ?? 0) + 1);
  let i = 0;
  for (const body of garbageBodies) {
    const contentType = contentTypes[i++ % contentTypes.length]!;
    const headers: Record<string, string> = { 'content-type': contentType };
    if (i % 7 === 0) headers['content-encoding'] = 'gzip';
    if (i % 11 === 0) headers['content-encoding'] = 'br-bogus';
    const res = await rawRequest(`${f.url}/api/wants`, { method: 'POST', headers, body });
    record(res.status);
    t.true(res.status < 500, `POST ${contentType} ${JSON.stringify(String(body).slice(0, 60))} -> ${res.status} ${res.body}`);
    if (res.status >= 400) t.notThrows(() => JSON.parse(res.body).error as string, res.body);
  }

  const paths = [
    '/api/wants?limit=abc',
    '/api/wants?limit=-1',
    '/api/wants?limit=1e3',
    '/api/wants?limit=0',
    '/api/wants?limit=1.5',
    '/api/wants?limit=1&limit=2',
    '/api/wants?limit[]=5',
    '/api/wants?offset=99999999999999999999999',
    '/api/wants?offset=%',
    '/api/wants?status=bogus',
    '/api/wants?status=',
    '/api/wants?order=sideways',
    '/api/wants?status=building&status=idle',
    '/api/wants/%ZZ',
    '/api/wants/%00',
    `/api/wants/${'x'.repeat(5000)}`,
    '/api/partitions?prefix=%ZZ',
    '/api/partitions?prefix=a&prefix=b',
    `/api/partitions?prefix=${'p'.repeat(2000)}`,
    '/api/partitions?prefix=%F0%9F%98%80',
    '/api/partitions?prefix=%ED%A0%80',
    '/api/partitions?status=live&limit=99999',
    '/api/job_runs?status=nope',
    '/api/job_runs?want_id=%ZZ',
    `/api/job_runs?want_id=${'w'.repeat(5000)}`,
    '/api/job_runs?want_id=a&want_id=b',
    '/api/job_runs/%ZZ',
    '/api/job_runs/x/logs/stdout?follow=maybe',
    '/api/job_runs/x/logs/../../etc/passwd',
    '/api/job_runs/..%2F..%2Fetc/logs/stdout',
    '/api/events?offset=-1',
    '/api/events?limit=10001',
    '/api/events?offset=9007199254740993',
    '/api/events/abc',
    '/api/events/0',
    '/api/events/-1',
    '/api/events/1e3',
    '/api/events/99999999999999999999',
    '/api/events/stream?after=abc',
    '/metrics?x=%',
    '/nope',
    '/api',
    '/api/wants/',
    '//api//wants',
    '/api/wants/w-1/../../health',
  ];
  for (const path of paths) {
    for (const method of ['GET', 'DELETE', 'POST', 'PUT', 'PATCH']) {
      const res = await rawRequest(`${f.url}${path}`, {
        method,
        headers: method === 'POST' ? JSON_HEADERS : {},
        ...(method === 'POST' ? { body: '{"partitions": ["ok/a"' } : {}),
      });
      record(res.status);
      t.true(res.status < 500, `${method} ${path} -> ${res.status} ${res.body.slice(0, 200)}`);
    }
  }
  t.deepEqual(f.errorLines, [], 'nothing was logged as an internal error');
  t.true(statuses.has(400) && statuses.has(404), `saw ${JSON.stringify([...statuses])}`);

  // Two that used to be 500s: a path parameter that is not valid percent-encoding, a corrupt gzip body.
  const badParam = await rawRequest(`${f.url}/api/wants/%ZZ`);
  t.is(badParam.status, 400, badParam.body);
  const badGzip = await rawRequest(`${f.url}/api/wants`, {
    method: 'POST',
    headers: { ...JSON_HEADERS, 'content-encoding': 'gzip' },
    body: Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0x01, 0x02]),
  });
  t.is(badGzip.status, 400, badGzip.body);
  t.is(typeof JSON.parse(badGzip.body).error, 'string');

  // Still alive and still correct.
  const health = await f.api('/health');
  t.is(await health.text(), 'OK');
  const id = await createWant(f, ['ok/after-garbage']);
  t.is((await f.getJson(`/api/wants/${id}`)).want_id, id);
});

test('a method the API does not serve on a path it has is a 405 with Allow; a path it does not have stays a 404', async (t) => {
  const f = await startServer(t);
  const cases: Array<[string, string, string]> = [
    ['PUT', '/api/wants/w-1', 'GET, HEAD, DELETE'],
    ['PATCH', '/api/wants', 'GET, HEAD, POST'],
    ['DELETE', '/api/partitions/lookup', 'GET, HEAD, POST'],
    ['POST', '/api/status', 'GET, HEAD'],
    ['PUT', '/api/job_runs/r-1/logs/stdout/', 'GET, HEAD'],
  ];
  for (const [method, path, allow] of cases) {
    const res = await f.api(path, { method, headers: JSON_HEADERS, body: method === 'DELETE' ? undefined : '{}' });
    const body = await errorOf(t, res, 405);
    t.is(res.headers.get('allow'), allow, `${method} ${path}`);
    t.regex(body.error, new RegExp(`^${method} is not served on ${path.replace(/[/]/g, '\\/')}: it takes ${allow}`));
  }
  const missing = await f.api('/api/nothing-here', { method: 'PUT', headers: JSON_HEADERS, body: '{}' });
  t.regex((await errorOf(t, missing, 404)).error, /^No route PUT \/api\/nothing-here/);
  // OPTIONS too: an /api path the API does not have is a 404, not "Allow: GET, HEAD" (the dashboard's catch-all GET),
  // a browser's preflight from the dashboard's origin included; a path it has still lists what it takes.
  for (const [path, headers] of [
    ['/api/nonexistent', {}],
    ['/API/Nonexistent/', {}],
    ['/api', {}],
    ['/api/partitions/raw/1', {}],
    ['/api/nonexistent', { origin: 'http://localhost:3000', 'access-control-request-method': 'POST' }],
  ] as const) {
    const res = await f.api(path, { method: 'OPTIONS', headers });
    t.is(res.headers.get('allow'), null, `OPTIONS ${path} ${JSON.stringify(headers)}`);
    t.regex((await errorOf(t, res, 404)).error, /^No route OPTIONS \/api/i, `OPTIONS ${path} ${JSON.stringify(headers)}`);
  }
  const options = await f.api('/api/wants', { method: 'OPTIONS' });
  t.is(options.status, 200);
  t.is(options.headers.get('allow'), 'GET, HEAD, POST');
  await options.body?.cancel();
  // Nothing was done by any of them.
  t.is(await wantsTotal(f), 0);
});

test("a 405's Allow names only methods served there: the RPC paths match by exact case (not express's case-insensitive routes), so another case is a 404 for every method", async (t) => {
  const f = await startServer(t);
  const exact = '/platform.v1.PlatformService/AnalyzeGraph';
  for (const path of [exact.toLowerCase(), exact.toUpperCase(), '/platform.v1.platformservice/GetJobConfigs']) {
    // POST there is not the RPC: nothing answers it but the fallback's 404.
    const post = await f.api(path, { method: 'POST', headers: JSON_HEADERS, body: '{"outputRefs": ["daily/revenue/date=2026-01-05"]}' });
    t.is(post.status, 404, `POST ${path}`);
    await post.body?.cancel();
    // So a GET there (not a browser's: the dashboard's page answers those) must not be told to POST (405 with Allow:
    // POST, which the POST above refutes).
    const get = await f.api(path, { headers: { accept: 'application/json' } });
    t.is(get.status, 404, `GET ${path}: ${get.headers.get('allow') ?? ''}`);
    t.is(get.headers.get('allow'), null);
    await get.body?.cancel();
  }
  // The JSON API's routes are case-insensitive in express, and so is its 405.
  const put = await f.api('/API/Wants', { method: 'PUT', headers: JSON_HEADERS, body: '{}' });
  t.is(put.status, 405);
  t.is(put.headers.get('allow'), 'GET, HEAD, POST');
  await put.body?.cancel();
});

test("a custom executor whose health() says nothing of a launcher (written before it had one) gives /api/status launcher null, as its schema requires", async (t) => {
  // An embedder's executor, as the Executor port documented health() before session 29: no launcher field.
  class FarmExecutor extends InProcessExecutor {
    health(): Omit<ExecutorHealth, 'launcher'> {
      return { kind: 'custom', where: 'the test farm', reachable: true, workers: 3, problem: null };
    }
  }
  const f = await startServer(t, { platform: { executor: (root) => new FarmExecutor(root) } });
  // The fixture checks the answer against the OpenAPI schema: `launcher` is required (null or a kind).
  const res = await f.api('/api/status');
  t.is(res.status, 200);
  const body = (await res.json()) as { executor: ExecutorHealth };
  t.is(body.executor.launcher, null);
  t.is(body.executor.workers, 3);
});

test('GET /api/wants/:id of an unknown want is a 404 naming the want_id', async (t) => {
  const f = await startServer(t);
  const err = await errorOf(t, await f.api('/api/wants/w-404'), 404);
  t.is(err.want_id, 'w-404');
  t.regex(err.error, /w-404/);
});

test('DELETE /api/wants/:id cancels (200), again is a no-op 200, a successful want is a 409, unknown is a 404', async (t) => {
  const f = await startServer(t);
  const slow = await createWant(f, ['slow/cancel-me']);
  const building = await waitForWant(f, slow, ['building']);
  t.is(building.job_run_ids.length, 1);
  const runId: string = building.job_run_ids[0];
  await waitFor('the slow job to run', async () => (await f.getJson(`/api/job_runs/${runId}`)).status === 'running');

  const first = await f.api(`/api/wants/${slow}`, { method: 'DELETE' });
  t.is(first.status, 200);
  const canceled = (await first.json()) as any;
  t.is(canceled.want_id, slow);
  t.is(canceled.status, 'canceled');
  t.is(typeof canceled.cancel_reason, 'string');
  t.is((await f.getJson(`/api/wants/${slow}`)).status, 'canceled', 'GET right after sees the cancel');

  const again = await f.api(`/api/wants/${slow}`, { method: 'DELETE' });
  t.is(again.status, 200);
  t.is(((await again.json()) as any).status, 'canceled');

  // Its job run (serving no other want) is killed and recorded canceled.
  const run = await waitFor('the job run to be canceled', async () => {
    const r = await f.getJson(`/api/job_runs/${runId}`);
    return r.status === 'canceled' ? r : undefined;
  });
  t.truthy(run.ended_at);
  const pid: number = run.pid;
  t.true(pid > 0);
  // Its process is gone (zombies count as gone: this machine's pid 1 does not reap orphans).
  await waitFor('the job process to be gone', () => !isPidAlive(pid));

  const done = await createWant(f, ['ok/done']);
  await waitForWant(f, done, ['successful']);
  const conflict = await errorOf(t, await f.api(`/api/wants/${done}`, { method: 'DELETE' }), 409);
  t.is(conflict.want_id, done);
  t.regex(conflict.error, /successful/);
  t.is((await f.getJson(`/api/wants/${done}`)).status, 'successful', 'a refused cancel changes nothing');

  const unknown = await errorOf(t, await f.api('/api/wants/w-999', { method: 'DELETE' }), 404);
  t.is(unknown.want_id, 'w-999');
});

test("a list of wants cuts each want's lists to 20 (their totals count all); its detail lists them all", async (t) => {
  const f = await startServer(t);
  const refs = Array.from({ length: 50 }, (_, i) => `slow/p${i}`);
  const id = await createWant(f, refs);
  const item = (await f.getJson('/api/wants')).data.find((w: { want_id: string }) => w.want_id === id);
  t.deepEqual(item.partitions, refs.slice(0, 20));
  t.is(item.partitions_total, 50);
  t.deepEqual(Object.keys(item.partition_status), refs.slice(0, 20), 'the status of each partition listed');
  const detail = await f.getJson(`/api/wants/${id}`);
  t.deepEqual(detail.partitions, refs);
  t.is(Object.keys(detail.partition_status).length, 50);
});

test('GET /api/wants paginates: limit default 100 and max 1000, offset, status filter, order=desc, total', async (t) => {
  const f = await startServer(t);
  const N = 130;
  // All for one partition: the wants join one slow job run, so 130 wants cost one process.
  const ids: string[] = [];
  for (let start = 0; start < N; start += 40) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(40, N - start) }, (_, k) => createWant(f, ['slow/shared'], { comment: `c${start + k}` })),
    );
    ids.push(...batch);
  }
  // Ids are in creation order; fetch the list in that order to know it.
  const all = await f.getJson('/api/wants?limit=1000');
  t.is(all.total, N);
  t.is(all.limit, 1000);
  t.is(all.offset, 0);
  t.is(all.data.length, N);
  const order: string[] = all.data.map((w: any) => w.want_id);
  t.deepEqual([...order].sort(), [...ids].sort(), 'every created want is listed once');
  t.is(new Set(order).size, N);
  const created = all.data.map((w: any) => Date.parse(w.created_at));
  for (let k = 1; k < created.length; k++) t.true(created[k] >= created[k - 1], 'oldest first');

  const first = await f.getJson('/api/wants');
  t.is(first.limit, 100, 'default limit');
  t.is(first.offset, 0);
  t.is(first.total, N);
  t.deepEqual(
    first.data.map((w: any) => w.want_id),
    order.slice(0, 100),
  );
  const second = await f.getJson('/api/wants?offset=100');
  t.deepEqual(
    second.data.map((w: any) => w.want_id),
    order.slice(100),
  );
  t.is(second.total, N);
  const window = await f.getJson('/api/wants?offset=7&limit=5');
  t.deepEqual(
    window.data.map((w: any) => w.want_id),
    order.slice(7, 12),
  );
  const past = await f.getJson('/api/wants?offset=500');
  t.deepEqual(past.data, []);
  t.is(past.total, N);

  const desc = await f.getJson('/api/wants?order=desc&limit=3');
  t.deepEqual(
    desc.data.map((w: any) => w.want_id),
    order.slice(-3).reverse(),
  );
  const descOffset = await f.getJson('/api/wants?order=desc&offset=2&limit=2');
  t.deepEqual(
    descOffset.data.map((w: any) => w.want_id),
    [order[N - 3], order[N - 4]],
  );

  await errorOf(t, await f.api('/api/wants?limit=1001'), 400);
  await errorOf(t, await f.api('/api/wants?limit=0'), 400);
  await errorOf(t, await f.api('/api/wants?offset=-3'), 400);
  await errorOf(t, await f.api('/api/wants?status=almost'), 400);
  t.is((await f.getJson('/api/wants?limit=1000')).data.length, N);

  // Status filter: cancel two, the rest keep building on the shared run.
  await waitForWant(f, order[0]!, ['building']);
  for (const id of [order[3]!, order[50]!]) t.is((await f.api(`/api/wants/${id}`, { method: 'DELETE' })).status, 200);
  const canceled = await f.getJson('/api/wants?status=canceled');
  t.is(canceled.total, 2);
  t.deepEqual(
    canceled.data.map((w: any) => w.want_id),
    [order[3], order[50]],
  );
  const buildingPage = await f.getJson('/api/wants?status=building&limit=10&offset=0');
  t.is(buildingPage.total, N - 2);
  t.is(buildingPage.data.length, 10);
  t.true(buildingPage.data.every((w: any) => w.status === 'building'));
  t.false(buildingPage.data.some((w: any) => w.want_id === order[3]));
  const descBuilding = await f.getJson('/api/wants?status=building&order=desc&limit=1');
  t.is(descBuilding.data[0].want_id, order[N - 1]);
  t.is((await f.getJson('/api/wants?status=successful')).total, 0);
});

test('partitions and job runs: lists with prefix, status and paging; job run detail, logs and 404s', async (t) => {
  const f = await startServer(t);
  const a = await createWant(f, ['ok/alpha', 'ok/alphabet', 'ok/beta']);
  const b = await createWant(f, ['fail/gamma']);
  const c = await createWant(f, ['needs/delta']);
  t.is((await waitForWant(f, a)).status, 'successful');
  t.is((await waitForWant(f, b)).status, 'failed');
  const cDone = await waitForWant(f, c);
  t.is(cDone.status, 'upstream_failed');
  t.true(cDone.child_want_ids.length >= 1, 'the missing input was wanted through a derived want');

  const parts = await f.getJson('/api/partitions');
  const refs = parts.data.map((p: any) => p.partition_ref);
  t.deepEqual(refs, ['fail/delta', 'fail/gamma', 'ok/alpha', 'ok/alphabet', 'ok/beta'], 'sorted by ref; needs/delta never built');
  t.is(parts.total, 5);
  t.is(parts.limit, 100);
  for (const p of parts.data) {
    t.is(typeof p.job_run_id, 'string');
    t.regex(p.updated_at, /Z$/);
  }
  const byRef = Object.fromEntries(parts.data.map((p: any) => [p.partition_ref, p.status]));
  t.deepEqual(byRef, { 'fail/delta': 'failed', 'fail/gamma': 'failed', 'ok/alpha': 'live', 'ok/alphabet': 'live', 'ok/beta': 'live' });

  const al = await f.getJson('/api/partitions?prefix=ok/al');
  t.deepEqual(
    al.data.map((p: any) => p.partition_ref),
    ['ok/alpha', 'ok/alphabet'],
  );
  t.is(al.total, 2);
  const okDesc = await f.getJson('/api/partitions?prefix=ok/&order=desc&limit=2');
  t.deepEqual(
    okDesc.data.map((p: any) => p.partition_ref),
    ['ok/beta', 'ok/alphabet'],
  );
  t.is(okDesc.total, 3);
  const okOffset = await f.getJson('/api/partitions?prefix=ok/&offset=1&limit=1');
  t.deepEqual(
    okOffset.data.map((p: any) => p.partition_ref),
    ['ok/alphabet'],
  );
  t.is((await f.getJson('/api/partitions?prefix=zzz')).total, 0);
  const failed = await f.getJson('/api/partitions?status=failed');
  t.deepEqual(
    failed.data.map((p: any) => p.partition_ref),
    ['fail/delta', 'fail/gamma'],
  );
  const failedPrefix = await f.getJson('/api/partitions?status=failed&prefix=fail/g');
  t.deepEqual(
    failedPrefix.data.map((p: any) => p.partition_ref),
    ['fail/gamma'],
  );
  t.is(failedPrefix.total, 1);
  await errorOf(t, await f.api('/api/partitions?status=melted'), 400);
  await errorOf(t, await f.api('/api/partitions?limit=1001'), 400);

  const runs = await f.getJson('/api/job_runs');
  t.is(runs.total, 5, 'a declarative job gets one run per ref: three ok runs, two fail runs');
  t.is(runs.data.length, 5);
  const okRuns = runs.data.filter((r: any) => r.job_label === 'ok');
  t.deepEqual(okRuns.map((r: any) => r.outputs).flat().sort(), ['ok/alpha', 'ok/alphabet', 'ok/beta']);
  for (const r of okRuns) {
    t.is(r.status, 'succeeded');
    t.is(r.exit_code, 0);
    t.true(r.want_ids.includes(a));
  }
  const okRun = okRuns.find((r: any) => r.outputs[0] === 'ok/alphabet');
  const partitionRun = parts.data.find((p: any) => p.partition_ref === 'ok/alphabet').job_run_id;
  t.is(okRun.job_run_id, partitionRun, 'the partition names the run that built it');
  t.is((await f.getJson('/api/job_runs?status=succeeded')).total, 3);
  const failRuns = await f.getJson('/api/job_runs?status=failed');
  t.is(failRuns.total, 2);
  t.true(failRuns.data.every((r: any) => r.job_label === 'fail' && r.exit_code === 3));
  t.deepEqual(
    (await f.getJson('/api/job_runs?order=desc&limit=1')).data.map((r: any) => r.job_run_id),
    [runs.data[4].job_run_id],
  );
  t.is((await f.getJson('/api/job_runs?offset=1&limit=1')).data[0].job_run_id, runs.data[1].job_run_id);
  await errorOf(t, await f.api('/api/job_runs?status=finished'), 400);
  // One want's runs, in the order it got them: a page of them, newest first, with a status.
  const wantA = await f.getJson(`/api/wants/${a}`);
  const ofA = await f.getJson(`/api/job_runs?want_id=${a}`);
  t.deepEqual(ofA.data.map((r: any) => r.job_run_id), wantA.job_run_ids);
  t.is(ofA.total, 3);
  t.true(ofA.data.every((r: any) => r.want_ids.includes(a)));
  t.deepEqual((await f.getJson(`/api/job_runs?want_id=${a}&order=desc&limit=2`)).data.map((r: any) => r.job_run_id), wantA.job_run_ids.slice(1).reverse());
  t.deepEqual((await f.getJson(`/api/job_runs?want_id=${a}&offset=2`)).data.map((r: any) => r.job_run_id), wantA.job_run_ids.slice(2));
  // The embedding API answers the same page from the state.
  const embedded = listJobRuns(f.platform.state(), { offset: 0, limit: 100, reverse: false, want: f.platform.state().wants.get(a)! });
  t.deepEqual(JSON.parse(JSON.stringify(embedded)), ofA);
  const okOfA = await f.getJson(`/api/job_runs?want_id=${a}&status=succeeded`);
  t.is(okOfA.total, 3);
  t.is((await f.getJson(`/api/job_runs?want_id=${a}&status=failed`)).total, 0);
  const noWant = await errorOf(t, await f.api('/api/job_runs?want_id=w-999'), 404);
  t.is(noWant.want_id, 'w-999');
  t.regex(noWant.error, /No want with id 'w-999'/);
  // An empty parameter is no parameter, as for every list's filters.
  t.is((await f.getJson('/api/job_runs?want_id=')).total, 5);

  const detail = await f.getJson(`/api/job_runs/${okRun.job_run_id}`);
  t.is(detail.job_run_id, okRun.job_run_id);
  t.is(detail.status, 'succeeded');
  t.truthy(detail.started_at);
  t.truthy(detail.ended_at);
  t.true(detail.duration_ms >= 0);
  await errorOf(t, await f.api('/api/job_runs/r-nope'), 404);

  // The stdout log of a real run holds what the process printed.
  const stdout = await f.api(`/api/job_runs/${okRun.job_run_id}/logs/stdout`);
  t.is(stdout.status, 200);
  t.regex(stdout.headers.get('content-type') ?? '', /^text\/plain/);
  const text = await stdout.text();
  t.is(text, 'hello from alphabet\n');
  const failRun = failRuns.data[0];
  const stderr = await f.api(`/api/job_runs/${failRun.job_run_id}/logs/stderr`);
  t.regex(await stderr.text(), /failing on purpose/);
  await errorOf(t, await f.api('/api/job_runs/r-nope/logs/stdout'), 404);
  await errorOf(t, await f.api(`/api/job_runs/${okRun.job_run_id}/logs/stdin`), 404);
  t.true(existsSync(join(f.dir, 'out', 'alphabet')));
});

test('GET /api/job_runs/:id/logs/:stream streams a large log whole; ?tail=N gives its last N lines; no log is an empty 200', async (t) => {
  const f = await startServer(t);
  const id = await createWant(f, ['ok/biglog']);
  t.is((await waitForWant(f, id)).status, 'successful');
  const run = (await f.getJson(`/api/wants/${id}`)).job_run_ids[0] as string;
  const dir = join(f.dir, '.platform', 'logs', run);
  // Several MiB over many read chunks, so the tail is found across chunk boundaries.
  const lines = Array.from({ length: 120_000 }, (_, i) => `line ${i + 1} ${'x'.repeat(i % 97)}`);
  const text = `${lines.join('\n')}\n`;
  writeFileSync(join(dir, 'stdout.log'), text);
  const whole = await f.api(`/api/job_runs/${run}/logs/stdout`);
  t.is(whole.status, 200);
  t.regex(whole.headers.get('content-type') ?? '', /^text\/plain/);
  t.is(await whole.text(), text);

  const tail = async (n: number | string) => (await f.api(`/api/job_runs/${run}/logs/stdout?tail=${n}`)).text();
  t.is(await tail(1), `${lines.at(-1)}\n`);
  t.is(await tail(3), `${lines.slice(-3).join('\n')}\n`);
  t.is(await tail(10_000), `${lines.slice(-10_000).join('\n')}\n`);
  await errorOf(t, await f.api(`/api/job_runs/${run}/logs/stdout?tail=0`), 400);
  await errorOf(t, await f.api(`/api/job_runs/${run}/logs/stdout?tail=10001`), 400);
  await errorOf(t, await f.api(`/api/job_runs/${run}/logs/stdout?tail=last`), 400);

  // A last line without a newline is a line; a log shorter than N lines is all there is; blank lines count.
  writeFileSync(join(dir, 'stdout.log'), 'a\n\nb\nc');
  t.is(await tail(2), 'b\nc');
  t.is(await tail(3), '\nb\nc');
  t.is(await tail(50), 'a\n\nb\nc');
  writeFileSync(join(dir, 'stdout.log'), '');
  t.is(await tail(5), '');

  rmSync(join(dir, 'stderr.log'), { force: true });
  const none = await f.api(`/api/job_runs/${run}/logs/stderr?tail=5`);
  t.is(none.status, 200);
  t.is(await none.text(), '');
  t.is(await (await f.api(`/api/job_runs/${run}/logs/stderr`)).text(), '');
});

test('GET /api/events lists with offset and limit (max 10000), latest_id; GET /api/events/:id; 404 and 400', async (t) => {
  const f = await startServer(t);
  const empty = await f.getJson('/api/events');
  t.deepEqual(empty.data, []);
  t.is(empty.latest_id, 0);
  t.is(empty.offset, 0);
  t.is(empty.limit, 10000);

  const w1 = await createWant(f, ['ok/e1']);
  await waitForWant(f, w1);
  const w2 = await createWant(f, ['fail/e2']);
  await waitForWant(f, w2);
  const all = await f.getJson('/api/events');
  t.is(all.latest_id, f.platform.log.latestId());
  t.true(all.latest_id >= 8, `want, queued, started, succeeded twice over; got ${all.latest_id}`);
  t.deepEqual(
    all.data.map((e: any) => e.event_id),
    Array.from({ length: all.latest_id }, (_, k) => k + 1),
    'dense ids from 1',
  );
  t.is(all.data[0].type, 'want_created');
  t.is(all.data[0].want_created.want_id, w1);
  t.regex(all.data[0].timestamp, /^\d{4}-\d\d-\d\dT.*Z$/);
  const types = all.data.map((e: any) => e.type);
  for (const ty of ['want_created', 'job_run_queued', 'job_run_started', 'job_run_succeeded', 'job_run_failed']) t.true(types.includes(ty), ty);

  const window = await f.getJson('/api/events?offset=2&limit=3');
  t.deepEqual(
    window.data.map((e: any) => e.event_id),
    [3, 4, 5],
  );
  t.is(window.latest_id, all.latest_id);
  t.deepEqual((await f.getJson(`/api/events?offset=${all.latest_id}`)).data, []);
  const ordered = await fetch(`${f.url}/api/events?order=desc`);
  t.is(ordered.status, 400, 'a cursor over ids does not pretend to take an order');
  t.regex(((await ordered.json()) as { error: string }).error, /offset=latest_id-N/);
  t.is((await f.getJson('/api/events?limit=10000')).data.length, all.latest_id);
  await errorOf(t, await f.api('/api/events?limit=10001'), 400);
  await errorOf(t, await f.api('/api/events?limit=0'), 400);
  await errorOf(t, await f.api('/api/events?offset=x'), 400);

  const one = await f.getJson('/api/events/1');
  t.deepEqual(one, all.data[0]);
  const last = await f.getJson(`/api/events/${all.latest_id}`);
  t.deepEqual(last, all.data[all.latest_id - 1]);
  await errorOf(t, await f.api(`/api/events/${all.latest_id + 1}`), 404);
  await errorOf(t, await f.api('/api/events/abc'), 400);
  await errorOf(t, await f.api('/api/events/0'), 400);
  await errorOf(t, await f.api('/api/events/1.5'), 400);
});

test('GET /api/events returns at most 10000 events per read, the rest from the next offset', async (t) => {
  const f = await startServer(t);
  // 10 050 events: written straight to the real log (the orchestrator would take minutes to make this many).
  // Taints of refs that do not exist change no state.
  const payloads = Array.from({ length: 10_050 }, (_, k) => ({
    type: 'partition_tainted' as const,
    partition_tainted: { partition_ref: `none/${k}`, reason: 'volume' },
  }));
  await f.platform.log.append(payloads, Date.now());
  const first = await f.getJson('/api/events');
  t.is(first.data.length, 10_000);
  t.is(first.data[0].event_id, 1);
  t.is(first.data[9_999].event_id, 10_000);
  t.is(first.latest_id, 10_050);
  const rest = await f.getJson('/api/events?offset=10000');
  t.deepEqual(
    rest.data.map((e: any) => e.event_id),
    Array.from({ length: 50 }, (_, k) => 10_001 + k),
  );
  t.is(rest.data[49].partition_tainted.partition_ref, 'none/10049');
});

test('a page of events ends early past EVENT_PAGE_BYTES, with one event at least; reading on from its last id gets the rest', async (t) => {
  const f = await startServer(t);
  // Large events written straight to the log: 20 of 500 KB are 10 MB, more than two pages' worth.
  const big = 'x'.repeat(500_000);
  await f.platform.log.append(Array.from({ length: 20 }, (_, k) => ({ type: 'partition_tainted' as const, partition_tainted: { partition_ref: `none/${k}`, reason: big } })), Date.now());
  const seen: number[] = [];
  let offset = 0;
  for (let pages = 0; pages < 20 && offset < f.platform.log.latestId(); pages++) {
    const res = await f.api(`/api/events?offset=${offset}`);
    const text = await res.text();
    t.true(text.length <= EVENT_PAGE_BYTES + 600_000, `a page of ${text.length} bytes`);
    const page = JSON.parse(text) as { data: Array<{ event_id: number }>; latest_id: number };
    t.true(page.data.length >= 1);
    seen.push(...page.data.map((e) => e.event_id));
    offset = page.data.at(-1)!.event_id;
  }
  t.deepEqual(seen, Array.from({ length: 20 }, (_, k) => k + 1), 'every event once, in order');
  t.true(seen.length > 0 && (await f.getJson('/api/events')).data.length < 20, 'the first page ended early');
});

test('SSE /api/events/stream delivers new events live and resumes from Last-Event-ID without gaps or duplicates', async (t) => {
  const f = await startServer(t);
  const w0 = await createWant(f, ['ok/before']);
  await waitForWant(f, w0);
  const before = f.platform.log.latestId();

  // A new stream starts now: old events are not replayed.
  const live = await SseReader.open(`${f.url}/api/events/stream`);
  t.teardown(() => live.close());
  t.is(live.response.status, 200);
  t.regex(live.response.headers.get('content-type') ?? '', /^text\/event-stream/);
  const w1 = await createWant(f, ['ok/live']);
  const frame = await live.next();
  t.is(frame.event, 'want_created');
  t.is(Number(frame.id), before + 1);
  const data = JSON.parse(frame.data);
  t.is(data.event_id, before + 1);
  t.is(data.want_created.want_id, w1);
  await waitForWant(f, w1);
  // Everything up to now arrives, in order, each once.
  const seen = [Number(frame.id)];
  while (seen[seen.length - 1]! < f.platform.log.latestId()) seen.push(Number((await live.next()).id));
  t.deepEqual(
    seen,
    Array.from({ length: seen.length }, (_, k) => before + 1 + k),
  );
  const lastSeen = seen[seen.length - 1]!;
  live.close();
  await live.ended;

  // Events happen while disconnected...
  const w2 = await createWant(f, ['fail/away']);
  await waitForWant(f, w2);
  const w3 = await createWant(f, ['ok/away']);
  await waitForWant(f, w3);
  const latestWhileAway = f.platform.log.latestId();
  t.true(latestWhileAway > lastSeen + 4);

  // ...and a resumed stream gets exactly the missed ones, then new ones live.
  const resumed = await SseReader.open(`${f.url}/api/events/stream`, { 'Last-Event-ID': String(lastSeen) });
  t.teardown(() => resumed.close());
  const got: number[] = [];
  while (got.length === 0 || got[got.length - 1]! < latestWhileAway) {
    const fr = await resumed.next();
    got.push(Number(fr.id));
    t.is(JSON.parse(fr.data).event_id, Number(fr.id));
  }
  const w4 = await createWant(f, ['ok/after']);
  await waitForWant(f, w4);
  const latest = f.platform.log.latestId();
  while (got[got.length - 1]! < latest) got.push(Number((await resumed.next()).id));
  t.deepEqual(
    got,
    Array.from({ length: latest - lastSeen }, (_, k) => lastSeen + 1 + k),
    'no gap, no duplicate across the disconnect and the switch to live',
  );

  // Each resumed event is the one the log holds.
  const stored = await f.getJson(`/api/events/${lastSeen + 1}`);
  t.is(stored.event_id, lastSeen + 1);

  // From the very start with Last-Event-ID: 0.
  const fromZero = await SseReader.open(`${f.url}/api/events/stream`, { 'Last-Event-ID': '0' });
  t.teardown(() => fromZero.close());
  t.is(Number((await fromZero.next()).id), 1);
  t.is(Number((await fromZero.next()).id), 2);

  const bad = await f.api('/api/events/stream', { headers: { 'Last-Event-ID': 'abc' } });
  await errorOf(t, bad, 400);
});

test('/metrics is Prometheus text with platform_wants_total and platform_job_runs_total matching the state', async (t) => {
  const f = await startServer(t);
  const parse = async () => {
    const res = await f.api('/metrics');
    t.is(res.status, 200);
    t.regex(res.headers.get('content-type') ?? '', /^text\/plain/);
    const text = await res.text();
    const values = new Map<string, number>();
    for (const line of text.split('\n')) {
      const m = /^([a-z_]+(?:\{[^}]*\})?) (-?[\d.e+]+)$/.exec(line);
      if (m) values.set(m[1]!, Number(m[2]));
    }
    return { text, values };
  };
  const before = await parse();
  t.is(before.values.get('platform_wants_total'), 0);
  t.is(before.values.get('platform_job_runs_total'), 0);

  const ids = [await createWant(f, ['ok/m1']), await createWant(f, ['ok/m1']), await createWant(f, ['fail/m2', 'ok/m3'])];
  for (const id of ids) await waitForWant(f, id);
  // The wants ended, but a step may still record their runs' last news: read once the log has stopped moving, so
  // that the metrics and the reads after them see the same state (an event between them was a false failure).
  let after = await parse();
  for (let i = 0; i < 50 && after.values.get('platform_events_total') !== f.platform.log.latestId(); i++) {
    await new Promise((r) => setTimeout(r, 20));
    after = await parse();
  }
  for (const name of ['platform_wants_total', 'platform_job_runs_total']) {
    const lines = after.text.split('\n');
    const help = lines.findIndex((l) => l.startsWith(`# HELP ${name} `));
    const type = lines.findIndex((l) => new RegExp(`^# TYPE ${name} (counter|gauge)$`).test(l));
    const sample = lines.findIndex((l) => l.startsWith(`${name} `));
    t.true(help >= 0 && type > help && sample > type, `${name}: HELP, TYPE, then the sample`);
  }
  const wants = await f.getJson('/api/wants');
  const runs = await f.getJson('/api/job_runs');
  t.is(after.values.get('platform_wants_total'), wants.total);
  t.is(after.values.get('platform_job_runs_total'), runs.total);
  t.is(wants.total, 3);
  t.true(runs.total >= 2);
  t.is(after.values.get('platform_wants{status="successful"}'), (await f.getJson('/api/wants?status=successful')).total);
  t.is(after.values.get('platform_wants{status="failed"}'), (await f.getJson('/api/wants?status=failed')).total);
  t.is(after.values.get('platform_events_total'), f.platform.log.latestId());
});

test('CORS: http://localhost:3000 gets Access-Control-Allow-Origin for GET, POST, DELETE and preflight; other origins none', async (t) => {
  const f = await startServer(t);
  const good = 'http://localhost:3000';
  const evil = 'http://evil.example';

  const get = await rawRequest(`${f.url}/api/wants`, { headers: { origin: good } });
  t.is(get.status, 200);
  t.is(get.headers['access-control-allow-origin'], good);
  const post = await rawRequest(`${f.url}/api/wants`, {
    method: 'POST',
    headers: { origin: good, ...JSON_HEADERS },
    body: JSON.stringify({ partitions: ['ok/cors'] }),
  });
  t.is(post.status, 201);
  t.is(post.headers['access-control-allow-origin'], good);
  const wantId = JSON.parse(post.body).want_id as string;
  const del = await rawRequest(`${f.url}/api/wants/${wantId}`, { method: 'DELETE', headers: { origin: good } });
  t.true(del.status === 200 || del.status === 409, del.body);
  t.is(del.headers['access-control-allow-origin'], good);
  for (const method of ['GET', 'POST', 'DELETE']) {
    const pre = await rawRequest(`${f.url}/api/wants/x`, {
      method: 'OPTIONS',
      headers: { origin: good, 'access-control-request-method': method, 'access-control-request-headers': 'content-type' },
    });
    t.true(pre.status === 204 || pre.status === 200, `preflight ${method}: ${pre.status}`);
    t.is(pre.headers['access-control-allow-origin'], good);
    const allowed = String(pre.headers['access-control-allow-methods'] ?? '').split(',').map((m) => m.trim());
    t.true(allowed.includes(method), `preflight allows ${method}: ${allowed.join(',')}`);
    t.false(allowed.includes('PUT'));
  }

  const evilGet = await rawRequest(`${f.url}/api/wants`, { headers: { origin: evil } });
  t.is(evilGet.headers['access-control-allow-origin'], undefined);
  const evilPost = await rawRequest(`${f.url}/api/wants`, {
    method: 'POST',
    headers: { origin: evil, ...JSON_HEADERS },
    body: JSON.stringify({ partitions: ['ok/evil'] }),
  });
  t.is(evilPost.headers['access-control-allow-origin'], undefined);
  const evilDelete = await rawRequest(`${f.url}/api/wants/w-1`, { method: 'DELETE', headers: { origin: evil } });
  t.is(evilDelete.headers['access-control-allow-origin'], undefined);
  const evilPre = await rawRequest(`${f.url}/api/wants`, {
    method: 'OPTIONS',
    headers: { origin: evil, 'access-control-request-method': 'DELETE' },
  });
  t.is(evilPre.headers['access-control-allow-origin'], undefined);
  // Look-alikes of the dashboard origin get nothing either.
  for (const origin of ['http://localhost:3001', 'https://localhost:3000', 'http://localhost:3000.evil.example', 'null']) {
    const r = await rawRequest(`${f.url}/health`, { headers: { origin } });
    t.is(r.headers['access-control-allow-origin'], undefined, origin);
  }
});

test('CORS with a token: a preflight from http://localhost:3000 is answered without it (a preflight carries none); the request it clears still needs it', async (t) => {
  const f = await startServer(t, { server: { token: 'secret-token-7' } });
  const good = 'http://localhost:3000';
  for (const [path, method] of [['/api/wants', 'POST'], ['/api/wants/w-1', 'DELETE'], ['/api/status', 'GET'], ['/platform.v1.PlatformService/AnalyzeGraph', 'POST']] as const) {
    const pre = await rawRequest(`${f.url}${path}`, {
      method: 'OPTIONS',
      headers: { origin: good, 'access-control-request-method': method, 'access-control-request-headers': 'content-type, authorization' },
    });
    t.is(pre.status, 204, `preflight ${method} ${path}: ${pre.body}`);
    t.is(pre.headers['access-control-allow-origin'], good, path);
    t.true(String(pre.headers['access-control-allow-methods']).split(',').includes(method), path);
    t.is(pre.body, '', 'a preflight answers nothing of the API');
  }
  // The request itself, from the same origin: the token still decides.
  const bare = await rawRequest(`${f.url}/api/wants`, { headers: { origin: good } });
  t.is(bare.status, 401);
  t.regex((JSON.parse(bare.body) as { error: string }).error, /requires its token/);
  t.is((await rawRequest(`${f.url}/api/wants`, { headers: { origin: good, authorization: 'Bearer secret-token-7' } })).status, 200);
  // An OPTIONS that is no preflight, or a preflight from another origin, is no exception: 401 without the token.
  t.is((await rawRequest(`${f.url}/api/wants`, { method: 'OPTIONS' })).status, 401);
  t.is((await rawRequest(`${f.url}/api/wants`, { method: 'OPTIONS', headers: { origin: good } })).status, 401, 'an Origin alone is no preflight');
  const evil = await rawRequest(`${f.url}/api/wants`, { method: 'OPTIONS', headers: { origin: 'http://evil.example', 'access-control-request-method': 'POST' } });
  t.is(evil.status, 401);
  t.is(evil.headers['access-control-allow-origin'], undefined);
});

test('a request whose Host is not a loopback name is refused with 403 (DNS rebinding)', async (t) => {
  const f = await startServer(t);
  for (const host of ['evil.example', `evil.example:${f.server.port}`, 'localhost.evil.example', '127.0.0.1.nip.io', '10.0.0.1']) {
    const res = await rawRequest(`${f.url}/api/wants`, { headers: { host } });
    t.is(res.status, 403, host);
    t.regex(JSON.parse(res.body).error, /loopback/);
    const post = await rawRequest(`${f.url}/api/wants`, {
      method: 'POST',
      headers: { host, ...JSON_HEADERS },
      body: JSON.stringify({ partitions: ['ok/rebound'] }),
    });
    t.is(post.status, 403, `POST with Host ${host}`);
  }
  t.is((await f.getJson('/api/wants')).total, 0, 'no refused POST created a want');
  for (const host of ['localhost', `localhost:${f.server.port}`, `127.0.0.1:${f.server.port}`, 'LOCALHOST']) {
    const res = await rawRequest(`${f.url}/health`, { headers: { host } });
    t.is(res.status, 200, host);
  }
});

test('GET /api/wants/:id/tree: the want and its derived wants in one read; a bad limit is 400, an unknown want 404 naming it', async (t) => {
  const f = await startServer(t);
  const id = await createWant(f, ['needs/tree1', 'needs/tree2']);
  const done = await waitForWant(f, id);
  t.is(done.status, 'upstream_failed');
  const tree = await f.getJson(`/api/wants/${id}/tree`);
  t.is(tree.want_id, id);
  t.is(tree.limit, 200);
  t.false(tree.truncated);
  t.like(tree.nodes[0], { want_id: id, parent_want_id: null, depth: 0, status: 'upstream_failed', partitions: ['needs/tree1', 'needs/tree2'], partitions_total: 2 });
  t.is(tree.nodes[0].children_total, done.child_want_ids.length);
  t.is(done.child_wants_total, done.child_want_ids.length);
  t.deepEqual(tree.nodes.slice(1).map((n: any) => n.want_id).sort(), [...done.child_want_ids].sort());
  for (const n of tree.nodes.slice(1)) {
    t.like(n, { parent_want_id: id, depth: 1, status: 'failed', source: 'derived' });
    t.true(n.partitions.every((p: string) => p.startsWith('fail/tree')));
  }
  const one = await f.getJson(`/api/wants/${id}/tree?limit=1`);
  t.is(one.nodes.length, 1);
  t.true(one.truncated);

  for (const limit of ['0', '1001', 'many']) {
    const res = await f.api(`/api/wants/${id}/tree?limit=${limit}`);
    t.is(res.status, 400, limit);
    t.regex(((await res.json()) as { error: string }).error, /limit/);
  }
  const missing = await f.api('/api/wants/w-424242/tree');
  t.is(missing.status, 404);
  t.like(await missing.json(), { want_id: 'w-424242' });
});
