/**
 * Inputs at their edges, found from the outside (session 25), against the real server on port 0 over a real
 * LevelDB log:
 * - an event stream resumed after an id the log never gave (a Last-Event-ID kept from a log since restored from a
 *   backup, or from another workspace) waited silently and then skipped every event up to that id;
 * - a write's body whose bytes are not UTF-8 had them turned into U+FFFD and recorded: two refs sent in Latin-1
 *   ('caf\xe9', 'caf\xe8') became one and the same ref;
 * - a run's `config.env` was never cut: a list of runs whose config programs give thousands of variables (a wide run)
 *   was as large as all of them.
 */
import test from 'ava';
import { refProblem } from '../lib/orchestrator/request-checks.js';
import { connect } from 'node:net';
import { SseReader, createWant, rawRequest, startServer, waitForWant } from './helpers/server-fixture.js';

test('an event stream resumed after an id past the latest is a 400 naming the latest, not a silent wait', async (t) => {
  const f = await startServer(t);
  const id = await createWant(f, ['ok/one']);
  await waitForWant(f, id);
  const latest = (await f.getJson('/api/events?limit=1')).latest_id as number;

  for (const [how, init] of [
    ['Last-Event-ID', { headers: { 'Last-Event-ID': String(latest + 500) } }],
    ['?after=', {}],
  ] as const) {
    const path = how === '?after=' ? `/api/events/stream?after=${latest + 500}` : '/api/events/stream';
    const controller = new AbortController();
    const res = await Promise.race([
      f.api(path, { ...init, signal: controller.signal }),
      new Promise<undefined>((r) => setTimeout(() => r(undefined), 3_000)),
    ]);
    t.truthy(res, `${how}: an answer came`);
    t.is(res!.status, 400, how);
    if (res!.status !== 400) {
      controller.abort();
      continue;
    }
    const body = (await res!.json()) as { error: string };
    t.regex(body.error, new RegExp(`${latest + 500}.*latest.*\\b${latest}\\b`), how);
  }

  // The latest itself (what a client that read every event sends) still resumes: it gets what comes next.
  const stream = await SseReader.open(`${f.url}/api/events/stream`, { 'Last-Event-ID': String(latest) });
  t.teardown(() => stream.close());
  await createWant(f, ['ok/two']);
  t.is(Number((await stream.next()).id), latest + 1);
});

test("a write's body that is not UTF-8 is a 400, and nothing is recorded (two Latin-1 refs do not become one)", async (t) => {
  const f = await startServer(t, { graph: { jobs: [{ label: 'any', outputs: ['any/.+'], exec: ['true'] }] } });
  await waitForWant(f, await createWant(f, ['any/base']), ['successful']);
  const before = (await f.getJson('/api/events?limit=1')).latest_id as number;
  const latin1 = (ref: string) => Buffer.concat([Buffer.from('{"partitions": ["'), Buffer.from(ref, 'latin1'), Buffer.from('"]}')]);
  // The first goes by the fast path of POST /api/wants, the others through express.
  for (const contentType of ['application/json', 'application/json; charset=utf-8', 'Application/JSON']) {
    for (const body of [latin1('any/caf\xe9'), latin1('any/caf\xe8')]) {
      const res = await rawRequest(`${f.url}/api/wants`, { method: 'POST', headers: { 'content-type': contentType }, body });
      t.is(res.status, 400, `${contentType}: ${res.body}`);
      t.regex(JSON.parse(res.body).error, /UTF-8/, contentType);
    }
  }
  const taint = await rawRequest(`${f.url}/api/taints`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: Buffer.from('{"partitions": ["any/base"], "reason": "caf\xe9"}', 'latin1'),
  });
  t.is(taint.status, 400, taint.body);
  t.regex(JSON.parse(taint.body).error, /UTF-8/);
  t.is((await f.getJson('/api/events?limit=1')).latest_id, before, 'nothing was recorded');
  t.is((await f.getJson('/api/partitions')).total, 1);

  // Well-formed UTF-8 (with a byte order mark too) is taken as before.
  const ok = await rawRequest(`${f.url}/api/wants`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: Buffer.from('\ufeff{"partitions": ["any/caf\u00e9"]}', 'utf8'),
  });
  t.is(ok.status, 201, ok.body);
  t.deepEqual(JSON.parse(ok.body).want.partitions, ['any/caf\u00e9']);
});

