/**
 * The client's transport over node:http (lib/client/http-fetch.ts) against real servers, and what it is for: a
 * `platform` command that loads neither undici (node's fetch) nor the daemon's own packages.
 */
import test from 'ava';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { lastValueFrom, toArray } from 'rxjs';
import { ServerSilentError, createHttpFetch, nodeHttpFetch } from '../lib/client/http-fetch.js';
import { NoServerError } from '../lib/client/server-connection.js';
import { PlatformClient } from '../lib/client/platform-client.js';
import { sseStream } from '../lib/client/sse-client.js';
import { REPO_ROOT, makeWorkspace, runCli, startServer } from './helpers/server-fixture.js';
import { closedPort, serveStub } from './helpers/http-stub.js';

test('a request carries its method, headers and body; the answer its status, headers (any case) and body', async (t) => {
  const seen: Array<{ method: string; type: string | undefined; length: string | undefined; body: string }> = [];
  const url = await serveStub(t, (req, res, body) => {
    seen.push({ method: req.method!, type: req.headers['content-type'], length: req.headers['content-length'], body });
    res.writeHead(req.url === '/missing' ? 404 : 201, { 'Content-Type': 'application/json', 'X-Many': ['a', 'b'] });
    res.end(JSON.stringify({ got: body, path: req.url }));
  });
  const body = JSON.stringify({ text: 'ünïcödé' });
  const res = await nodeHttpFetch(`${url}/api/things?x=1`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body });
  t.is(res.status, 201);
  t.true(res.ok);
  t.is(res.headers.get('content-type'), 'application/json');
  t.is(res.headers.get('X-MANY'), 'a, b');
  t.is(res.headers.get('absent'), null);
  t.deepEqual(await res.json(), { got: body, path: '/api/things?x=1' });
  t.deepEqual(seen[0], { method: 'POST', type: 'application/json', length: String(Buffer.byteLength(body)), body });

  const missing = await nodeHttpFetch(`${url}/missing`);
  t.is(missing.status, 404);
  t.false(missing.ok);
  t.is(missing.statusText, 'Not Found');
  t.is(await missing.text(), JSON.stringify({ got: '', path: '/missing' }));
  t.is(seen[1]!.method, 'GET');
});

test('an abort rejects with the signal\'s reason, before the answer and while its body streams', async (t) => {
  let closed = 0;
  let received = 0;
  const url = await serveStub(t, (req, res) => {
    received++;
    res.on('close', () => closed++);
    if (req.url === '/slow') return; // never answers
    res.writeHead(200, { 'Content-Type': 'text/event-stream' });
    res.write('data: one\n\n');
  });
  // As fetch, the signal's reason itself: a DOMException, which is not a native Error.
  const timedOut = await t.throwsAsync(nodeHttpFetch(`${url}/slow`, { signal: AbortSignal.timeout(50) }), { any: true });
  t.is((timedOut as Error | undefined)?.name, 'TimeoutError');

  const early = new AbortController();
  early.abort();
  const refused = await t.throwsAsync(nodeHttpFetch(`${url}/slow`, { signal: early.signal }), { any: true });
  t.is((refused as Error | undefined)?.name, 'AbortError');

  const streaming = new AbortController();
  const res = await nodeHttpFetch(`${url}/stream`, { signal: streaming.signal });
  const reader = res.body!.getReader();
  const first = await reader.read();
  t.is(Buffer.from(first.value!).toString(), 'data: one\n\n');
  const pending = reader.read();
  streaming.abort();
  t.is(((await t.throwsAsync(pending, { any: true })) as Error | undefined)?.name, 'AbortError');
  // Every request the server got (the stream; the timed-out one too unless its 50 ms ran out before it arrived, on a
  // loaded machine) went away. Up to 5 s: the server hears of a socket closed by the client late.
  t.true(received >= 1);
  for (let i = 0; i < 500 && closed < received; i++) await new Promise((r) => setTimeout(r, 10));
  t.is(closed, received);
});

