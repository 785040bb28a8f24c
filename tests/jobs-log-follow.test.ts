/**
 * Following a job run's log over SSE with real processes and a real server: a 20 MB log reaches a reader that
 * reads nothing until the run is over, whole and once, with its `end` (the server reads the file as the socket
 * drains, where it used to queue the log and cut the stream at its cap on unread bytes); `tail` starts a follow
 * near the end; each line's `id:` (a byte offset) sent back as Last-Event-ID resumes after that line; a bad one is a 400.
 */
import test, { type ExecutionContext } from 'ava';
import { request, type IncomingMessage } from 'node:http';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SseParser, type SseMessage } from '../lib/client/sse-client.js';
import { FOLLOWED_LINE_BYTES } from '../lib/server/log-follow.js';
import { bash, makeWorkspace, openPlatform, poll, runsFor, startServer, waitFor, waitForWant, want } from './helpers/jobs-fixture.js';

const BIG_LINES = 200_000;
/** A line of the big log: its number, zero-padded to 100 digits (101 bytes with its newline: 20.2 MB in all). */
const bigLine = (n: number) => String(n).padStart(100, '0');

const graph = {
  jobs: [
    { label: 'big', outputs: ['big/(?<n>\\d+)'], exec: bash(`seq -f '%0100g' 1 ${BIG_LINES}`) },
    // A progress bar's redraw: a bare CR inside a line, then a line ended CRLF.
    { label: 'cr', outputs: ['cr/(?<n>\\d+)'], exec: bash("printf 'cr\\rafter-cr\\nnext\\r\\n'") },
    // 200,000 empty lines: a 64 KiB read of them is ~2 MiB of frames, past what a stream may hold unread.
    { label: 'blank', outputs: ['blank/(?<n>\\d+)'], exec: bash('yes "" | head -n 200000') },
    // One line of 3 MiB (more than a stream may hold unread), then a short one.
    { label: 'wide', outputs: ['wide/(?<n>\\d+)'], exec: bash("head -c 3145728 /dev/zero | tr '\\0' y; echo; echo after") },
    {
      label: 'gated',
      outputs: ['gated/(?<n>\\d+)'],
      // 100 lines, then two more once the test creates go-<n> (or after 20 s).
      exec: bash('for i in $(seq 1 100); do echo "line $i"; done; for i in $(seq 400); do [ -f "go-$1" ] && break; sleep 0.05; done; echo "line 101"; echo "line 102"'),
      args: ['${n}'],
    },
  ],
};

/**
 * Opens a follow; the answer's body is not read until `read` is called (node's http stops reading the socket when
 * its buffer is full, so until then the server meets a reader that does not read).
 */
function open(url: string, headers: Record<string, string> = {}): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { Accept: 'text/event-stream', ...headers } }, resolve);
    req.on('error', reject);
    req.end();
  });
}

/** Reads the body to its end (or until `stop` says so, then hangs up): the messages, and whether the server ended it. */
async function read(res: IncomingMessage, stop: (m: SseMessage) => boolean = () => false): Promise<{ messages: SseMessage[]; endedByServer: boolean }> {
  const parser = new SseParser();
  const messages: SseMessage[] = [];
  res.setEncoding('utf8');
  for await (const text of res as AsyncIterable<string>) {
    for (const m of parser.push(text)) {
      messages.push(m);
      if (stop(m)) {
        res.destroy();
        return { messages, endedByServer: false };
      }
    }
  }
  return { messages, endedByServer: true };
}

const logs = (messages: SseMessage[]) => messages.filter((m) => m.event === 'log');

async function bodyOf(res: IncomingMessage): Promise<string> {
  res.setEncoding('utf8');
  let text = '';
  for await (const chunk of res as AsyncIterable<string>) text += chunk;
  return text;
}

