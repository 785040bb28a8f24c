/**
 * A job that fails on its first two attempts and succeeds on its third, under a real daemon (`platform serve` on
 * 127.0.0.1 port 0, real LevelDB, real job processes): each attempt names the attempt that retried it, the first
 * the second, the second the third, the third none. Said the same by REST and by the CLI (`job-runs list` and `get`,
 * `--json` and the table) after the build, after a kill -9 and a restart that replays the log, after a gc that
 * compacts the log into its base and writes a snapshot (a restart from the snapshot), and from the base alone (the
 * events that queued the second attempt are gone by then: only the base can say what retried the first).
 */
import test, { type ExecutionContext } from 'ava';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { JobRunView } from '../lib/api/views.js';
import { SNAPSHOT_FORMAT } from '../lib/state/snapshot.js';
import { IMAGE_FORMAT, readSnapshotHeader } from '../lib/state/snapshot-file.js';
import { cliAgainst } from './helpers/cli-against.js';
import { serveSubprocess } from './helpers/serve-subprocess.js';
import { checkedResponse } from './helpers/contract.js';
import { bash, lines, makeWorkspace } from './helpers/jobs-fixture.js';


/** fetch, its answer checked against the served API contract (tests/helpers/contract.ts). */
const fetch = async (url: string, init?: RequestInit): Promise<Response> => checkedResponse(init?.method ?? 'GET', url, await globalThis.fetch(url, init));

const graph = {
  // Kept small so that a gc removes the events that queued the second attempt (the want's tree is kept whole: it
  // changed after the first event kept).
  retention: { events_keep: 4 },
  jobs: [
    {
      label: 'flaky',
      outputs: ['flaky/(?<n>\\d+)'],
      args: ['${n}'],
      // Counts its attempts in the workspace: fails the first two, succeeds from the third.
      exec: bash('n=$(cat "attempts-$1" 2>/dev/null || echo 0); n=$((n + 1)); echo "$n" > "attempts-$1"; echo "attempt $n" >> calls.txt; [ "$n" -ge 3 ] || exit 4'),
      retries: 2,
    },
  ],
};

async function json<T>(url: string, init?: RequestInit): Promise<T> {
  const r = await fetch(url, init);
  if (!r.ok) throw new Error(`${init?.method ?? 'GET'} ${url}: ${r.status} ${await r.text()}`);
  return (await r.json()) as T;
}

/** [attempt, status, retried_by] of each run, oldest first. */
const chainOf = (runs: readonly JobRunView[]) => runs.map((r) => [r.attempt, r.status, r.retried_by] as const);

/** What REST and the CLI say of the want's runs, held to the chain `ids` (the three attempts' ids, in order). */
async function checkChain(t: ExecutionContext, url: string, wantId: string, ids: readonly string[], when: string): Promise<void> {
  const expected = [
    [1, 'failed', ids[1]],
    [2, 'failed', ids[2]],
    [3, 'succeeded', null],
  ];
  const page = await json<{ data: JobRunView[] }>(`${url}/api/job_runs?want_id=${wantId}`);
  t.deepEqual(page.data.map((r) => r.job_run_id), [...ids], `${when}: REST lists the three attempts`);
  t.deepEqual(chainOf(page.data), expected, `${when}: REST list`);
  const each = await Promise.all(ids.map((id) => json<JobRunView>(`${url}/api/job_runs/${id}`)));
  t.deepEqual(chainOf(each), expected, `${when}: REST, run by run`);

  const cli = cliAgainst(() => url);
  const list = await cli('--json', 'job-runs', 'list', '--want', wantId);
  t.is(list.code, 0, list.stderr);
  t.deepEqual(chainOf((JSON.parse(list.stdout) as { data: JobRunView[] }).data), expected, `${when}: CLI job-runs list --json`);
  const gets = await Promise.all(ids.map((id) => cli('--json', 'job-runs', 'get', id)));
  for (const g of gets) t.is(g.code, 0, g.stderr);
  t.deepEqual(chainOf(gets.map((g) => JSON.parse(g.stdout) as JobRunView)), expected, `${when}: CLI job-runs get --json`);

  // As a person reads them: each failed attempt says which run retried it, not that a retry was due.
  const table = await cli('job-runs', 'list', '--want', wantId);
  t.is(table.code, 0, table.stderr);
  // A run's row: the one whose first cell is its id.
  const rowOf = (id: string) => table.stdout.split('\n').find((l) => l.replace(/^│?\s*/, '').startsWith(`${id} `)) ?? '';
  t.regex(rowOf(ids[0]!), new RegExp(`exited with code 4; retried as ${ids[1]}\\b`), `${when}: the first attempt's row`);
  t.regex(rowOf(ids[1]!), new RegExp(`exited with code 4; retried as ${ids[2]}\\b`), `${when}: the second attempt's row`);
  t.notRegex(table.stdout, /retry was due/, `${when}: no attempt reads as not retried`);
  const detail = await cli('job-runs', 'get', ids[0]!);
  t.regex(detail.stdout, new RegExp(`retried as\\s*│?\\s*${ids[1]}\\b`), `${when}: job-runs get of the first attempt`);
}