test('SSE and the client\'s calls go over it by default; the global fetch still does as a transport', async (t) => {
  const url = await serveStub(t, (req, res) => {
    if (req.url === '/events') {
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      res.write('id: 1\ndata: a\n\n');
      setTimeout(() => res.end('id: 2\nevent: end\ndata: b\n\n'), 20);
      return;
    }
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ data: [], total: 0, offset: 0, limit: 100, auth: req.headers.authorization ?? null }));
  });
  // The defaults must not be node's fetch: it throws while they run.
  const real = globalThis.fetch;
  globalThis.fetch = () => Promise.reject(new Error('the global fetch was used'));
  let messages: unknown[];
  let own: { auth: string };
  try {
    messages = await lastValueFrom(sseStream(`${url}/events`).pipe(toArray()));
    own = (await new PlatformClient(url, { token: 'sekrit' }).listWants()) as unknown as { auth: string };
  } finally {
    globalThis.fetch = real;
  }
  t.deepEqual(messages, [
    { event: 'message', id: '1', data: 'a' },
    { event: 'end', id: '2', data: 'b' },
  ]);
  t.is(own.auth, 'Bearer sekrit');
  const viaGlobal = (await new PlatformClient(url, { fetch, token: 'other' }).listWants()) as unknown as { auth: string };
  t.is(viaGlobal.auth, 'Bearer other');
});

test('redirects are followed as fetch follows them, the token kept to its origin; a body is read once; an answer without one has none', async (t) => {
  const url = await serveStub(t, (req, res, body) => {
    if (req.url === '/moved') return void res.writeHead(301, { Location: '/here' }).end('moved');
    if (req.url === '/temp') return void res.writeHead(307, { Location: `${url}/here` }).end();
    if (req.url === '/loop') return void res.writeHead(302, { Location: '/loop' }).end();
    if (req.url === '/empty') return void res.writeHead(204).end();
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ method: req.method, body }));
  });
  // 301-303 turn a POST into a GET without its body; 307 and 308 repeat it whole.
  t.deepEqual(await (await nodeHttpFetch(`${url}/moved`, { method: 'POST', body: 'x' })).json(), { method: 'GET', body: '' });
  t.deepEqual(await (await nodeHttpFetch(`${url}/temp`, { method: 'POST', body: 'x' })).json(), { method: 'POST', body: 'x' });
  // A loop ends after a few hops with the last redirect as the answer.
  t.is((await nodeHttpFetch(`${url}/loop`)).status, 302);
  // The daemon's token goes on to the same origin, not to another one.
  const other = await serveStub(t, (req, res) => res.end(JSON.stringify({ auth: req.headers.authorization ?? null })));
  const away = await serveStub(t, (_req, res) => void res.writeHead(302, { Location: `${other}/x` }).end());
  const same = await serveStub(t, (req, res) => (req.url === '/x' ? res.end(JSON.stringify({ auth: req.headers.authorization ?? null })) : void res.writeHead(302, { Location: '/x' }).end()));
  t.deepEqual(await (await nodeHttpFetch(`${away}/`, { headers: { Authorization: 'Bearer t' } })).json(), { auth: null });
  t.deepEqual(await (await nodeHttpFetch(`${same}/`, { headers: { authorization: 'Bearer t' } })).json(), { auth: 'Bearer t' });
  const empty = await nodeHttpFetch(`${url}/empty`);
  t.is(empty.status, 204);
  t.is(empty.body, null);
  const res = await nodeHttpFetch(`${url}/here`);
  t.is(res.body, res.body, 'the same stream each time it is asked for');
  await t.throwsAsync(res.text(), { instanceOf: TypeError, message: /already been read/ });
});

test('a burst of requests shares a few connections; event streams hold their own, so they never starve requests', async (t) => {
  let connections = 0;
  const streams: Array<import('node:http').ServerResponse> = [];
  const url = await serveStub(t, (req, res) => {
    if (req.headers.accept === 'text/event-stream') {
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      res.write(': held open\n\n');
      streams.push(res);
      return;
    }
    setTimeout(() => res.end(JSON.stringify({ path: req.url })), 2);
  }, (server) => server.on('connection', () => connections++));
  const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => nodeHttpFetch(`${url}/r/${i}`).then((r) => r.json())));
  t.deepEqual(answers[199], { path: '/r/199' });
  t.true(connections <= 16, `${connections} connections for 200 requests`);
  // Twenty streams held open, more than the pool: a request still goes through.
  const held = await Promise.all(Array.from({ length: 20 }, () => nodeHttpFetch(`${url}/events`, { headers: { Accept: 'text/event-stream' } })));
  t.is(streams.length, 20);
  t.deepEqual(await (await nodeHttpFetch(`${url}/after`)).json(), { path: '/after' });
  for (const r of held) await r.body!.cancel();
});

