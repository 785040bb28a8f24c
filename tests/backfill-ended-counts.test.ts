/**
 * A canceled backfill's counts say nothing builds: the fold stops counting an ended want, so its view read
 * "building 2" (and the CLI's bar "building 2 · 0 running") for runs the cancel had stopped. The real server.
 */
import test from 'ava';
import { startServer, waitFor } from './helpers/server-fixture.js';

test('a canceled backfill counts nothing as building or waiting; what it did not build is pending', async (t) => {
  const f = await startServer(t);
  const created = await f.api('/api/backfills', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"pattern": "slow/{a,b}"}' });
  t.is(created.status, 201);
  const { backfill_id: id } = (await created.json()) as { backfill_id: string };
  await waitFor('both runs running', async () => ((await f.getJson(`/api/backfills/${id}`)).running_job_runs === 2 ? true : undefined));
  t.is((await f.api(`/api/backfills/${id}`, { method: 'DELETE' })).status, 200);
  const view = await waitFor('the runs stopped', async () => {
    const v = await f.getJson(`/api/backfills/${id}`);
    return v.running_job_runs === 0 ? v : undefined;
  });
  t.is(view.status, 'canceled');
  t.deepEqual(view.counts, { live: 0, failed: 0, skipped: 0, building: 0, waiting: 0, pending: 2 });
});