test('a JSON body giving a key twice in an object is a 400 naming the key and where, on the fast path and through express; nothing is recorded', async (t) => {
  const f = await startServer(t, { graph: { jobs: [{ label: 'any', outputs: ['any/.+'], exec: ['true'] }] } });
  await waitForWant(f, await createWant(f, ['any/base']), ['successful']);
  const before = (await f.getJson('/api/events?limit=1')).latest_id as number;
  const post = (path: string, body: string, contentType = 'application/json') => rawRequest(`${f.url}${path}`, { method: 'POST', headers: { 'content-type': contentType }, body: Buffer.from(body) });
  // The first goes by the fast path of POST /api/wants, the second through express.
  for (const contentType of ['application/json', 'Application/JSON']) {
    const want = await post('/api/wants', '{"partitions": ["any/1"], "comment": "first", "comment": "second"}', contentType);
    t.is(want.status, 400, `${contentType}: ${want.body}`);
    t.regex(JSON.parse(want.body).error, /gives the key "comment" twice in the top-level object: send each key once/);
  }
  const taint = await post('/api/taints', '{"partitions": ["any/base"], "reason": "a", "downstream": true, "reason": "b"}');
  t.is(taint.status, 400, taint.body);
  t.regex(JSON.parse(taint.body).error, /"reason" twice/);
  const lookup = await post('/api/partitions/lookup', '{"refs": ["any/base"], "r\\u0065fs": []}');
  t.is(lookup.status, 400, lookup.body);
  t.regex(JSON.parse(lookup.body).error, /"refs" twice/);
  // Nested: named with where it is.
  const nested = await post('/api/wants', '{"partitions": ["any/1"], "comment": {"a": 1, "b": [{"x": 1, "x": 2}]}}');
  t.is(nested.status, 400, nested.body);
  t.regex(JSON.parse(nested.body).error, /"x" twice in the object at comment\.b\[0\]/);
  t.is((await f.getJson('/api/events?limit=1')).latest_id, before, 'nothing was recorded');
  // A colon or a quoted key inside a string is none.
  const ok = await post('/api/wants', '{"partitions": ["any/at=10:00"], "comment": "\\"comment\\": x"}');
  t.is(ok.status, 201, ok.body);
});

test('a UTF-16 body (charset=utf-16, big-endian without a byte order mark) is checked for keys given twice as body-parser decodes it: no key slips, no 500', async (t) => {
  // body-parser decodes charset=utf-16 with iconv-lite, which tells big-endian from its bytes; TextDecoder('utf-16')
  // is always little-endian, so the check read other text than was parsed: a duplicate slipped, and a string holding
  // U+2200 and U+3A00 (a quote and a colon when byte-swapped) made the scan parse a bad literal: a 500.
  const f = await startServer(t, { graph: { jobs: [{ label: 'any', outputs: ['any/.+'], exec: ['true'] }] } });
  await waitForWant(f, await createWant(f, ['any/base']), ['successful']);
  const before = (await f.getJson('/api/events?limit=1')).latest_id as number;
  const utf16be = (text: string) => Buffer.from(text, 'utf16le').swap16();
  const post = (body: string) =>
    rawRequest(`${f.url}/api/taints`, { method: 'POST', headers: { 'content-type': 'application/json; charset=utf-16' }, body: utf16be(body) });
  const twice = await post('{"partitions": ["any/base"], "reason": "a", "reason": "b"}');
  t.is(twice.status, 400, twice.body);
  t.regex(JSON.parse(twice.body).error, /"reason" twice/);
  const odd = await post('{"partitions": ["any/base"], "reason": "\u7b00\u2200\u0100\u2200\u3a00\u3a00\u3a00\u3a00\u3a00"}');
  t.not(odd.status, 500, odd.body);
  t.is(odd.status, 201, odd.body);
  t.true((await f.getJson('/api/events?limit=1')).latest_id as number > before);
});

