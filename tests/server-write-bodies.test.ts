/**
 * Every write of the JSON API takes a JSON body or none (lib/server/json-body.ts): a body of another media type
 * (text, a form, none named; with a length or chunked) is a 415 that says what to send, and nothing is done or
 * recorded; a write with no body, or an empty one whatever its type, goes on as before. The writes are those of
 * the operation table (api-operations.ts), which the contract test holds to the routes express has, so a write
 * added later is in this table too. A real daemon on 127.0.0.1:0; every answer is held to the OpenAPI document.
 */
import test from 'ava';
import { deflateSync, gzipSync } from 'node:zlib';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { OPERATIONS } from '../lib/server/api-operations.js';
import { PLATFORM_SERVICE } from '../lib/proto/schema.js';
import { TEST_GRAPH, createWant, rawRequest, startServer, waitFor, type RawResponse, type ServerFixture } from './helpers/server-fixture.js';

const GRAPH = {
  ...TEST_GRAPH,
  // A schedule to pause and resume whose next tick is months away: it records its start and then nothing.
  schedules: [{ name: 'yearly', cron: '0 0 1 1 *', partitions: ['ok/y${date}'], catchup: 0 }],
};

const WRITES = OPERATIONS.filter((op) => op.method !== 'get' && !op.connect);

interface Ids {
  want: string;
  backfill: string;
}

/** The operation's path with its parameters filled with things that exist, so a write that got through would act. */
function concretePath(path: string, ids: Ids): string {
  return path.replace(/:([A-Za-z_]\w*)/g, (_m, name: string) => {
    if (name === 'name' && path.startsWith('/api/schedules/')) return 'yearly';
    if (name === 'id' && path.startsWith('/api/wants/')) return ids.want;
    if (name === 'id' && path.startsWith('/api/backfills/')) return ids.backfill;
    throw new Error(`no value for :${name} of ${path}: give this new write a thing to act on`);
  });
}

