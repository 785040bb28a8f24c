/** The HTTP client pieces on their own: SSE parsing and streaming, 503 retries, error translation. */
import test from 'ava';
import { firstValueFrom, lastValueFrom, take, toArray } from 'rxjs';
import { ClientError, PlatformClient } from '../lib/client/platform-client.js';
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectServer, NoServerError } from '../lib/client/server-connection.js';
import { SseParser, sseStream } from '../lib/client/sse-client.js';
import { closedPort, serveStub } from './helpers/http-stub.js';
import { cliAgainst } from './helpers/cli-against.js';

test('SseParser: fields, comments, multi-line data, ids that persist, any line ending, any chunking', (t) => {
  const text =
    '\ufeff: a comment\nevent: job_run_started\nid: 7\ndata: {"a":1}\n\n' +
    'data: line one\r\ndata: line two\r\n\r\n' +
    'event: log\rdata:\rdata:no space\r\r' +
    'retry: 100\nid\ndata: after a reset id\n\n' +
    'data: incomplete at the end';
  const expected = [
    { event: 'job_run_started', id: '7', data: '{"a":1}' },
    { event: 'message', id: '7', data: 'line one\nline two' },
    { event: 'log', id: '7', data: '\nno space' },
    { event: 'message', id: undefined, data: 'after a reset id' },
  ];
  const whole = new SseParser();
  t.deepEqual(whole.push(text), expected);
  // One character at a time gives the same messages (a \r\n split across chunks is one line end).
  const bytewise = new SseParser();
  const got = [...text].flatMap((c) => bytewise.push(c));
  t.deepEqual(got, expected);
  // An empty `data:` line is a message with empty data (an empty log line must survive).
  t.deepEqual(new SseParser().push('event: log\ndata: \n\n'), [{ event: 'log', id: undefined, data: '' }]);
  // A block without data dispatches nothing.
  t.deepEqual(new SseParser().push('event: x\nid: 3\n\n'), []);
});

test('sseStream emits messages as they come, sends Last-Event-ID, and completes when the server ends the stream', async (t) => {
  let lastEventId: string | undefined;
  const url = await serveStub(t, (req, res) => {
    lastEventId = req.headers['last-event-id'] as string | undefined;
    res.writeHead(200, { 'Content-Type': 'text/event-stream' });
    res.write('id: 5\nevent: a\ndata: first\n\n');
    setTimeout(() => {
      res.write(': heartbeat\n\nid: 6\nevent: b\nda');
      setTimeout(() => res.end('ta: second\n\n'), 30);
    }, 30);
  });
  const messages = await lastValueFrom(sseStream(`${url}/stream`, { lastEventId: 4 }).pipe(toArray()));
  t.is(lastEventId, '4');
  t.deepEqual(messages, [
    { event: 'a', id: '5', data: 'first' },
    { event: 'b', id: '6', data: 'second' },
  ]);
});

test('unsubscribing from an endless stream aborts the request', async (t) => {
  let closed!: () => void;
  const requestClosed = new Promise<void>((resolve) => (closed = resolve));
  const url = await serveStub(t, (req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/event-stream' });
    res.write('data: one\n\n');
    res.on('close', () => closed());
  });
  const first = await firstValueFrom(sseStream(url).pipe(take(1)));
  t.is(first.data, 'one');
  await requestClosed;
  t.pass();
});