test('a 20 MB log reaches a reader that reads nothing until the run ended: every line once, each id its offset, then end', async (t) => {
  const dir = makeWorkspace(t);
  const platform = await openPlatform(t, dir, graph);
  const server = await startServer(t, platform);
  const w = await want(platform, ['big/1']);
  const queued = await waitFor(platform, (s) => runsFor(s, 'big/1').length > 0, 'the run of big/1');
  const id = runsFor(queued, 'big/1')[0]!.job_run_id;

  const res = await open(`${server.url}/api/job_runs/${id}/logs/stdout?follow=true`);
  t.is(res.statusCode, 200);
  // The whole log is written, and the run over, before the reader takes its first byte.
  await waitForWant(platform, w, undefined, 30_000);
  const { messages, endedByServer } = await read(res);

  const file = readFileSync(platform.logPath(id, 'stdout'));
  t.is(file.length, BIG_LINES * 101);
  const lines = logs(messages);
  t.is(lines.length, BIG_LINES, `lines that arrived (${lines.length}) of ${BIG_LINES}; the last message: ${JSON.stringify(messages.at(-1))?.slice(0, 200)}`);
  let wrong = 0;
  let badIds = 0;
  lines.forEach((m, i) => {
    if (m.data !== bigLine(i + 1)) wrong++;
    if (m.id !== String((i + 1) * 101)) badIds++;
  });
  t.is(wrong, 0, 'lines out of place, repeated or mangled');
  t.is(badIds, 0, 'ids that are not the byte offset after their line');
  t.deepEqual(messages.at(-1), { event: 'end', id: String(file.length), data: '{"status":"succeeded","exit_code":0,"signal":null}' });
  t.true(endedByServer);
});

test('?follow=true&tail=5 starts at the last 5 lines, then goes on live to the end', async (t) => {
  const dir = makeWorkspace(t);
  const platform = await openPlatform(t, dir, graph);
  const server = await startServer(t, platform);
  const w = await want(platform, ['gated/1']);
  const id = runsFor(await waitFor(platform, (s) => runsFor(s, 'gated/1').length > 0, 'the run of gated/1'), 'gated/1')[0]!.job_run_id;
  const file = platform.logPath(id, 'stdout');
  // All 100 first lines are in the log: the job waits for go-1 before it prints more.
  t.true(await poll(() => readFileSyncOr(file).includes('line 100\n'), 10_000), 'the first 100 lines in the log');

  const res = await open(`${server.url}/api/job_runs/${id}/logs/stdout?follow=true&tail=5`);
  t.is(res.statusCode, 200);
  const { messages } = await read(res, (m) => {
    if (m.data === 'line 100') writeFileSync(join(dir, 'go-1'), '');
    return false;
  });
  t.deepEqual(
    logs(messages).map((m) => m.data),
    ['line 96', 'line 97', 'line 98', 'line 99', 'line 100', 'line 101', 'line 102'],
  );
  t.is(messages.at(-1)!.event, 'end');
  await waitForWant(platform, w);
});

test('Last-Event-ID resumes a follow after the line it names: nothing twice, nothing lost; it wins over tail', async (t) => {
  const dir = makeWorkspace(t);
  const platform = await openPlatform(t, dir, graph);
  const server = await startServer(t, platform);
  const w = await want(platform, ['gated/2']);
  const id = runsFor(await waitFor(platform, (s) => runsFor(s, 'gated/2').length > 0, 'the run of gated/2'), 'gated/2')[0]!.job_run_id;
  const file = platform.logPath(id, 'stdout');
  t.true(await poll(() => readFileSyncOr(file).includes('line 100\n'), 10_000), 'the first 100 lines in the log');
  const url = `${server.url}/api/job_runs/${id}/logs/stdout?follow=true&tail=50`;

  // The connection drops after line 60.
  const first = await read(await open(url), (m) => m.data === 'line 60');
  t.false(first.endedByServer);
  const seen = logs(first.messages);
  t.is(seen[0]!.data, 'line 51');
  const lastId = seen.at(-1)!.id!;
  // The log is ASCII: the offset after line 60 is where line 61 starts.
  t.is(lastId, String(readFileSyncOr(file).indexOf('line 61\n')));

  // EventSource reconnects to the same URL (tail included) with the last id it saw.
  const again = await open(url, { 'Last-Event-ID': lastId });
  t.is(again.statusCode, 200);
  const second = await read(again, (m) => {
    if (m.data === 'line 100') writeFileSync(join(dir, 'go-2'), '');
    return false;
  });
  t.deepEqual(
    [...seen, ...logs(second.messages)].map((m) => m.data),
    Array.from({ length: 52 }, (_, i) => `line ${51 + i}`),
  );
  t.is(second.messages.at(-1)!.event, 'end');
  await waitForWant(platform, w);

  // A reconnect after the last line: nothing more, then the end.
  const last = logs(second.messages).at(-1)!.id!;
  const after = await read(await open(url, { 'Last-Event-ID': last }));
  t.deepEqual(
    after.messages.map((m) => m.event),
    ['end'],
  );
});

