/**
 * A stopping server closes its listening socket once no connection came for a moment, and a connection once it has been
 * quiet for a grace; the kernel resets what is still in the socket's accept queue at the first, and a connection whose
 * request waits unread at the second. What came while the server's event loop was busy (a loaded machine, the stop's
 * own work) waits unseen: neither may be decided before the loop has looked. Here the loop is held (this process busy)
 * while a client in another process connects and sends its request, or sends it on a kept-alive connection, as a loaded
 * daemon's was when `platform want create` racing a stop was reset (daemon-stop's racing test, under load).
 */
import test, { type ExecutionContext } from 'ava';
import { spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { stoppingConnections } from '../lib/server/stopping-connections.js';
import { makeWorkspace } from './helpers/jobs-fixture.js';

/**
 * A client in its own process. `fresh`: once `go` exists it connects and sends a POST. `kept`: it first connects and
 * has a GET answered (the connection kept alive, it says `kept`), then once `go` exists sends the POST on it. It says
 * when it sent (the file `sent`), and prints what came back.
 */
const CLIENT = `
const { connect } = require('node:net');
const { existsSync, writeFileSync } = require('node:fs');
const [port, mode, go, sent] = process.argv.slice(1);
const body = '{"partitions":["s/1"]}';
const post = 'POST /api/wants HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nContent-Type: application/json\\r\\nContent-Length: ' + body.length + '\\r\\n\\r\\n' + body;
let socket;
let text = '';
let error;
const report = () => process.stdout.write(JSON.stringify({ text, error }) + '\\n');
const whenGo = (then) => {
  const wait = setInterval(() => {
    if (!existsSync(go)) return;
    clearInterval(wait);
    then();
  }, 5);
};
const send = () => {
  socket.write(post);
  writeFileSync(sent, '');
};
if (mode === 'fresh') {
  process.stdout.write('ready\\n');
  whenGo(() => {
    socket = connect(Number(port), '127.0.0.1', send);
    socket.on('data', (c) => (text += c.toString()));
    socket.on('error', (e) => (error = e.code));
    socket.on('close', report);
  });
} else {
  socket = connect(Number(port), '127.0.0.1', () => socket.write('GET /health HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\n\\r\\n'));
  socket.on('error', (e) => (error = e.code));
  socket.once('data', (c) => {
    if (!c.toString().startsWith('HTTP/1.1 200')) return process.stdout.write(JSON.stringify({ text: c.toString() }) + '\\n');
    process.stdout.write('ready\\n');
    socket.on('data', (d) => (text += d.toString()));
    socket.on('close', report);
    whenGo(send);
  });
}
`;

/** A stopping server on a free port, the client of `mode` in its own process once it is ready, and what came back to it. */
async function race(t: ExecutionContext, mode: 'fresh' | 'kept', busyPast: (stoppedAt: number) => number) {
  const dir = makeWorkspace(t);
  const server = createServer();
  const connections = stoppingConnections(server);
  let carriedOut = 0;
  server.on(
    'request',
    connections.listener((req, res) => {
      if (req.url !== '/health') carriedOut++;
      res.end('{}');
    }),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => void server.closeAllConnections());
  const { port } = server.address() as AddressInfo;
  const [go, sent] = [join(dir, 'go'), join(dir, 'sent')];
  const client = spawn(process.execPath, ['-e', CLIENT, String(port), mode, go, sent], { stdio: ['ignore', 'pipe', 'inherit'] });
  t.teardown(() => void client.kill('SIGKILL'));
  let out = '';
  const said = (what: RegExp): Promise<string> =>
    new Promise((resolve, reject) => {
      const look = (): void => {
        const m = what.exec(out);
        if (m) resolve(m[0]);
      };
      client.stdout!.on('data', (c: Buffer) => ((out += c.toString()), look()));
      client.once('exit', () => (look(), reject(new Error(`the client ended: ${out}`))));
      look();
    });
  await said(/^ready$/m);

  const stoppedAt = Date.now();
  const stopped = connections.stop(1_000, 10_000);
  // This process busy (as a daemon's loop is, at its stop on a loaded machine) while the client sends: what it sent
  // waits unseen, in the accept queue or in its connection.
  writeFileSync(go, '');
  const until = Date.now() + 20_000;
  while (!existsSync(sent) && Date.now() < until) {
    // busy
  }
  t.true(existsSync(sent), 'the client sent its request while the server was busy');
  const past = busyPast(stoppedAt);
  while (Date.now() < past) {
    // busy
  }
  const answer = JSON.parse(await said(/^\{.*\}$/m)) as { text: string; error?: string };
  await stopped;
  return { answer, carriedOut, listening: server.listening };
}

test.serial('a connection that waits in the accept queue while the stopping server is busy is answered 503, not reset by the close of its listening socket', async (t) => {
  // Busy a while longer than the listening socket's quiet moment.
  const { answer, carriedOut, listening } = await race(t, 'fresh', () => Date.now() + 400);
  t.is(answer.error, undefined, `reset: ${JSON.stringify(answer)}`);
  t.regex(answer.text, /^HTTP\/1\.1 503/);
  t.true((JSON.parse(answer.text.slice(answer.text.indexOf('\r\n\r\n') + 4)) as { stopping: boolean }).stopping, answer.text);
  t.is(carriedOut, 0, 'nothing read after the stop is carried out');
  t.false(listening, 'the server stopped listening once no connection came');
});

test.serial('a request sent on a kept-alive connection while the stopping server is busy past its grace is answered 503, not reset as a quiet connection', async (t) => {
  // Busy until the connection's grace (1 s from the stop) is over by a while.
  const { answer, carriedOut, listening } = await race(t, 'kept', (stoppedAt) => Math.max(Date.now(), stoppedAt + 1_000) + 400);
  t.is(answer.error, undefined, `reset: ${JSON.stringify(answer)}`);
  t.regex(answer.text, /^HTTP\/1\.1 503/);
  t.true((JSON.parse(answer.text.slice(answer.text.indexOf('\r\n\r\n') + 4)) as { stopping: boolean }).stopping, answer.text);
  t.is(carriedOut, 0, 'nothing read after the stop is carried out');
  t.false(listening);
});