/** The write's body as the wrong media types send it: fetch's default for a string, curl -d's form, no type at all. */
function wrongBodies(example: string): Array<{ name: string; headers: Record<string, string>; body: string }> {
  const length = (body: string) => String(Buffer.byteLength(body));
  return [
    { name: 'text/plain (fetch with a string body and no headers)', headers: { 'content-type': 'text/plain;charset=UTF-8', 'content-length': length(example) }, body: example },
    { name: 'a form (curl -d)', headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': length('dry_run=true&reason=x') }, body: 'dry_run=true&reason=x' },
    { name: 'no Content-Type', headers: { 'content-length': length(example) }, body: example },
    { name: 'text/plain, chunked', headers: { 'content-type': 'text/plain', 'transfer-encoding': 'chunked' }, body: example },
  ];
}

async function latestEventId(f: ServerFixture): Promise<number> {
  return ((await f.getJson('/api/events?limit=1')) as { latest_id: number }).latest_id;
}

/** Once the platform recorded the schedule's start (its first look at it): after that the log is quiet. */
async function scheduleRecorded(f: ServerFixture): Promise<void> {
  await waitFor('the schedule recorded', async () => ((await f.getJson('/api/schedules/yearly')) as { since: string | null }).since !== null);
}

/** A want and a backfill whose runs are running (30 s sleeps), the schedule recorded: the log is quiet meanwhile. */
async function quietWorkspace(f: ServerFixture): Promise<Ids> {
  const want = await createWant(f, ['slow/w']);
  const res = await f.api('/api/backfills', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"partitions": ["slow/b"]}' });
  if (res.status !== 201) throw new Error(`POST /api/backfills -> ${res.status}: ${await res.text()}`);
  const backfill = ((await res.json()) as { backfill_id: string }).backfill_id;
  await waitFor('both runs running and the schedule recorded', async () => {
    const runs = (await f.getJson('/api/job_runs?status=running')) as { total: number };
    const schedule = (await f.getJson('/api/schedules/yearly')) as { since: string | null };
    return runs.total === 2 && schedule.since !== null;
  });
  return { want, backfill };
}

const send = (f: ServerFixture, method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<RawResponse> =>
  rawRequest(`${f.url}${path}`, { method: method.toUpperCase(), headers, ...(body === undefined ? {} : { body }) });

test('every write refuses a body that is not JSON with a 415 saying what to send, and records nothing', async (t) => {
  t.timeout(60_000);
  const f = await startServer(t, { graph: GRAPH });
  const ids = await quietWorkspace(f);
  t.true(WRITES.length >= 9, `${WRITES.length} writes in the table`);
  const before = await latestEventId(f);

  for (const op of WRITES) {
    const path = concretePath(op.path, ids);
    for (const wrong of wrongBodies(op.body?.example ?? '{}')) {
      const what = `${op.method.toUpperCase()} ${path}, ${wrong.name}`;
      const res = await send(f, op.method, path, wrong.headers, wrong.body);
      t.is(res.status, 415, `${what}: ${res.body}`);
      const { error } = JSON.parse(res.body) as { error: string };
      t.regex(error, /Content-Type: application\/json/, what);
      t.regex(error, /Nothing was done\.$/, what);
      t.true(error.includes(`${op.method.toUpperCase()} ${path}`), `${what}: names the request: ${error}`);
      t.true(error.includes(wrong.headers['content-type'] ? `came as ${wrong.headers['content-type']}` : 'came without a Content-Type'), `${what}: says what came: ${error}`);
      // What to send: the operation's example body, or none for a write that takes none.
      if (op.body) t.true(error.includes(`like ${op.body.example}`), `${what}: shows an example: ${error}`);
      else t.regex(error, /takes no body/, what);
    }
  }

  t.is(await latestEventId(f), before, 'nothing recorded');
  const state = f.platform.state();
  t.is(state.wants.get(ids.want)?.status, 'building', 'the want was not canceled');
  t.false(state.schedules.get('yearly')?.paused ?? false, 'the schedule was not paused');
  t.is(((await f.getJson(`/api/backfills/${ids.backfill}`)) as { status: string }).status, 'building', 'the backfill was not canceled');
});

test('writes without a body go on as before: none at all, Content-Length 0 or an empty chunked body named JSON or nothing; named another type, a 415 (a page\'s empty form)', async (t) => {
  t.timeout(60_000);
  const f = await startServer(t, { graph: GRAPH });
  const ids = await quietWorkspace(f);
  const bodyless: Array<{ name: string; headers: Record<string, string>; body?: string }> = [
    { name: 'no body', headers: {} },
    { name: 'Content-Length 0, application/json', headers: { 'content-type': 'application/json', 'content-length': '0' }, body: '' },
    { name: 'an empty chunked body, no type', headers: { 'transfer-encoding': 'chunked' } },
    // A DELETE so sent has neither a length nor chunks (curl -X DELETE -H 'Content-Type: application/json'): no body,
    // JSON named. `req.is` says nothing of such a request; it was taken for another type and refused.
    { name: 'no body, JSON named', headers: { 'content-type': 'application/json' } },
  ];
  // What a page's <form> sends with no fields, and needs no CORS preflight for: refused before anything is done.
  const typed: Array<{ name: string; headers: Record<string, string>; body?: string }> = [
    { name: 'Content-Length 0, text/plain', headers: { 'content-type': 'text/plain', 'content-length': '0' }, body: '' },
    { name: 'an empty chunked body, a form type', headers: { 'content-type': 'application/x-www-form-urlencoded', 'transfer-encoding': 'chunked' } },
  ];
  for (const op of WRITES) {
    const path = concretePath(op.path, ids);
    for (const b of typed) {
      const res = await send(f, op.method, path, b.headers, b.body);
      t.is(res.status, 415, `${op.method.toUpperCase()} ${path}, ${b.name}: ${res.body}`);
    }
    for (const b of bodyless) {
      const what = `${op.method.toUpperCase()} ${path}, ${b.name}`;
      const res = await send(f, op.method, path, b.headers, b.body);
      t.not(res.status, 415, `${what}: ${res.body}`);
      if (op.body?.required) {
        // What a create said before without a body: it needs one.
        t.is(res.status, 400, `${what}: ${res.body}`);
        // None at all: it needs one; named JSON and empty: read as {}, its required field missing.
        t.regex((JSON.parse(res.body) as { error: string }).error, /^(Expected a JSON body \(Content-Type: application\/json\) like |Field '[a-z_]+' is required|Give exactly one of )/, what);
      } else {
        t.is(res.status, 200, `${what}: ${res.body}`);
      }
    }
  }
  // They did what they say: the want and the backfill canceled, the schedule paused and resumed, three gc passes.
  const state = f.platform.state();
  t.is(state.wants.get(ids.want)?.status, 'canceled');
  t.is(((await f.getJson(`/api/backfills/${ids.backfill}`)) as { status: string }).status, 'canceled');
  t.false(state.schedules.get('yearly')?.paused ?? true, 'resumed last');
  const types = ((await f.getJson('/api/events?limit=10000')) as { data: Array<{ type: string }> }).data.map((e) => e.type);
  t.is(types.filter((x) => x === 'schedule_paused').length, 1, 'a pause, then pauses of a paused schedule: no-ops');
  t.true(types.includes('schedule_resumed'));
});

test('JSON bodies are read as before, charsets included; the RPCs and unknown paths are not the body check\'s to answer', async (t) => {
  const f = await startServer(t, { graph: GRAPH });
  // A JSON body under any spelling of its type is JSON's to parse: a bad one is the parser's 400, a latin1 one 415.
  const pause = await send(f, 'post', '/api/schedules/yearly/pause', { 'content-type': 'Application/JSON; charset=utf-8' }, '{"reason": "maintenance"}');
  t.is(pause.status, 200, pause.body);
  t.is(f.platform.state().schedules.get('yearly')?.paused, true);
  const broken = await send(f, 'post', '/api/gc', { 'content-type': 'application/json' }, '{"dry_run": tru');
  t.is(broken.status, 400);
  t.regex(broken.body, /not valid JSON/);
  const latin = await send(f, 'post', '/api/gc', { 'content-type': 'application/json; charset=latin1' }, '{}');
  t.is(latin.status, 415);
  t.regex(latin.body, /Unsupported body encoding/);

  // A path no route has is a 404, whatever its body.
  const nowhere = await send(f, 'post', '/api/nothing-here', { 'content-type': 'text/plain' }, 'hello');
  t.is(nowhere.status, 404, nowhere.body);

  // The Connect RPCs answer for their own bodies: their JSON and protobuf work, any other type is their 415.
  const rpc = `/${PLATFORM_SERVICE}/GetJobConfigs`;
  const json = await send(f, 'post', rpc, { 'content-type': 'application/json' }, '{"outputRefs": ["ok/a"]}');
  t.is(json.status, 200, json.body);
  const proto = await send(f, 'post', rpc, { 'content-type': 'application/proto' }, '');
  t.not(proto.status, 415, proto.body);
  const text = await send(f, 'post', rpc, { 'content-type': 'text/plain' }, '{"outputRefs": ["ok/a"]}');
  t.is(text.status, 415);
  t.is((JSON.parse(text.body) as { code: string }).code, 'unimplemented', 'the Connect error shape, not ours');
});

test('a body that does not decompress as its Content-Encoding says is a 400 naming the encoding and what to send; nothing is created', async (t) => {
  const f = await startServer(t, { graph: GRAPH });
  // Read once the log is quiet: the schedule's start, recorded by the platform's own first look, came after this read
  // on a loaded machine ('nothing was recorded': 1 event).
  await scheduleRecorded(f);
  const before = await latestEventId(f);
  const plain = '{"partitions": ["ok/enc"]}';
  const truncatedGzip = gzipSync(plain).subarray(0, 12);
  const cases: Array<[encoding: string, body: string | Buffer]> = [['deflate', plain], ['gzip', plain], ['br', plain], ['gzip', truncatedGzip]];
  for (const [encoding, body] of cases) {
    const res = await rawRequest(`${f.url}/api/wants`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-encoding': encoding }, body });
    const what = `Content-Encoding: ${encoding}, ${Buffer.isBuffer(body) ? 'a cut gzip stream' : 'a plain body'}`;
    t.is(res.status, 400, `${what}: ${res.body}`);
    const { error } = JSON.parse(res.body) as { error: string };
    t.regex(error, new RegExp(`^The request body is not ${encoding}-compressed as its Content-Encoding: ${encoding} says \\(.+\\): `), what);
    t.regex(error, new RegExp(`send it compressed with ${encoding}, or uncompressed without a Content-Encoding header\\. Nothing was done\\.$`), what);
  }
  t.is(await latestEventId(f), before, 'nothing was recorded');
  // One that does decompress is read as before.
  const ok = await rawRequest(`${f.url}/api/wants`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-encoding': 'deflate' }, body: deflateSync(plain) });
  t.is(ok.status, 201, ok.body);
});

test('the example body of every operation in the table is JSON that fits its schema (the refusals and the document show it)', (t) => {
  const withBodies = OPERATIONS.filter((op) => op.body);
  t.true(withBodies.length >= 7);
  for (const op of withBodies) {
    const value: unknown = JSON.parse(op.body!.example);
    t.true(TypeCompiler.Compile(op.body!.schema).Check(value), `${op.method.toUpperCase()} ${op.path}: ${op.body!.example}`);
  }
});

test('a JSON body that is not an object (null, an array, a number, a string, true) is a 400 saying the body must be an object; none is a 500', async (t) => {
  t.timeout(60_000);
  const f = await startServer(t, { graph: GRAPH });
  const ids = await quietWorkspace(f);
  const before = await latestEventId(f);
  // With its length: node sends a DELETE's body unframed otherwise, and the server reads it as the next request.
  const json = (body: string) => ({ 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) });
  const notObjects: Array<{ body: string; named: string }> = [
    { body: 'null', named: 'null' },
    { body: '[]', named: 'an array' },
    { body: '3', named: 'a number' },
    { body: '"x"', named: 'a string' },
    { body: 'true', named: 'a boolean' },
  ];
  // The writes that take a body: `null` was once a pause (or a gc pass) without one.
  for (const op of WRITES.filter((w) => w.body)) {
    const path = concretePath(op.path, ids);
    for (const wrong of notObjects) {
      const what = `${op.method.toUpperCase()} ${path} with the body ${wrong.body}`;
      const res = await send(f, op.method, path, json(wrong.body), wrong.body);
      t.is(res.status, 400, `${what}: ${res.body}`);
      const { error } = JSON.parse(res.body) as { error: string };
      t.true(error.startsWith(`The body must be a JSON object, got ${wrong.named}, like `), `${what}: ${error}`);
      t.true(error.includes(op.body!.example), `${what}: shows an example: ${error}`);
    }
  }
  t.is(await latestEventId(f), before, 'nothing recorded');
  t.false(f.platform.state().schedules.get('yearly')?.paused ?? false, 'the schedule was not paused');

  // The writes that take none ignore a JSON body (json-body.ts: "send none, or JSON"), whatever its value: never a 500.
  for (const op of WRITES.filter((w) => !w.body)) {
    const path = concretePath(op.path, ids);
    for (const wrong of notObjects) {
      const res = await send(f, op.method, path, json(wrong.body), wrong.body);
      t.is(res.status, 200, `${op.method.toUpperCase()} ${path} with the body ${wrong.body}: ${res.body}`);
    }
  }
  // The RPCs read their own JSON: a body that is not an object is their 400 (invalid_argument), not a 500.
  for (const rpc of [`/${PLATFORM_SERVICE}/GetJobConfigs`, `/${PLATFORM_SERVICE}/AnalyzeGraph`]) {
    for (const wrong of notObjects) {
      const res = await send(f, 'post', rpc, json(wrong.body), wrong.body);
      t.true(res.status >= 400 && res.status < 500, `${rpc} with the body ${wrong.body}: ${res.status} ${res.body}`);
    }
  }
});
