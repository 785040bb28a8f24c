/**
 * A want whose ttl has already run out from its data timestamp would be canceled in the step that makes it: it is
 * refused instead (400 naming the data timestamp, the ttl and when it expired), on REST, the embedding API and the
 * CLI, and nothing is recorded. Through a real platform, its HTTP server and the real CLI.
 */
import test from 'ava';
import { makeWorkspace, openPlatform, startServer, wants } from './helpers/jobs-fixture.js';
import { cliAgainst } from './helpers/cli-against.js';

const EXPIRED = /The want would be expired when made: its ttl of 3600 s counts from its data timestamp 2020-01-01T00:00:00\.000Z, so it expired at 2020-01-01T01:00:00\.000Z, before now \(\d{4}-.*\)\. Nothing was recorded\./;

test('a want whose data_timestamp + ttl is already past is refused with 400 on every surface, and nothing is recorded', async (t) => {
  const dir = makeWorkspace(t);
  const platform = await openPlatform(t, dir, { jobs: [{ label: 'src', outputs: ['src/(?<k>.+)'], exec: ['true'] }] });
  const server = await startServer(t, platform);
  const cli = cliAgainst(() => server.url);

  const res = await fetch(`${server.url}/api/wants`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ partitions: ['src/dt1'], data_timestamp: '2020-01-01T00:00:00Z', ttl_seconds: 3600 }),
  });
  t.is(res.status, 400);
  t.regex(((await res.json()) as { error: string }).error, EXPIRED);

  const embedded = await platform.createWant({ partitions: ['src/dt1'], comment: '', data_timestamp: Date.parse('2020-01-01T00:00:00Z'), ttl_seconds: 3600, sla_seconds: 0 });
  t.like(embedded, { ok: false, status: 400 });
  t.regex(embedded.ok ? '' : embedded.error, EXPIRED);

  const text = await cli('want', 'create', '--partition', 'src/dt1', '--data-timestamp', '2020-01-01T00:00:00Z', '--ttl', '1h');
  t.is(text.code, 1);
  t.regex(text.stderr, EXPIRED);
  t.is(text.stdout, '');
  const json = await cli('--json', 'want', 'create', '--partition', 'src/dt1', '--data-timestamp', '2020-01-01T00:00:00Z', '--ttl', '1h');
  t.is(json.code, 1);
  t.like(JSON.parse(json.stdout || json.stderr), { status: 400, exit_code: 1 });
  t.regex(JSON.parse(json.stdout || json.stderr).error, EXPIRED);

  t.deepEqual(wants(platform.state()), [], 'no want recorded');

  // A ttl that has not run out yet, or no data timestamp: made as before.
  const soon = new Date(Date.now() - 60_000).toISOString();
  const fine = await cli('--json', 'want', 'create', '--partition', 'src/dt2', '--data-timestamp', soon, '--ttl', '1h');
  t.is(fine.code, 0, fine.stderr);
  t.not(JSON.parse(fine.stdout).want.status, 'canceled');
  const plain = await cli('--json', 'want', 'create', '--partition', 'src/dt3', '--ttl', '1s');
  t.is(plain.code, 0, plain.stderr);
});