test('a bad Last-Event-ID is a 400 that says what it must be', async (t) => {
  const dir = makeWorkspace(t);
  const platform = await openPlatform(t, dir, graph);
  const server = await startServer(t, platform);
  const w = await want(platform, ['gated/3']);
  writeFileSync(join(dir, 'go-3'), '');
  const state = await waitForWant(platform, w);
  const id = runsFor(state, 'gated/3')[0]!.job_run_id;
  const size = readFileSync(platform.logPath(id, 'stdout')).length;
  const url = `${server.url}/api/job_runs/${id}/logs/stdout?follow=true`;
  for (const [header, why] of [
    ['abc', /Last-Event-ID must be a byte offset in the log/],
    ['-1', /Last-Event-ID must be a byte offset in the log/],
    ['1e3', /Last-Event-ID must be a byte offset in the log/],
    ['12345678901234567', /Last-Event-ID must be a byte offset in the log/],
    ['9999999999999999', /Last-Event-ID must be a byte offset up to 9007199254740991/],
    [String(size + 1), new RegExp(`Last-Event-ID ${size + 1} is past the end of this log \\(${size} bytes\\)`)],
    // Inside "line 1": the follow would start with "ne 1" sent as a line.
    ['3', /Last-Event-ID 3 is not the end of a line of this log.*without it/],
  ] as const) {
    const res = await open(url, { 'Last-Event-ID': header });
    const body = await bodyOf(res);
    t.is(res.statusCode, 400, `${header}: ${body}`);
    t.regex((JSON.parse(body) as { error: string }).error, why, header);
  }
  // The end of the log itself is a good id: nothing more to send but the end.
  const atEnd = await read(await open(url, { 'Last-Event-ID': String(size) }));
  t.deepEqual(
    atEnd.messages.map((m) => m.event),
    ['end'],
  );
});

/** Builds `ref` on a fresh daemon and follows its run's stdout to the end: the run's id, the server, the messages. */
async function followedRun(t: ExecutionContext, ref: string) {
  const dir = makeWorkspace(t);
  const platform = await openPlatform(t, dir, graph);
  const server = await startServer(t, platform);
  const state = await waitForWant(platform, await want(platform, [ref]));
  const id = runsFor(state, ref)[0]!.job_run_id;
  const followed = await read(await open(`${server.url}/api/job_runs/${id}/logs/stdout?follow=true`));
  return { id, platform, server, ...followed };
}

test('a line with a bare CR in it reaches a follower whole, the CR a line break (SSE ends a data line there)', async (t) => {
  const { id, platform, messages } = await followedRun(t, 'cr/1');
  t.is(readFileSync(platform.logPath(id, 'stdout'), 'utf8'), 'cr\rafter-cr\nnext\r\n');
  t.deepEqual(
    logs(messages).map((m) => m.data),
    ['cr\nafter-cr', 'next'],
  );
});

test('a line longer than FOLLOWED_LINE_BYTES is followed cut and marked, the follow goes on to the end; the log read whole has it all', async (t) => {
  const { id, server, messages, endedByServer } = await followedRun(t, 'wide/1');
  t.true(endedByServer);
  const lines = logs(messages);
  t.is(lines.length, 2);
  t.is(lines[0]!.data, `${'y'.repeat(FOLLOWED_LINE_BYTES)} … [line cut: 3145728 bytes, followed to ${FOLLOWED_LINE_BYTES}; the log read whole has all of it]`);
  t.is(lines[0]!.id, String(3145728 + 1));
  t.is(lines[1]!.data, 'after');
  t.is(messages.at(-1)!.event, 'end');
  const whole = await (await fetch(`${server.url}/api/job_runs/${id}/logs/stdout`)).text();
  t.is(whole.length, 3145728 + 1 + 6);
});

test('a log of short lines whose frames pass what a stream may hold unread is followed to its end: every line once, then end', async (t) => {
  const { messages, endedByServer } = await followedRun(t, 'blank/1');
  t.true(endedByServer);
  const lines = logs(messages);
  t.is(lines.length, 200_000);
  t.true(lines.every((m, i) => m.data === '' && m.id === String(i + 1)), 'each once, in order, its offset its id');
  t.is(messages.at(-1)!.event, 'end');
});

function readFileSyncOr(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}
