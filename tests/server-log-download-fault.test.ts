/** A job log that cannot be read is a fault in the server's log, not taken for a reader that left. */
import test from 'ava';
import { mkdirSync, rmSync } from 'node:fs';
import { sleep, startServer } from './helpers/server-fixture.js';

test("a log download whose read fails (EISDIR) leaves the fault in the server's log", async (t) => {
  const graph = { jobs: [{ label: 'small', outputs: ['small'], exec: ['sh', '-c', 'echo hi'] }] };
  const f = await startServer(t, { graph });
  const made = await f.platform.createWant({ partitions: ['small'], comment: '', data_timestamp: 0, ttl_seconds: 0, sla_seconds: 0 });
  if (!made.ok) return t.fail(made.error);
  for (let i = 0; i < 200 && f.platform.state().wants.get(made.want_id)?.status !== 'successful'; i++) await sleep(50);
  const runId = f.platform.state().wants.get(made.want_id)!.job_run_ids[0]!;
  const file = f.platform.logPath(runId, 'stdout');
  rmSync(file, { force: true });
  mkdirSync(file); // opens, but every read fails
  await fetch(`${f.url}/api/job_runs/${runId}/logs/stdout`).then((r) => r.text()).catch(() => undefined);
  await sleep(300);
  t.true(f.errorLines.some((l) => l.includes('EISDIR')), `server log: ${JSON.stringify(f.errorLines)}`);
});