test('fails twice, succeeds on the third attempt: each attempt names its own retry, through REST and the CLI, a kill -9, a snapshot and the compaction base', async (t) => {
  const dir = makeWorkspace(t);
  writeFileSync(join(dir, 'platform.json'), JSON.stringify(graph));
  const first = await serveSubprocess(t, dir);
  const { want_id } = await json<{ want_id: string }>(`${first.url}/api/wants`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ partitions: ['flaky/1'] }),
  });
  let status = '';
  // Backoff 1 s, then 2 s: some 3 s and three processes.
  for (let i = 0; i < 300 && status !== 'successful' && status !== 'failed'; i++) {
    status = (await json<{ status: string }>(`${first.url}/api/wants/${want_id}`)).status;
    if (status !== 'successful') await new Promise((r) => setTimeout(r, 100));
  }
  t.is(status, 'successful');
  t.deepEqual(lines(dir, 'calls.txt'), ['attempt 1', 'attempt 2', 'attempt 3'], 'three processes');
  const ids = (await json<{ data: JobRunView[] }>(`${first.url}/api/job_runs?want_id=${want_id}`)).data.map((r) => r.job_run_id);
  t.is(ids.length, 3);
  await checkChain(t, first.url, want_id, ids, 'after the build');

  // kill -9: no snapshot was written (the log is short), so the next daemon replays the log.
  await first.kill9();
  t.false(existsSync(join(dir, '.platform', 'snapshot.bin')), 'nothing but the log to start from');
  const second = await serveSubprocess(t, dir);
  await checkChain(t, second.url, want_id, ids, 'after kill -9 and a replay of the log');

  // gc: the log keeps its last 4 events, the state before them goes to the compaction base (records, this format),
  // and a snapshot (the state's image) is written at once.
  const gc = await json<{ events: { first_event_id: number; removed_events: number } }>(`${second.url}/api/gc`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{}',
  });
  t.true(gc.events.removed_events > 0, JSON.stringify(gc));
  const queuedAt = (await json<{ data: Array<{ event_id: number; type: string; job_run_queued?: { job_run_id: string } }> }>(`${second.url}/api/events?offset=${gc.events.first_event_id - 1}`)).data
    .filter((e) => e.type === 'job_run_queued')
    .map((e) => e.job_run_queued!.job_run_id);
  t.false(queuedAt.includes(ids[1]!), 'the event that queued the second attempt is compacted away');
  t.is((await readSnapshotHeader(join(dir, '.platform', 'compacted.bin')))?.format, SNAPSHOT_FORMAT);
  t.is((await readSnapshotHeader(join(dir, '.platform', 'snapshot.bin')))?.format, IMAGE_FORMAT);
  await checkChain(t, second.url, want_id, ids, 'after gc');
  await second.kill9();

  // A start from the snapshot.
  const third = await serveSubprocess(t, dir);
  await checkChain(t, third.url, want_id, ids, 'after kill -9 and a start from the snapshot');
  await third.kill9();

  // A start from the compaction base alone (as after an upgrade, which cannot use the snapshot).
  rmSync(join(dir, '.platform', 'snapshot.bin'), { force: true });
  const fourth = await serveSubprocess(t, dir);
  await checkChain(t, fourth.url, want_id, ids, 'after a start from the compaction base');
  await fourth.kill9();
});