test('no server: the socket error\'s code reaches the client\'s message', async (t) => {
  const err = await t.throwsAsync(new PlatformClient(`http://127.0.0.1:${await closedPort()}`).listWants());
  t.true(err instanceof NoServerError);
  t.regex(err!.message, /nothing is listening there \(connection refused\)/);
  const bad = await t.throwsAsync(nodeHttpFetch('ftp://127.0.0.1/x'));
  t.regex(bad!.message, /only http: and https: URLs/);
  // As fetch: a URL that does not parse rejects, it does not throw.
  const unparsable = nodeHttpFetch('not a url');
  t.true(unparsable instanceof Promise);
  await t.throwsAsync(unparsable, { instanceOf: TypeError });
});

test('a server that sends nothing for the quiet limit fails the request, before its answer or in its body; slow but steady answers and quiet event streams do not', async (t) => {
  const url = await serveStub(t, (req, res) => {
    if (req.url === '/silent' || req.url!.startsWith('/api/')) return; // accepted, never answered
    if (req.url === '/stalls') {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write('{"half":');
      return;
    }
    if (req.url === '/steady') {
      // 600 ms in all, never quiet for 100 ms
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      let n = 0;
      const tick = setInterval(() => {
        res.write(String(n++));
        if (n === 10) {
          clearInterval(tick);
          res.end();
        }
      }, 60);
      return;
    }
    if (req.url === '/events') {
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      res.write('data: one\n\n');
      setTimeout(() => res.end('data: two\n\n'), 600);
      return;
    }
    res.writeHead(404).end();
  });
  const quiet = createHttpFetch({ quietLimitMs: 250 });
  const silent = await t.throwsAsync(quiet(`${url}/silent`, { method: 'POST', body: '{}' }), { instanceOf: ServerSilentError });
  t.is(silent!.message, `The server at ${url} sent nothing for 250 ms in answer to POST /silent (PLATFORM_REQUEST_TIMEOUT=500ms waits longer).`);
  const stalls = await quiet(`${url}/stalls`);
  t.is(stalls.status, 200);
  await t.throwsAsync(stalls.text(), { instanceOf: ServerSilentError });
  t.is(await (await quiet(`${url}/steady`)).text(), '0123456789');
  const events = await quiet(`${url}/events`, { headers: { Accept: 'text/event-stream' } });
  t.is(await events.text(), 'data: one\n\ndata: two\n\n');
  // The client names the server that went quiet, and what to do.
  const client = new PlatformClient(url, { fetch: createHttpFetch({ quietLimitMs: 100 }) });
  const err = await t.throwsAsync(client.listWants());
  t.true(err instanceof NoServerError, String(err));
  t.regex(err!.message, /sent nothing for 100 ms in answer to GET \/api\/wants.*Check the server at/);
});

test('a command against a server that never answers ends with the message after PLATFORM_REQUEST_TIMEOUT; a bad value is a usage error naming it', async (t) => {
  const url = await serveStub(t, () => {});
  const dir = await makeWorkspace(t);
  const cli = runCli(t, ['--server-url', url, 'want', 'list'], dir, { PLATFORM_REQUEST_TIMEOUT: '300ms' });
  const { code } = await cli.exited;
  t.is(code, 1);
  t.regex(cli.stderr(), /sent nothing for 300 ms in answer to GET \/api\/wants/);
  // A bad value is a usage error before anything runs, even with a workspace daemon to probe.
  const bad = runCli(t, ['want', 'list'], dir, { PLATFORM_REQUEST_TIMEOUT: 'soon' });
  t.is((await bad.exited).code, 2);
  t.regex(bad.stderr(), /PLATFORM_REQUEST_TIMEOUT must be a duration like 90, 90s, 5m, 3h or 1d; got 'soon'/);
});

