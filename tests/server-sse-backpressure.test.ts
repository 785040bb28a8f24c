/** An SSE client that stops reading holds the server's backlog reading back; when it reads again it gets it all. */
import test from 'ava';
import { connect } from 'node:net';
import type { EventPayload } from '../lib/events/build-event.js';
import { MAX_UNREAD_BYTES } from '../lib/server/sse.js';
import { sleep, startServer } from './helpers/server-fixture.js';

const EVENTS = 60_000;

/**
 * Waits until `done`, for as long as the stream makes progress (`received` grows): how fast megabytes go through a
 * loaded machine is no fixed time (under load these reads took 60-65 % of the 10 and 15 s they were given in all), so
 * only a stream that stops moving for `stallMs` ends the wait early, and the assertions after it say what is missing.
 */
async function whileProgressing(done: () => boolean, received: () => number, stallMs = 5_000): Promise<void> {
  let last = received();
  let movedAt = Date.now();
  while (!done()) {
    await sleep(50);
    const now = received();
    if (now !== last) {
      last = now;
      movedAt = Date.now();
    } else if (Date.now() - movedAt > stallMs) return;
  }
}

test('a stream from event 0 reads the log only as fast as the client takes it, and loses nothing', async (t) => {
  const f = await startServer(t);
  const payload = (i: number): EventPayload => ({ type: 'want_canceled', want_canceled: { want_id: `w-${i}`, reason: 'x'.repeat(200) } });
  for (let i = 0; i < EVENTS; i += 5000) {
    await f.platform.log.append(Array.from({ length: 5000 }, (_, k) => payload(i + k)), Date.now());
  }
  // Count the pages the stream reads from the log.
  const log = f.platform.log;
  const list = log.list.bind(log);
  let pages = 0;
  log.list = (offset, limit) => {
    pages++;
    return list(offset, limit);
  };

  const port = new URL(f.url).port;
  const socket = connect(Number(port), '127.0.0.1');
  t.teardown(() => socket.destroy());
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  socket.pause(); // a client that does not read
  socket.write(`GET /api/events/stream?after=0 HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
  await sleep(1500);
  const whilePaused = pages;
  t.true(whilePaused < 20, `read ${whilePaused} of ${EVENTS / 1000} pages for a client that read nothing`);

  let text = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => (text += chunk));
  socket.resume();
  const lastId = `id: ${EVENTS}\n`;
  await whileProgressing(() => text.includes(lastId), () => text.length);
  const ids = [...text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
  t.is(ids.length, EVENTS);
  t.true(ids.every((id, i) => id === i + 1), 'every event once, in order');
  t.true(pages >= EVENTS / 1000, 'the rest was read once the client read');
});

test("a live burst larger than a socket may hold (one step's events) does not end a client's stream: it goes on from the log, every event once, then live again", async (t) => {
  const f = await startServer(t);
  const port = new URL(f.url).port;
  const socket = connect(Number(port), '127.0.0.1');
  t.teardown(() => socket.destroy());
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  let text = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => (text += chunk));
  socket.write(`GET /api/events/stream HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
  for (let i = 0; i < 100 && !text.includes('\r\n\r\n'); i++) await sleep(20);
  // 3,000 events of 4 KB in one append: 12 MB written to the socket in one turn, more than MAX_UNREAD_BYTES.
  const burst = 3000;
  const payload = (i: number): EventPayload => ({ type: 'want_canceled', want_canceled: { want_id: `w-${i}`, reason: 'x'.repeat(4096) } });
  await f.platform.log.append(Array.from({ length: burst }, (_, k) => payload(k)), Date.now());
  const has = (id: number) => text.includes(`id: ${id}\n`);
  await whileProgressing(() => has(burst), () => text.length);
  await f.platform.log.append([payload(burst)], Date.now());
  for (let i = 0; i < 100 && !has(burst + 1); i++) await sleep(50);
  const ids = [...text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
  t.is(ids.length, burst + 1, `the stream had ${ids.length} events`);
  t.true(ids.every((id, i) => id === i + 1), 'every event once, in order');
});

test('clients that stopped reading hold at most MAX_UNREAD_BYTES each in the server through a burst (platform_sse_unread_bytes says how much), and lose nothing when they read again', async (t) => {
  const f = await startServer(t);
  const port = new URL(f.url).port;
  const clients = 8;
  const sockets = await Promise.all(
    Array.from({ length: clients }, async () => {
      const socket = connect(Number(port), '127.0.0.1');
      t.teardown(() => socket.destroy());
      await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
      socket.pause();
      socket.write(`GET /api/events/stream HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
      return socket;
    }),
  );
  // Every stream open, so each starts before the burst: a request the server had not yet read when the burst came
  // would start after it, and get none of it (seen in CI, where 300 ms was not always enough).
  const open = async () => Number(/^platform_sse_clients (\d+)$/m.exec(await (await f.api('/metrics')).text())?.[1]);
  for (let i = 0; i < 200 && (await open()) < clients; i++) await sleep(25);
  t.is(await open(), clients);
  // 3,000 events of 4 KB: 12 MB for each client, none of which reads.
  const burst = 3000;
  const payload = (i: number): EventPayload => ({ type: 'want_canceled', want_canceled: { want_id: `w-${i}`, reason: 'x'.repeat(4096) } });
  await f.platform.log.append(Array.from({ length: burst }, (_, k) => payload(k)), Date.now());
  // Until every stream is held at its cap (12 MB is more than the kernel's buffers take for a client that reads nothing).
  let metrics = '';
  let unread = 0;
  for (let i = 0; i < 100 && unread < clients * MAX_UNREAD_BYTES; i++) {
    await sleep(50);
    metrics = await (await f.api('/metrics')).text();
    unread = Number(/^platform_sse_unread_bytes (\d+)$/m.exec(metrics)?.[1]);
  }
  t.is(/^platform_sse_clients (\d+)$/m.exec(metrics)?.[1], String(clients));
  // Each stream stops writing once past the cap: at most the cap and the frame that crossed it.
  t.true(unread > 0 && unread <= clients * (MAX_UNREAD_BYTES + 8192), `${unread} bytes held for ${clients} clients`);
  const texts = sockets.map((socket) => {
    const got = { text: '' };
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (got.text += chunk));
    socket.resume();
    return got;
  });
  for (let i = 0; i < 1200 && !texts.every((x) => x.text.includes(`id: ${burst}\n`)); i++) await sleep(50);
  for (const { text } of texts) {
    const ids = [...text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
    t.is(ids.length, burst);
    t.true(ids.every((id, i) => id === i + 1), 'every event once, in order');
  }
});
