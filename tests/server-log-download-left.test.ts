/** A reader that leaves in the middle of a long job log (a page left, `curl | head`) is no fault of the server's. */
import test from 'ava';
import { connect } from 'node:net';
import { createWant, sleep, startServer, waitForWant } from './helpers/server-fixture.js';

test("a reader that leaves in the middle of a long log leaves no error in the server's log, and the next reader gets it whole", async (t) => {
  const graph = { jobs: [{ label: 'big', outputs: ['big'], exec: ['sh', '-c', 'head -c 20000000 /dev/zero | tr "\\0" x'] }] };
  const f = await startServer(t, { graph });
  const want = await waitForWant(f, await createWant(f, ['big']), ['successful']);
  const runId = (want as { job_run_ids: string[] }).job_run_ids[0]!;
  const port = Number(new URL(f.url).port);
  // Gone after the first bytes, and gone before any (a page left at once: the server has not answered yet).
  for (let i = 0; i < 20; i++) {
    const socket = connect(port, '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.write(`GET /api/job_runs/${runId}/logs/stdout${i % 2 ? '?tail=1' : ''} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
    if (i < 3) await new Promise<void>((resolve) => socket.once('data', () => resolve()));
    socket.resetAndDestroy();
  }
  await sleep(500);
  t.deepEqual(f.errorLines, []);
  const whole = await fetch(`${f.url}/api/job_runs/${runId}/logs/stdout`);
  t.is((await whole.text()).length, 20_000_000);
});