test("a run's environment is cut in its views as its lists are: env_total counts it, truncated says so", async (t) => {
  const wide = 5_000;
  const program = `const refs = process.argv.slice(1); const env = {}; for (let i = 0; i < ${wide}; i++) env['V' + i] = 'x';` +
    `process.stdout.write(JSON.stringify({ configs: refs.map((r) => ({ outputs: [r], inputs: [], args: [], env: r.endsWith('small') ? { A: '1' } : env })) }));`;
  const f = await startServer(t, {
    graph: { jobs: [{ label: 'wide', outputs: ['wide/.+'], config: ['node', '-e', program], exec: ['true'] }] },
  });
  const id = await createWant(f, ['wide/1', 'wide/small']);
  await waitForWant(f, id, ['successful']);
  const runs = (await f.getJson('/api/job_runs')).data as Array<{ job_run_id: string; outputs: string[]; config: { env: Record<string, string> }; env_total: number; truncated: boolean }>;
  const big = runs.find((r) => r.outputs[0] === 'wide/1')!;
  const small = runs.find((r) => r.outputs[0] === 'wide/small')!;
  t.is(Object.keys(big.config.env).length, 20, 'an item of a list shows its first 20 variables');
  t.is(big.env_total, wide);
  t.true(big.truncated);
  t.deepEqual(small.config.env, { A: '1' });
  t.is(small.env_total, 1);
  t.false(small.truncated);
  const detail = await f.getJson(`/api/job_runs/${big.job_run_id}`);
  t.is(Object.keys(detail.config.env).length, 1_000, 'the detail shows its first 1,000');
  t.is(detail.config.env.V0, 'x');
  t.is(detail.env_total, wide);
  t.true(detail.truncated);
});

test("a want's data_timestamp of a day its month has not (or hour 24) is a 400 saying so, not a time in the next month; nothing is recorded", async (t) => {
  const f = await startServer(t);
  for (const [value, why] of [
    ['2026-02-30T00:00:00Z', /names no time there is: February 2026 has 28 days, not 30 \(got "2026-02-30T00:00:00Z"\)/],
    ['2026-04-31', /April 2026 has 30 days, not 31/],
    ['2026-01-01T24:00:00Z', /an hour is 00 to 23, not 24/],
    ['2026-13-01', /there is no month 13/],
  ] as const) {
    const res = await f.postWant({ partitions: ['ok/one'], data_timestamp: value });
    t.is(res.status, 400, value);
    t.regex(((await res.json()) as { error: string }).error, why, value);
  }
  // Leap day of a leap year, and the last second of a day, are times.
  const ok = await f.postWant({ partitions: ['ok/one'], data_timestamp: '2024-02-29T23:59:59Z' });
  t.is(ok.status, 201);
  t.is((await f.getJson('/api/wants?limit=1')).total as number, 1, 'only the good want was recorded');
});

test("a schedule's name refused for its first character says so (it named only the characters allowed)", async (t) => {
  const { parseGraph } = await import('../lib/index.js');
  for (const name of ['-x', '.hidden', '_a']) {
    const err = t.throws(() => parseGraph({ jobs: [{ label: 'ok', outputs: ['ok/.+'], exec: ['true'] }], schedules: [{ name, cron: '0 3 * * *', partitions: ['ok/${date}'] }] }, 'platform.json'));
    t.regex(err!.message, /starts with a letter or digit/, name);
  }
});

