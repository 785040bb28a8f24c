/**
 * A request a server did not carry out (it was stopping, or refused the connection) is sent to the next server when
 * the client was given a way to find one (the CLI's: the workspace's next daemon), and only then. Two real servers; the
 * first is stopped under a client that has a kept-alive connection to it.
 */
import test from 'ava';
import { createServer } from 'node:net';
import { PlatformClient, ServerStoppingError, type ServerTarget } from '../lib/client/platform-client.js';
import { startServer } from './helpers/server-fixture.js';

/** A loopback port that nothing listens on (bound, then closed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

test('a write the stopping server did not carry out is made on the next server, once, and the client says why', async (t) => {
  const first = await startServer(t);
  const next = await startServer(t);
  const resends: Array<{ from: string; to: string; reason: string }> = [];
  const client = new PlatformClient(first.url, {
    reconnect: async (): Promise<ServerTarget> => ({ url: next.url }),
    onResend: (r) => resends.push(r),
  });
  await client.listWants(); // a kept-alive connection to the first server
  void first.server.close();
  // Stopping once a fresh connection is answered 503 (or refused).
  for (;;) {
    const r = await fetch(`${first.url}/health`).catch(() => undefined);
    if (r?.status !== 200) break;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  const made = await client.createWant({ partitions: ['ok/resent'] });
  t.is(resends.length, 1, JSON.stringify(resends));
  t.is(resends[0]!.from, first.url);
  t.is(resends[0]!.to, next.url);
  t.regex(resends[0]!.reason, /it was stopping|it refused the connection/);
  t.is(client.baseUrl, next.url, 'later requests go to the next server');
  t.truthy(next.platform.state().wants.get(made.want_id), 'made on the next server');
  t.is(first.platform.state().wants.get(made.want_id), undefined, 'not on the stopping one');
  t.is((await client.getWant(made.want_id)).want_id, made.want_id);
});

test('a refused connection is sent to the next server; without a way to find one the caller gets the error', async (t) => {
  const next = await startServer(t);
  const dead = `http://127.0.0.1:${await closedPort()}`;
  const resends: string[] = [];
  const client = new PlatformClient(dead, { reconnect: async () => ({ url: next.url }), onResend: (r) => resends.push(r.reason) });
  const made = await client.createWant({ partitions: ['ok/refused'] });
  t.deepEqual(resends, ['it refused the connection']);
  t.truthy(next.platform.state().wants.get(made.want_id));

  const plain = new PlatformClient(dead);
  const err = await t.throwsAsync(plain.createWant({ partitions: ['ok/refused2'] }));
  t.regex(err!.message, /connection refused/);
});

test('servers that keep stopping are not chased for ever (three resends), and the same server is not sent to again', async (t) => {
  const a = await startServer(t);
  const b = await startServer(t);
  // Closed, not closing: a server still closing may reset a connection it took, and a reset is never resent (the
  // request may have been carried out), which a loaded machine made the first attempt's fate.
  await Promise.all([a.server.close(), b.server.close()]);
  let reconnects = 0;
  // Each "next" server is the other stopping one (or its closed port): the client gives up after three.
  const client = new PlatformClient(a.url, { reconnect: async () => ({ url: ++reconnects % 2 === 1 ? b.url : a.url }) });
  const err = await t.throwsAsync(client.createWant({ partitions: ['ok/never'] }));
  t.is(reconnects, 3);
  t.true(err instanceof ServerStoppingError || /connection refused/.test(err!.message), err!.message);
  t.is(a.platform.state().wants.size + b.platform.state().wants.size, 0);

  let again = 0;
  const same = new PlatformClient(a.url, { reconnect: async () => (again++, { url: a.url }) });
  await t.throwsAsync(same.createWant({ partitions: ['ok/never'] }));
  t.is(again, 1, 'told the same server again, it stops there');
});

test('when no next server can be reached, the error says the request was not carried out', async (t) => {
  const dead = `http://127.0.0.1:${await closedPort()}`;
  const client = new PlatformClient(dead, {
    reconnect: async () => {
      throw new Error('platform.json is missing');
    },
  });
  const err = await t.throwsAsync(client.createWant({ partitions: ['ok/x'] }));
  t.is(err!.message, 'The request was not carried out (the server refused the connection), and no next server could be reached: platform.json is missing');
});
