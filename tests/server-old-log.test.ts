/**
 * A log written before requests were bounded may hold times a Date cannot print (a ttl of 2^53 seconds): the want
 * still reads, its far times as the last instant of year 9999, never as a 500.
 */
import test from 'ava';
import { join } from 'node:path';
import { EventLog } from '../lib/events/event-log.js';
import { makeWorkspace, openPlatform, startServer } from './helpers/jobs-fixture.js';
import { checkedResponse } from './helpers/contract.js';

test('a want whose ttl and sla overflow a Date reads as 200 with its times at year 9999', async (t) => {
  const dir = makeWorkspace(t);
  const log = await EventLog.open(join(dir, '.platform', 'bel'));
  await log.append(
    [
      {
        type: 'want_created',
        want_created: {
          want_id: 'w-1', partitions: ['a/1'], comment: '', data_timestamp: 0, ttl_seconds: Number.MAX_SAFE_INTEGER,
          sla_seconds: Number.MAX_SAFE_INTEGER, source: 'user', parent_want_id: '', root_want_id: 'w-1', rebuild: 'missing',
          priority: 0, backfill_id: '', max_concurrent_job_runs: 0, pattern: '', schedule_tick: 0,
        },
      },
    ],
    Date.now(),
  );
  await log.close();
  const platform = await openPlatform(t, dir, { jobs: [{ label: 'a', outputs: ['a/(?<n>\\d+)'], exec: ['sleep', '30'] }] });
  const server = await startServer(t, platform);
  for (const path of ['/api/wants/w-1', '/api/wants']) {
    const url = `${server.url}${path}`;
    const res = await checkedResponse('GET', url, await fetch(url));
    t.is(res.status, 200, path);
    t.regex(await res.text(), /9999-12-31T23:59:59\.999Z/, path);
  }
});