test('a ref holding a C1 control (U+0080-U+009F: NEL, CSI) is refused as C0 controls and DEL are, everywhere a ref comes in, and shown escaped', async (t) => {
  const f = await startServer(t);
  const before = f.platform.state().last_event_id;
  const json = (path: string, body: unknown) => f.api(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const RANGES = 'U+0000-U+001F, U+007F-U+009F';
  for (const [name, c] of [['NEL', '\u0085'], ['CSI', '\u009b'], ['U+0080', '\u0080'], ['U+009F', '\u009f']] as const) {
    const ref = `ok/a${c}31m`;
    for (const [path, body] of [
      ['/api/wants', { partitions: [ref] }],
      ['/api/taints', { partitions: [ref], reason: 'x' }],
      ['/api/backfills', { partitions: [ref] }],
      ['/api/backfills', { pattern: `ok/{b,a${c}31m}` }],
      ['/api/partitions/lookup', { refs: [ref] }],
    ] as const) {
      const res = await json(path, body);
      const { error } = (await res.json()) as { error: string };
      t.is(res.status, 400, `${name} in ${path} ${JSON.stringify(body)}: ${error}`);
      t.true(error.includes(RANGES), `${name} in ${path}: names the characters refused: ${error}`);
      t.false(/[\u0080-\u009f]/.test(error), `${name} in ${path}: the message holds no raw control: ${JSON.stringify(error)}`);
    }
    // The embedding API and the Connect service check refs where every write passes.
    t.like(await f.platform.createWant({ partitions: [ref], data_timestamp: 0, ttl_seconds: 0, sla_seconds: 0 }), { ok: false, status: 400 });
    const rpc = await f.api('/platform.v1.PlatformService/GetJobConfigs', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ outputRefs: [ref] }) });
    const rpcError = (await rpc.json()) as { code: string; message: string };
    t.is(rpcError.code, 'invalid_argument', `${name} in GetJobConfigs`);
    t.true(rpcError.message.includes(RANGES), rpcError.message);
  }
  t.is(f.platform.state().last_event_id, before, 'nothing was recorded');
  // A job label is an id the same way: a C1 control in it is refused when the graph is read.
  const { parseGraph } = await import('../lib/index.js');
  const err = t.throws(() => parseGraph({ jobs: [{ label: 'ok\u0085', outputs: ['ok/.+'], exec: ['true'] }] }, 'platform.json'));
  t.regex(err!.message, /control characters/);
});