test('a write answered 503 is retried after Retry-After until it succeeds; a read is not', async (t) => {
  const seen: string[] = [];
  let posts = 0;
  const url = await serveStub(t, (req, res, body) => {
    seen.push(`${req.method} ${req.url}`);
    if (req.method === 'POST' && ++posts < 3) {
      res.writeHead(503, { 'Content-Type': 'application/json', 'Retry-After': '0' });
      res.end(JSON.stringify({ error: 'The orchestrator has 100 commands waiting; try again in a moment.' }));
      return;
    }
    if (req.method === 'POST') {
      const parsed = JSON.parse(body) as { partitions: string[] };
      res.writeHead(201, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ want_id: 'w-1', want: { want_id: 'w-1', partitions: parsed.partitions } }));
      return;
    }
    res.writeHead(503, { 'Content-Type': 'application/json', 'Retry-After': '0' });
    res.end(JSON.stringify({ error: 'busy' }));
  });
  const retries: number[] = [];
  const client = new PlatformClient(url, { onRetry: (i) => retries.push(i.delayMs) });
  const reply = await client.createWant({ partitions: ['a/b'] });
  t.is(reply.want_id, 'w-1');
  t.deepEqual(reply.want.partitions, ['a/b']);
  t.is(posts, 3);
  t.deepEqual(retries, [0, 0]);
  const err = await t.throwsAsync(client.getWant('w-1'), { instanceOf: ClientError });
  t.is(err.status, 503);
  t.is(err.message, 'busy');
  t.is(seen.filter((s) => s.startsWith('GET')).length, 1);
});

test('retries give up after the policy allows and surface the 503', async (t) => {
  let posts = 0;
  const url = await serveStub(t, (_req, res) => {
    posts++;
    res.writeHead(503, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ error: 'full' }));
  });
  const client = new PlatformClient(url, { retry: { maxAttempts: 3, baseDelayMs: 1 } });
  const err = await t.throwsAsync(client.cancelWant('w-1'), { instanceOf: ClientError });
  t.is(err.status, 503);
  t.is(posts, 3);
});

test("HTTP errors carry the status and the server's message; Connect errors their code", async (t) => {
  const url = await serveStub(t, (req, res) => {
    if (req.url?.startsWith('/platform.v1.PlatformService/')) {
      res.writeHead(400, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ code: 'invalid_argument', message: 'No job produces ref "x".' }));
      return;
    }
    if (req.url === '/api/wants/w-9') {
      res.writeHead(404, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ error: "No want with id 'w-9'.", want_id: 'w-9' }));
      return;
    }
    res.writeHead(502, { 'Content-Type': 'text/html' });
    res.end('<html>bad gateway</html>');
  });
  const client = new PlatformClient(url);
  const notFound = await t.throwsAsync(client.getWant('w-9'), { instanceOf: ClientError });
  t.is(notFound.status, 404);
  t.is(notFound.message, "No want with id 'w-9'.");
  t.is(notFound.wantId, 'w-9');
  const rpc = await t.throwsAsync(client.analyzeGraph(['x']), { instanceOf: ClientError });
  t.is(rpc.status, 400);
  t.is(rpc.code, 'invalid_argument');
  t.is(rpc.message, 'No job produces ref "x".');
  const odd = await t.throwsAsync(client.listJobRuns(), { instanceOf: ClientError });
  t.is(odd.status, 502);
  t.is(odd.message, `The server at ${url} is not a platform daemon (GET /api/job_runs answered 502 text/html); check --server-url.`);
  const sse = await t.throwsAsync(lastValueFrom(client.followLog('r-1')), { instanceOf: ClientError });
  t.is(sse.status, 502);
});

