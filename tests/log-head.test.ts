/**
 * HEAD of a run's log answers what a GET would send, by its size, without reading the log: a link checker's or
 * `curl -I`'s HEAD of a log of 300 MB read all of it (1.3 s) to send nothing, and said no length. A real server,
 * event log and job process in a temp workspace.
 */
import test from 'ava';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { createWant, rawRequest, startServer, waitForWant } from './helpers/server-fixture.js';

const GRAPH = {
  max_concurrent_job_runs: 2,
  jobs: [{ label: 'big', outputs: ['big/(?<n>\\d+)'], exec: ['bash', '-c', 'seq 1 200000'] }],
};

test("HEAD of a run's log says the length a GET would send (the whole log, or its tail), and sends nothing", async (t) => {
  const f = await startServer(t, { graph: GRAPH });
  const want = await waitForWant(f, await createWant(f, ['big/1']), ['successful']);
  const run = want.job_run_ids[0] as string;
  const size = statSync(join(f.dir, '.platform', 'logs', run, 'stdout.log')).size;
  const head = await rawRequest(`${f.url}/api/job_runs/${run}/logs/stdout`, { method: 'HEAD' });
  t.is(head.status, 200);
  t.is(head.headers['content-length'], String(size), 'the whole log');
  t.is(head.body, '');
  const get = await rawRequest(`${f.url}/api/job_runs/${run}/logs/stdout?tail=3`);
  const tail = await rawRequest(`${f.url}/api/job_runs/${run}/logs/stdout?tail=3`, { method: 'HEAD' });
  t.is(tail.headers['content-length'], String(Buffer.byteLength(get.body)), 'its last 3 lines');
  t.is(get.body, '199998\n199999\n200000\n');
});
