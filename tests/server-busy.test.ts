/**
 * What the daemon's idle timeout waits on, from real parts: a real node HTTP server on port 0 and a real
 * Platform running a real job. (The timing of the timeout itself is on virtual time in idle-timeout.test.ts.)
 */
import test from 'ava';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Platform, parseGraph } from '../lib/index.js';
import { serverBusy$ } from '../lib/server/server-busy.js';
import { TEST_GRAPH, makeWorkspace, waitFor } from './helpers/server-fixture.js';

test('busy while a request is in flight (until answered or aborted) or a job run is running, quiet otherwise', async (t) => {
  const dir = await makeWorkspace(t);
  const platform = await Platform.open(dir, { graph: parseGraph(TEST_GRAPH, 'test') });
  t.teardown(() => platform.close());

  // Answers each request when the test says so.
  const held: Array<() => void> = [];
  const server = createServer((_req, res) => void held.push(() => res.end('ok')));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;

  const seen: boolean[] = [];
  const sub = serverBusy$(server, platform.state$).subscribe((busy) => seen.push(busy));
  t.teardown(() => sub.unsubscribe());
  const now = async (what: string, busy: boolean) => waitFor(what, () => seen.at(-1) === busy);
  t.deepEqual(seen, [false]);

  // Two requests in flight, answered one after the other: busy until the second is answered.
  const first = fetch(url);
  const second = fetch(url);
  await waitFor('both requests to arrive', () => held.length === 2);
  t.deepEqual(seen, [false, true]);
  held[0]!();
  await (await first).text();
  t.deepEqual(seen, [false, true], 'still busy with the second request');
  held[1]!();
  await (await second).text();
  await now('quiet after the answers', false);

  // A request the client gives up on ends too.
  const abort = new AbortController();
  const gaveUp = fetch(url, { signal: abort.signal }).catch(() => 'aborted');
  await now('busy with the third request', true);
  abort.abort();
  t.is(await gaveUp, 'aborted');
  await now('quiet once it was aborted', false);

  // A job run, from its start to its end.
  const created = await platform.createWant({ partitions: ['slow/a'], comment: '', data_timestamp: 0, ttl_seconds: 0, sla_seconds: 0 });
  if (!created.ok) return t.fail(created.error);
  await now('busy with the running job', true);
  t.true(platform.state().job_runs_by_status.running.size > 0);
  await platform.cancelWant(created.want_id);
  await now('quiet once the run was canceled', false);
  t.deepEqual(seen, [false, true, false, true, false, true, false]);
});

test('an SSE stream counts as activity when it opens, not for as long as it stays open', async (t) => {
  const dir = await makeWorkspace(t);
  const platform = await Platform.open(dir, { graph: parseGraph(TEST_GRAPH, 'test') });
  t.teardown(() => platform.close());
  // Holds every response open, as an event stream does.
  const open: Array<() => void> = [];
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(': hello\n\n');
    open.push(() => res.end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    for (const end of open) end();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const seen: boolean[] = [];
  const sub = serverBusy$(server, platform.state$).subscribe((busy) => seen.push(busy));
  t.teardown(() => sub.unsubscribe());

  const events = await fetch(`${base}/api/events/stream`);
  t.is(events.status, 200);
  const log = await fetch(`${base}/api/job_runs/r-1/logs/stdout?follow=true`);
  t.is(log.status, 200);
  // Each stream was a touch (busy, then quiet at once) and the daemon is quiet while both stay open.
  t.deepEqual(seen, [false, true, false, true, false]);
  t.is(open.length, 2, 'both streams are still open');
});