test('a URL where some other server answers (a page of HTML, not JSON) is named in one line as not a daemon, not printed whole', async (t) => {
  const page = `<!DOCTYPE HTML>\n<html lang="en">\n<head><title>Error response</title></head>\n<body><h1>Error response</h1>${'<p>filler</p>\n'.repeat(50)}</body></html>\n`;
  const url = await serveStub(t, (req, res) => {
    // A 200 page of HTML for one path: an SPA's dev server answers every path so.
    res.writeHead(req.url?.startsWith('/api/backfills') ? 200 : 404, { 'Content-Type': 'text/html;charset=utf-8' });
    res.end(page);
  });
  const client = new PlatformClient(url);
  const expected = (what: string) => `The server at ${url} is not a platform daemon (${what}); check --server-url.`;
  const list = await t.throwsAsync(client.listWants({ limit: 5 }), { instanceOf: ClientError });
  t.is(list.message, expected('GET /api/wants answered 404 text/html'));
  t.is(list.status, 404);
  t.is((await t.throwsAsync(client.listBackfills(), { instanceOf: ClientError })).message, expected('GET /api/backfills answered 200 text/html'));
  t.is((await t.throwsAsync(client.createWant({ partitions: ['a'] }), { instanceOf: ClientError })).message, expected('POST /api/wants answered 404 text/html'));
  t.is((await t.throwsAsync(client.analyzeGraph(['a']), { instanceOf: ClientError })).message, expected('POST /platform.v1.PlatformService/AnalyzeGraph answered 404 text/html'));
  t.is((await t.throwsAsync(lastValueFrom(client.eventStream({ after: 0 })), { instanceOf: ClientError })).message, expected('GET /api/events/stream answered 404 text/html'));
  // A discovered daemon's port taken by another program: said so, with the daemon's log.
  const found = new PlatformClient(url, { daemon: { pid: 4242, logPath: '/ws/.platform/server.log' } });
  t.is(
    (await t.throwsAsync(found.listWants(), { instanceOf: ClientError })).message,
    `The server at ${url} is not a platform daemon (GET /api/wants answered 404 text/html); the workspace server (pid 4242) found in ` +
      '.platform/server.json may have shut down and another program taken its port; see /ws/.platform/server.log.',
  );
  // The CLI says the one line, as text and in --json.
  const cli = cliAgainst(() => url);
  const plain = await cli('want', 'list');
  t.is(plain.code, 1);
  t.is(plain.stderr, `platform: ${expected('GET /api/wants answered 404 text/html')}\n`);
  const json = await cli('--json', 'want', 'list');
  t.is(json.code, 1);
  t.like(JSON.parse(json.stdout || json.stderr), { error: expected('GET /api/wants answered 404 text/html'), exit_code: 1, status: 404 });
});

test('a refused connection is a NoServerError naming the URL, for requests and streams alike', async (t) => {
  const url = `http://127.0.0.1:${await closedPort()}`;
  const client = new PlatformClient(url);
  const err = await t.throwsAsync(client.listWants(), { instanceOf: NoServerError });
  t.is(err.message, `No server at ${url}: nothing is listening there (connection refused). Start the daemon with 'platform serve', or check --server-url.`);
  await t.throwsAsync(client.createWant({ partitions: ['a'] }), { instanceOf: NoServerError });
  await t.throwsAsync(lastValueFrom(client.eventStream({ after: 0 })), { instanceOf: NoServerError, message: /^No server at http/ });
  t.false(await client.health());
});

test('a discovered daemon that does not answer is named in the error, with its pid and log', async (t) => {
  const url = `http://127.0.0.1:${await closedPort()}`;
  const client = new PlatformClient(url, { daemon: { pid: 4242, logPath: '/ws/.platform/server.log' } });
  const err = await t.throwsAsync(client.listWants(), { instanceOf: NoServerError });
  t.is(
    err.message,
    `No server at ${url}: nothing is listening there (connection refused). It is the workspace server (pid 4242) found in ` +
      `.platform/server.json: it may have shut down or crashed; see /ws/.platform/server.log. The next command starts a new one if it is gone.`,
  );
  t.is(err.url, url);
  const sse = await t.throwsAsync(lastValueFrom(client.eventStream({ after: 0 })), { instanceOf: NoServerError });
  t.regex(sse.message, /pid 4242/);
});

test('without auto-start, no server for a workspace names the workspace, not a URL', async (t) => {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'platform-client-')));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  mkdirSync(join(root, '.platform'));
  const err = await t.throwsAsync(connectServer({ workspace: root, autoStart: false }), { instanceOf: NoServerError });
  t.is(err.url, undefined);
  t.true(err.message.startsWith(`No server running for ${root}: no .platform/server.json. `), err.message);
  t.notRegex(err.message, /No server at/);
});