test('a command never touches node\'s fetch (undici) while it builds, lists, reads logs and follows', async (t) => {
  const f = await startServer(t);
  const dir = await makeWorkspace(t, 'platform-nofetch-');
  const marks = join(dir, 'undici-touched');
  writeFileSync(marks, '');
  // Preloaded into the CLI: it says it was loaded, then writes down any read of fetch, Response, Headers or Request.
  const preload = join(dir, 'watch-undici.mjs');
  writeFileSync(
    preload,
    `import { appendFileSync } from 'node:fs';\n` +
      `appendFileSync(${JSON.stringify(marks)}, 'loaded\\n');\n` +
      `for (const name of ['fetch', 'Response', 'Headers', 'Request']) {\n` +
      `  const d = Object.getOwnPropertyDescriptor(globalThis, name);\n` +
      `  Object.defineProperty(globalThis, name, { configurable: true, get() { appendFileSync(${JSON.stringify(marks)}, name + '\\n'); return d.get ? d.get.call(globalThis) : d.value; } });\n` +
      `}\n`,
  );
  const env = { NODE_OPTIONS: `--import ${preload}` };
  const build = runCli(t, ['--server-url', f.url, 'build', 'ok/nofetch'], REPO_ROOT, env);
  t.is((await build.exited).code, 0, build.stderr());
  const list = runCli(t, ['--server-url', f.url, 'want', 'list', '--json'], REPO_ROOT, env);
  t.is((await list.exited).code, 0, list.stderr());
  const listed = (JSON.parse(list.stdout()) as { data: Array<{ want_id: string; partitions: string[] }> }).data;
  t.true(listed.some((w) => w.partitions.includes('ok/nofetch')), 'the list holds the want the build made');
  const runs = runCli(t, ['--server-url', f.url, 'job-runs', 'list', '--json'], REPO_ROOT, env);
  t.is((await runs.exited).code, 0, runs.stderr());
  const jobRun = (JSON.parse(runs.stdout()) as { data: Array<{ job_run_id: string }> }).data[0]!.job_run_id;
  const logs = runCli(t, ['--server-url', f.url, 'logs', jobRun, '-f'], REPO_ROOT, env);
  t.is((await logs.exited).code, 0, logs.stderr());
  // Each of the four commands loaded the watcher, and none read any of the four.
  t.is(readFileSync(marks, 'utf8'), 'loaded\n'.repeat(4));
});

test('the bundle a command loads first holds none of the daemon\'s packages: they come in chunks loaded on use', (t) => {
  const bundle = join(REPO_ROOT, 'dist', 'lib', 'bundle');
  const seen = new Set<string>();
  const visit = (file: string): void => {
    if (seen.has(file)) return;
    seen.add(file);
    const text = readFileSync(join(bundle, file), 'utf8');
    // Static imports only: `import ... from "./x.js"` at the top of a file (import() of a chunk is loaded on use).
    for (const m of text.matchAll(/^import\s[^;]*?from\s*"\.\/([^"]+)";?$/gm)) visit(m[1]!);
    for (const m of text.matchAll(/^import\s*"\.\/([^"]+)";?$/gm)) visit(m[1]!);
  };
  visit('main.js');
  t.true(seen.size > 1, `main.js imports chunks: ${[...seen].join(', ')}`);
  const loaded = [...seen].map((f) => readFileSync(join(bundle, f), 'utf8')).join('\n');
  // esbuild names every module it bundles in a comment: the CLI's own code is there, the daemon's is not.
  t.regex(loaded, /\/\/ (?:dist\/)?lib\/cli\/commands\/want-command\.js/);
  for (const heavy of ['node_modules/luxon/', 'node_modules/cron-parser/', 'node_modules/protobufjs/', 'node_modules/express/', 'node_modules/rxjs/dist/cjs/', 'lib/state/reduce.js', 'lib/events/event-log.js']) {
    t.false(loaded.includes(`// ${heavy}`) || loaded.includes(`// dist/${heavy}`), `${heavy} is loaded by every command`);
  }
  t.false(/from\s*"classic-level"/.test(loaded), 'classic-level is loaded by every command');
});