test('a URL (or headers) over what node reads is a 431 with a JSON error saying so and how long an id or ref may be; other malformed requests answer as before', async (t) => {
  const f = await startServer(t);
  for (const [path, headers] of [
    [`/api/wants/${'a'.repeat(20_000)}`, {}],
    [`/api/partitions/${'p'.repeat(17_000)}`, {}],
    ['/api/wants', { 'x-filler': 'h'.repeat(20_000) }],
  ] as const) {
    const res = await rawRequest(`${f.url}${path}`, { headers });
    const what = `${path.slice(0, 24)}... ${Object.keys(headers).join(',')}`;
    t.is(res.status, 431, what);
    t.regex(String(res.headers['content-type']), /^application\/json/, what);
    t.is(res.headers.connection, 'close', what);
    const { error } = JSON.parse(res.body) as { error: string };
    t.regex(error, /^The request's headers \(its URL included\) are too large: over 16 KiB, the most the server reads\. /, what);
    t.true(error.includes('ids and refs are at most 1024 characters'), error);
  }
  // Another request the parser refuses (a bad request line) is still node's bare 400, and the server answers on.
  const garbage = await new Promise<string>((resolve, reject) => {
    const socket = connect(f.server.port, '127.0.0.1', () => socket.write('NOT HTTP AT ALL\r\n\r\n'));
    let got = '';
    socket.setEncoding('utf8').on('data', (d: string) => (got += d)).on('close', () => resolve(got)).on('error', reject);
  });
  t.regex(garbage, /^HTTP\/1\.1 400 Bad Request\r\n/);
  t.is((await f.api('/health')).status, 200);
  t.deepEqual(f.errorLines, [], 'nothing logged as a fault');
});

test("a schedule whose ttl is over by the time its tick's want is made (no more than its negative offset) is refused at load, saying so", async (t) => {
  const { parseGraph } = await import('../lib/index.js');
  const graph = (extra: Record<string, unknown>) => ({ jobs: [{ label: 'ok', outputs: ['ok/.+'], exec: ['true'] }], schedules: [{ name: 'daily', cron: '0 3 * * *', partitions: ['ok/${date}'], offset: '-1d', ...extra }] });
  const ttl = t.throws(() => parseGraph(graph({ ttl_seconds: 60 }), 'platform.json'));
  t.regex(ttl!.message, /ttl_seconds.*is 60 s, no more than the offset "-1d" takes back: .*every tick's want would be expired when made\. Give more than 86400 s, or 0 for none\./);
  t.notThrows(() => parseGraph(graph({ ttl_seconds: 86_401, sla_seconds: 90_000 }), 'platform.json'));
  t.notThrows(() => parseGraph(graph({ offset: '+1h', ttl_seconds: 60 }), 'platform.json'), 'a positive offset leaves the ttl its time');
});

test('a path segment whose percent-encoding is not UTF-8 is a 400 that names it and says how to encode', async (t) => {
  const f = await startServer(t);
  for (const path of ['/api/wants/%FF', '/api/job_runs/r-%C3', '/api/partitions/caf%E9']) {
    const res = await f.api(path);
    t.is(res.status, 400, path);
    const { error } = (await res.json()) as { error: string };
    const segment = path.slice(path.lastIndexOf('/') + 1);
    t.is(error, `The path segment '${segment}' is not percent-encoded UTF-8: encode an id or ref as UTF-8, then percent-encode it (encodeURIComponent).`, path);
  }
});

// JSON.parse reads arrays nested 100,000 deep; the message naming the value refused overflowed the stack on it, and the
// write was a 500 "Internal error" where it is the client's fault.
test('a field holding arrays nested 100,000 deep is a 400 that says so, not a 500', async (t) => {
  const f = await startServer(t);
  const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
  const writes: Array<[string, string]> = [
    ['/api/wants', `{"partitions": ["ok/a"], "comment": ${deep}}`],
    ['/api/wants', `{"partitions": ${deep}}`],
    ['/api/taints', `{"partitions": ["ok/a"], "reason": ${deep}}`],
    ['/api/backfills', `{"pattern": "ok/{a,b}", "policy": ${deep}}`],
  ];
  for (const [path, body] of writes) {
    const res = await rawRequest(`${f.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    t.is(res.status, 400, `${path}: ${res.body.slice(0, 200)}`);
    t.regex(JSON.parse(res.body).error, /nested too deeply|must be/, path);
  }
  t.deepEqual(f.errorLines, [], 'no server fault logged');
});

test('a query parameter a path does not read is a 400 naming it and what the path takes, not a filter dropped unseen (the fast path of GET /api/wants too)', async (t) => {
  const f = await startServer(t);
  for (const [path, name, takes] of [
    ['/api/job_runs?want=w-1', 'want', /this path takes .*want_id/],
    ['/api/partitions?state=failed', 'state', /this path takes .*status/],
    ['/api/wants?state=failed', 'state', /this path takes .*status/],
    ['/api/taints?status=x', 'status', /this path takes offset, limit/],
    ['/api/backfills?status=failed', 'status', /this path takes offset, limit/],
    ['/api/events?after=60', 'after', /this path takes offset, limit/],
  ] as const) {
    const res = await f.api(path);
    t.is(res.status, 400, path);
    const error = ((await res.json()) as { error: string }).error;
    t.regex(error, new RegExp(`^Unknown query parameter '${name}'; `), path);
    t.regex(error, takes, path);
  }
  t.is((await f.api('/api/job_runs?want_id=')).status, 200, 'an empty value is no filter, as before');
});

test("a write from a page at [::1] on the daemon's port is refused (the daemon listens on 127.0.0.1 alone), and an empty form or text/plain write is a 415, not a write without a body", async (t) => {
  const f = await startServer(t);
  const port = new URL(f.url).port;
  for (const origin of [`http://[::1]:${port}`, 'http://evil.example']) {
    const res = await f.api('/api/gc', { method: 'POST', headers: { origin } });
    t.is(res.status, 403, origin);
    t.regex(((await res.json()) as { error: string }).error, /^A POST from a page of the origin .* is refused: pages of other origins may only GET from this daemon/);
  }
  // A Connect RPC that only reads is a POST as well: refused in words that fit it.
  const rpc = await f.api('/platform.v1.PlatformService/GetJobConfigs', { method: 'POST', headers: { origin: 'http://evil.example', 'content-type': 'application/json' }, body: '{}' });
  t.is(rpc.status, 403);
  t.notRegex(await rpc.text(), /write/);
  for (const origin of [`http://127.0.0.1:${port}`, `http://localhost:${port}`]) t.is((await f.api('/api/gc', { method: 'POST', headers: { origin } })).status, 200, origin);
  // What an auto-submitted empty <form method=POST> sends, with no CORS preflight.
  for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
    const res = await f.api('/api/gc', { method: 'POST', headers: { 'content-type': type }, body: '' });
    t.is(res.status, 415, type);
    t.regex(((await res.json()) as { error: string }).error, /Nothing was done\.$/);
  }
  t.is((await f.api('/api/gc', { method: 'POST' })).status, 200, 'no body, no type: as before');
  t.is((await f.api('/api/gc', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '' })).status, 200, 'JSON named, no body: as before');
});

test('a comment or reason holding a control character (an escape, a tab, a line break) is a 400 naming it: they are shown in other people\'s terminals; nothing is recorded', async (t) => {
  const f = await startServer(t);
  const id = await createWant(f, ['ok/one']);
  await waitForWant(f, id);
  const before = f.platform.log.latestId();
  for (const [path, method, body, why] of [
    ['/api/wants', 'POST', { partitions: ['ok/two'], comment: 'red \u001b[31m' }, /comment holds a control character \(U\+001B, at position 5\)/],
    ['/api/wants', 'POST', { partitions: ['ok/two'], comment: 'a\tb' }, /U\+0009/],
    ['/api/wants', 'POST', { partitions: ['ok/two'], comment: 'line1\nline2' }, /U\+000A/],
    ['/api/wants', 'POST', { partitions: ['ok/two'], comment: 'c1 \u009b2J' }, /U\+009B/],
    ['/api/backfills', 'POST', { pattern: 'ok/{1..2}', comment: '\u0007' }, /comment holds a control character/],
    ['/api/taints', 'POST', { partitions: ['ok/one'], reason: '\u001b]0;title\u0007' }, /reason holds a control character/],
  ] as const) {
    const res = await f.api(path, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    t.is(res.status, 400, JSON.stringify(body));
    t.regex(((await res.json()) as { error: string }).error, why);
  }
  t.is(f.platform.log.latestId(), before, 'nothing recorded');
  const ok = await f.postWant({ partitions: ['ok/two'], comment: 'plain text, émoji 🚀 and all' });
  t.is(ok.status, 201);
});

test('a ref holding a bidirectional control (shown in another order than it is) is a 400 naming it, escaped; nothing is recorded', async (t) => {
  const f = await startServer(t);
  const before = f.platform.log.latestId();
  for (const [body, code, at] of [
    [{ partitions: ['ok/\u202egnp.exe'] }, '202E', 4],
    [{ partitions: ['ok/one', 'ok/a\u2066b'] }, '2066', 5],
    [{ partitions: ['ok/\u200fx'] }, '200F', 4],
  ] as const) {
    const res = await f.api('/api/wants', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    t.is(res.status, 400, JSON.stringify(body));
    const { error } = (await res.json()) as { error: string };
    // The schema's check comes first on this path (the same words as for other controls); refProblem says the
    // character and its place where the schema is not asked (the fast path, the embedding API).
    t.regex(error, /bidirectional controls? /);
    t.true(error.includes(`\\u${code.toLowerCase()}`), `${error} shows U+${code} escaped (at ${at})`);
    t.false(/[\u202a-\u202e\u2066-\u2069\u200e\u200f]/.test(error), 'the message shows it escaped, not acting');
  }
  t.is(f.platform.log.latestId(), before, 'nothing recorded');
  t.is(refProblem('ok/שלום-مرحبا', 'partitions[0]'), undefined, 'right-to-left letters are fine');
  t.regex(refProblem('ok/\u202egnp.exe', 'partitions[0]') ?? '', /contains a bidirectional control \(U\+202E, at position 4\)/);
});

test("a backfill whose pattern is empty is a 400 that says the field is empty, not that 'the pattern's ref 1' is", async (t) => {
  const f = await startServer(t);
  for (const pattern of ['', '   ']) {
    const res = await f.api('/api/backfills', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ pattern }) });
    t.is(res.status, 400);
    t.regex(((await res.json()) as { error: string }).error, /^Field 'pattern' is empty: give a brace pattern, like /);
  }
});

test('an offset past the largest safe integer is a 400 saying it is too large and the maximum, not that it must be a whole number', async (t) => {
  const f = await startServer(t);
  for (const path of ['/api/wants', '/api/job_runs', '/api/partitions', '/api/events']) {
    const res = await f.api(`${path}?offset=99999999999999999999`);
    t.is(res.status, 400, path);
    t.is(((await res.json()) as { error: string }).error, "Query parameter 'offset' is too large: at most 9007199254740991, got 99999999999999999999.", path);
  }
  t.is((await f.api(`/api/wants?offset=${Number.MAX_SAFE_INTEGER}`)).status, 200, 'the maximum itself is taken');
  const other = await f.api('/api/wants?offset=-1');
  t.regex(((await other.json()) as { error: string }).error, /must be a whole number of at least 0, got "-1"/, 'not digits: as before');
});
