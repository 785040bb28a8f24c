/**
 * Priorities with real processes and one run at a time: an interactive want made while a big low-priority want
 * waits for capacity gets its run started next (the event order proves it), its derived wants carry its priority,
 * and the launch order survives a restart.
 */
import { listArray } from '../lib/state/append-list.js';
import test from 'ava';
import { bash, makeWorkspace, openPlatform, waitFor, waitForWant } from './helpers/jobs-fixture.js';

const graph = {
  max_concurrent_job_runs: 1,
  jobs: [
    { label: 'bulk', outputs: ['bulk/(?<n>\\d+)'], exec: bash('sleep 0.05') },
    { label: 'raw', outputs: ['raw/(?<n>\\d+)'], exec: bash('sleep 0.05') },
    { label: 'report', outputs: ['report/(?<n>\\d+)'], inputs: [{ partition_ref: 'raw/${n}', dep_type: 'MATERIALIZE' }], exec: bash('true') },
  ],
};

const request = (partitions: string[], priority: number) => ({ partitions, comment: '', data_timestamp: 0, ttl_seconds: 0, sla_seconds: 0, priority });

test('a higher-priority want made while 20 runs wait starts before all of them; its derived wants carry its priority', async (t) => {
  const dir = makeWorkspace(t);
  const platform = await openPlatform(t, dir, graph);
  const bulk = await platform.createWant(request(Array.from({ length: 20 }, (_, i) => `bulk/${i}`), 0));
  if (!bulk.ok) return t.fail(bulk.error);
  await waitFor(platform, (s) => s.job_runs_by_status.running.size === 1, 'the first bulk run to start');
  const urgent = await platform.createWant(request(['report/1'], 10));
  if (!urgent.ok) return t.fail(urgent.error);
  const afterUrgent = platform.log.latestId();
  await waitForWant(platform, urgent.want_id, ['successful'], 20_000);
  const s = platform.state();
  const derived = listArray(s.wants.get(urgent.want_id)!.child_want_ids).map((id) => s.wants.get(id)!);
  t.deepEqual(derived.map((w) => w.priority), [10], 'the derived want for raw/1 has its root priority');

  // From the urgent want on, the runs that started: raw/1 and report/1 come before any bulk run still waiting.
  const events = await platform.log.list(afterUrgent, 10_000);
  const started = events.flatMap((e) => (e.type === 'job_run_started' ? [s.job_runs.get(e.job_run_started.job_run_id)!.config.outputs[0]!] : []));
  const firstBulk = started.findIndex((ref) => ref.startsWith('bulk/'));
  t.true(started.indexOf('raw/1') >= 0 && started.indexOf('report/1') >= 0);
  t.true(firstBulk === -1 || (started.indexOf('raw/1') < firstBulk && started.indexOf('report/1') < firstBulk), `order: ${started.join(', ')}`);
  t.is(s.job_runs.get(listArray(s.wants.get(urgent.want_id)!.job_run_ids)[0]!)!.priority, 10);
  await waitForWant(platform, bulk.want_id, ['successful'], 30_000);
});
