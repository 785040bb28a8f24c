/** A job log that cannot be read is a fault in the server's log, not taken for a reader that left. */
import test from 'ava';
import { mkdirSync, rmSync } from 'node:fs';
import { createWant, sleep, startServer, waitForWant } from './helpers/server-fixture.js';

test("a log download whose read fails (EISDIR) leaves the fault in the server's log", async (t) => {
  const graph = { jobs: [{ label: 'small', outputs: ['small'], exec: ['sh', '-c', 'echo hi'] }] };
  const f = await startServer(t, { graph });
  const want = await waitForWant(f, await createWant(f, ['small']), ['successful']);
  const runId = (want as { job_run_ids: string[] }).job_run_ids[0]!;
  const file = f.platform.logPath(runId, 'stdout');
  rmSync(file, { force: true });
  mkdirSync(file); // opens, but every read fails
  await fetch(`${f.url}/api/job_runs/${runId}/logs/stdout`).then((r) => r.text()).catch(() => undefined);
  await sleep(300);
  t.true(f.errorLines.some((l) => l.includes('EISDIR')), `server log: ${JSON.stringify(f.errorLines)}`);
});
