/**
 * A canceled backfill's counts say nothing builds: the fold stops counting an ended want, so its view read
 * "building 2" (and the CLI's bar "building 2 · 0 running") for runs the cancel had stopped. What it did not build is
 * counted `canceled`, not `pending` ("not let in yet", as if it would be): on the REST view, the embedding API's
 * `backfillView`, and the real CLI's `backfills get` (table and --json). The real server.
 */
import test from 'ava';
import { backfillView, backfillWant } from '../lib/server/backfill-queries.js';
import { runCli, startServer, waitFor } from './helpers/server-fixture.js';

test('a canceled backfill counts nothing as building, waiting or pending; what it did not build is canceled, on every surface', async (t) => {
  const f = await startServer(t);
  const created = await f.api('/api/backfills', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ partitions: ['slow/a', 'slow/b', 'ok/c'] }) });
  t.is(created.status, 201);
  const { backfill_id: id } = (await created.json()) as { backfill_id: string };
  const building = await waitFor('both slow runs running', async () => {
    const v = await f.getJson(`/api/backfills/${id}`);
    return v.running_job_runs === 2 && v.counts.live === 1 ? v : undefined;
  });
  t.is(building.counts.canceled, 0, 'none canceled while it builds');
  t.is((await f.api(`/api/backfills/${id}`, { method: 'DELETE' })).status, 200);
  const view = await waitFor('the runs stopped', async () => {
    const v = await f.getJson(`/api/backfills/${id}`);
    return v.running_job_runs === 0 ? v : undefined;
  });
  t.is(view.status, 'canceled');
  const counts = { live: 1, failed: 0, skipped: 0, building: 0, waiting: 0, pending: 0, canceled: 2 };
  t.deepEqual(view.counts, counts);
  const s = f.platform.state();
  t.deepEqual(backfillView(s, backfillWant(s, id)!).counts, counts, 'the embedding API');

  const json = runCli(t, ['--server-url', f.url, '--json', 'backfills', 'get', id], f.dir);
  t.is((await json.exited).code, 0, json.stderr());
  t.deepEqual((JSON.parse(json.stdout()) as { counts: unknown }).counts, counts);
  const table = runCli(t, ['--server-url', f.url, 'backfills', 'get', id], f.dir);
  t.is((await table.exited).code, 0, table.stderr());
  t.regex(table.stdout(), /pending 0 · canceled 2 · 0 running/);
});

test('a backfill\'s updated_at moves with its progress: it is the time of the last partition that settled, not its creation', async (t) => {
  const f = await startServer(t);
  const created = await f.api('/api/backfills', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ partitions: ['slow/a', 'ok/b'] }) });
  t.is(created.status, 201);
  const { backfill_id: id } = (await created.json()) as { backfill_id: string };
  const view = await waitFor('ok/b built', async () => {
    const v = await f.getJson(`/api/backfills/${id}`);
    return v.counts.live === 1 && v.running_job_runs === 1 ? v : undefined;
  });
  const built = await f.getJson(`/api/partitions/${encodeURIComponent('ok/b')}`);
  t.is(built.status, 'live');
  t.is(view.updated_at, built.updated_at, 'the backfill was last updated when ok/b went live');
  t.true(Date.parse(view.updated_at) > Date.parse(view.created_at), `${view.updated_at} after ${view.created_at}`);
  t.is(backfillView(f.platform.state(), backfillWant(f.platform.state(), id)!).updated_at, view.updated_at, 'the embedding API');
});
