/**
 * `retention.events_keep`: gc keeps the newest N events, the state of the ones before lives on in
 * `.platform/compacted.bin`. Checked against the real platform (real LevelDB, real job processes), the real server
 * and the real CLI: a restart after gc (with or without the regular snapshot) is the same state and goes on with
 * the same ids; removed events answer 410 with the first id still available, on every read and on SSE resume (the CLI
 * tells the --offset that reads from it); a compacted log without its base is refused at start and by doctor, naming
 * the file.
 */
import test from 'ava';
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseGraph } from '../lib/graph/parse-graph.js';
import { GraphError } from '../lib/graph/graph-error.js';
import { EventsCompactedError } from '../lib/events/events-compacted-error.js';
import { Platform } from '../lib/platform.js';
import { fromSnapshot } from '../lib/state/snapshot.js';
import { readCompactionBase, readSnapshotHeader, stateCodeFingerprint, writeSnapshot } from '../lib/state/snapshot-file.js';
import { canon } from './helpers/state-canon.js';
import { makeWorkspace, openPlatform, poll, startServer, waitForWant, want } from './helpers/jobs-fixture.js';
import { cliAgainst } from './helpers/cli-against.js';
import { serveSubprocess } from './helpers/serve-subprocess.js';
import { checkedResponse } from './helpers/contract.js';

/** fetch, its answer checked against the served API contract (tests/helpers/contract.ts). */
const fetch = async (url: string, init?: RequestInit): Promise<Response> => checkedResponse(init?.method ?? 'GET', url, await globalThis.fetch(url, init));

const BIN = join(fileURLToPath(new URL('../../', import.meta.url)), 'bin', 'platform');
const KEEP = 6;
const graph = (keep: number | undefined = KEEP) => ({
  ...(keep !== undefined ? { retention: { events_keep: keep } } : {}),
  jobs: [
    { label: 'raw', outputs: ['raw/(?<n>\\d+)'], exec: ['true'] },
    { label: 'sum', outputs: ['sum/(?<n>\\d+)'], inputs: [{ partition_ref: 'raw/${n}', dep_type: 'MATERIALIZE' }], exec: ['true'] },
  ],
});

/** A workspace whose platform built sum/1..n (each with its raw input), so the log holds many events. */
async function built(t: import('ava').ExecutionContext, dir: string, n: number, keep?: number): Promise<Platform> {
  const platform = await openPlatform(t, dir, graph(keep));
  for (let i = 1; i <= n; i++) await waitForWant(platform, await want(platform, [`sum/${i}`]));
  return platform;
}

const reopen = (t: import('ava').ExecutionContext, dir: string, keep?: number) => openPlatform(t, dir, graph(keep));

test('gc keeps the newest events_keep events; a restart from the compaction base is the same state and goes on with the same ids', async (t) => {
  const dir = makeWorkspace(t);
  const platform = await built(t, dir, 4);
  const latest = platform.log.latestId();
  t.true(latest > 3 * KEEP, `the log holds ${latest} events`);

  const dry = await platform.gc({ dryRun: true });
  t.is(dry.events.removed_events, latest - KEEP);
  t.is(platform.log.firstId(), 1, 'a dry run removes nothing');
  t.false(existsSync(join(dir, '.platform', 'compacted.bin')));

  const report = await platform.gc();
  t.is(report.events.keep, KEEP);
  t.is(report.events.removed_events, latest - KEEP);
  t.is(report.events.first_event_id, latest - KEEP + 1);
  t.is(platform.log.firstId(), latest - KEEP + 1);
  t.is(platform.log.latestId(), latest, 'the latest event id is kept');
  t.true(existsSync(join(dir, '.platform', 'compacted.bin')));
  await t.throwsAsync(() => platform.log.list(0, 10), { instanceOf: EventsCompactedError });
  t.is((await platform.log.list(latest - KEEP, 100)).length, KEEP);
  const before = canon(platform.state());
  const made = platform.state().created;
  await platform.close();

  // Without the regular snapshot (as after a kill -9 before one was written): the base alone.
  rmSync(join(dir, '.platform', 'snapshot.bin'), { force: true });
  const again = await reopen(t, dir);
  t.deepEqual(canon(again.state()), before, 'the same state as before gc');
  t.is(again.log.firstId(), latest - KEEP + 1);
  const w = await want(again, ['sum/5']);
  t.is(w, `w-${made.wants + 1}`, 'want ids go on from every want ever made, pruned ones included');
  const s = await waitForWant(again, w);
  t.is(s.wants.get(w)?.status, 'successful');
  t.true(s.last_event_id > latest, 'event ids go on');
  // Lineage of current builds survives: sum/1's build still names the raw/1 build it consumed.
  const sum1 = s.partitions.get('sum/1')!;
  const run = s.job_runs.get(s.builds.get(sum1.build_id)!.job_run_id)!;
  t.deepEqual(run.input_builds.map((b) => b.partition_ref), ['raw/1']);
  t.is(s.partitions.get('raw/1')?.build_id, run.input_builds[0]!.build_id);
  await again.close();

  // A second gc moves the base on; and a restart with the regular snapshot agrees with it.
  const third = await reopen(t, dir);
  const second = await third.gc();
  t.true(second.events.removed_events > 0);
  const afterSecond = canon(third.state());
  await third.close();
  const fourth = await reopen(t, dir);
  t.deepEqual(canon(fourth.state()), afterSecond);
});

test('gc prunes the history that ended before the first event kept; current builds keep their whole lineage; counters go on', async (t) => {
  const dir = makeWorkspace(t);
  const platform = await built(t, dir, 3);
  // Built again later: the first builds of sum/1 and raw/1 are history, the new ones current.
  await new Promise((r) => setTimeout(r, 20));
  const again = await want(platform, ['sum/1']);
  await platform.createTaint({ partitions: ['raw/1'], reason: 'late rows', downstream: true });
  await waitForWant(platform, again);
  const rebuilt = await want(platform, ['sum/1']);
  await waitForWant(platform, rebuilt);
  const before = platform.state();
  for (const id of before.job_runs.keys()) t.true(existsSync(join(dir, '.platform', 'logs', id)), `${id} has a log directory`);
  const currentSum1 = before.partitions.get('sum/1')!.build_id;
  t.is(before.build_history.size, before.builds.size);

  const dry = await platform.gc({ dryRun: true });
  t.true(dry.events.pruned.wants > 0, `a dry run counts what it would prune: ${JSON.stringify(dry.events.pruned)}`);
  t.is(platform.state().wants.size, before.wants.size, 'a dry run prunes nothing');

  // Everything that ended before the first of the newest 6 events is history.
  const report = await platform.gc();
  const s = platform.state();
  t.deepEqual(report.events.pruned, dry.events.pruned, 'the dry run said what the real one did');
  // A snapshot of the pruned state is written with the base, so the next start reads an image.
  const snapshot = await readSnapshotHeader(join(dir, '.platform', 'snapshot.bin'));
  t.is(snapshot?.last_event_id, s.last_event_id, 'snapshot.bin is the pruned state');
  t.true(report.events.pruned.wants > 0 && report.events.pruned.job_runs > 0 && report.events.pruned.builds > 0, JSON.stringify(report.events.pruned));
  t.is(s.wants.size, before.wants.size - report.events.pruned.wants);
  t.deepEqual(s.created, before.created, 'the counters of everything ever made are kept');
  // Every partition keeps its status and current build, and the build's lineage down to its inputs' builds.
  t.deepEqual([...s.partitions.values()], [...before.partitions.values()]);
  for (const p of s.partitions.values()) {
    const b = s.builds.get(p.build_id);
    t.truthy(b, `${p.ref}'s current build is kept`);
    const run = s.job_runs.get(b!.job_run_id);
    t.truthy(run, `the run of ${p.ref}'s current build is kept`);
    for (const input of run!.input_builds) t.truthy(s.builds.get(input.build_id), `${p.ref} consumed ${input.build_id}, kept`);
  }
  t.is(s.partitions.get('sum/1')!.build_id, currentSum1);
  t.false(s.builds.has('b-1'), 'the first build of raw/1 was replaced: history');
  t.is(s.taints.size, 1, 'taints are kept');
  // The logs of pruned runs go with them; those of kept runs stay.
  const prunedRuns = [...before.job_runs.keys()].filter((id) => !s.job_runs.has(id));
  t.true(prunedRuns.length > 0);
  for (const id of prunedRuns) t.false(existsSync(join(dir, '.platform', 'logs', id)), `${id}'s logs removed with it`);
  for (const id of s.job_runs.keys()) t.true(existsSync(join(dir, '.platform', 'logs', id)), `${id}'s logs kept`);
  // A new want gets the next id, never one of a pruned want.
  const next = await want(platform, ['sum/9']);
  t.is(next, `w-${before.created.wants + 1}`);
  await waitForWant(platform, next);
});

test('wants made while gc prunes are kept: the pruned state swapped in has them, and a restart agrees', async (t) => {
  const dir = makeWorkspace(t);
  const platform = await built(t, dir, 6);
  // gc and new wants at once: the prune runs between turns of the loop while the wants are folded.
  const [report, ...made] = await Promise.all([platform.gc(), ...[7, 8, 9, 10].map((n) => want(platform, [`sum/${n}`]))]);
  t.true(report.events.pruned.wants > 0, JSON.stringify(report.events.pruned));
  for (const w of made) t.truthy(platform.state().wants.get(w), `${w}, made during the prune, is in the state`);
  const done = await Promise.all(made.map((w) => waitForWant(platform, w)));
  for (const [i, w] of made.entries()) t.is(done[i]!.wants.get(w)?.status, 'successful');
  const before = canon(platform.state());
  await platform.close();
  rmSync(join(dir, '.platform', 'snapshot.bin'), { force: true });
  const again = await reopen(t, dir);
  t.deepEqual(canon(again.state()), before);
});

test('a compacted log whose base is gone is refused at start and by doctor, naming the file; never a silent fresh start', async (t) => {
  const dir = makeWorkspace(t);
  const platform = await built(t, dir, 3);
  await platform.gc();
  await platform.close();
  rmSync(join(dir, '.platform', 'snapshot.bin'), { force: true });
  rmSync(join(dir, '.platform', 'compacted.bin'), { force: true });
  const err = await t.throwsAsync(() => Platform.open(dir, { graph: parseGraph(graph(), 'test'), tickMs: 60_000 }));
  t.regex(err?.message ?? '', /compacted\.bin/);
  t.regex(err?.message ?? '', /platform doctor/);
  t.regex(err?.message ?? '', /starts at event \d+/);

  const doctor = spawnSync(process.execPath, [BIN, '-C', dir, '--json', 'doctor'], { encoding: 'utf8' });
  t.is(doctor.status, 1, doctor.stderr);
  const report = JSON.parse(doctor.stdout) as { checks: Array<{ check: string; status: string; detail: string }> };
  const log = report.checks.find((c) => c.check === 'event log')!;
  t.is(log.status, 'error');
  t.regex(log.detail, /compacted\.bin is missing/);
});

test('a compacted log whose base is gone but whose snapshot is good starts from the snapshot and writes a new base at once', async (t) => {
  const dir = makeWorkspace(t);
  const platform = await built(t, dir, 3);
  await platform.gc();
  const before = canon(platform.state());
  await platform.close();
  const base = join(dir, '.platform', 'compacted.bin');
  // A snapshot of the base's state (an image, written from the base's records), and the base lost.
  const header = (await readSnapshotHeader(base))!;
  const probe = { latestId: () => Number.MAX_SAFE_INTEGER, firstId: () => 1, timestampOf: async () => header.last_event_timestamp };
  const { snapshot: records } = await readCompactionBase(base, probe);
  await writeSnapshot(join(dir, '.platform', 'snapshot.bin'), stateCodeFingerprint(), fromSnapshot(records!), header.last_event_timestamp);
  rmSync(base);
  const doctor = spawnSync(process.execPath, [BIN, '-C', dir, '--json', 'doctor'], { encoding: 'utf8' });
  const finding = (JSON.parse(doctor.stdout) as { checks: Array<{ check: string; status: string; fix?: string }> }).checks.find((c) => c.check === 'event log')!;
  t.is(finding.status, 'warn', 'doctor: the snapshot still holds the state');
  t.regex(finding.fix ?? '', /platform start/);
  const healed = await reopen(t, dir);
  t.deepEqual(canon(healed.state()), before);
  t.true(await poll(() => existsSync(base), 10_000), 'a new compacted.bin is written');
  await healed.close();
  rmSync(join(dir, '.platform', 'snapshot.bin'), { force: true });
  const fromBase = await reopen(t, dir);
  t.deepEqual(canon(fromBase.state()), before, 'and a start from it alone is the same state');
});

test('doctor reads a compacted log on top of its base', async (t) => {
  const dir = makeWorkspace(t);
  const platform = await built(t, dir, 3);
  await platform.gc();
  await platform.close();
  const doctor = spawnSync(process.execPath, [BIN, '-C', dir, '--json', 'doctor'], { encoding: 'utf8' });
  const report = JSON.parse(doctor.stdout) as { checks: Array<{ check: string; status: string; detail: string }> };
  const log = report.checks.find((c) => c.check === 'event log')!;
  t.is(log.status, 'ok', log.detail);
  t.regex(log.detail, /compacted/);
  t.not(report.checks.find((c) => c.check === 'snapshot')?.status, 'error');
});

test('over HTTP: removed events answer 410 with the first id still available, reads and SSE resume alike; platform gc and events say so', async (t) => {
  const dir = makeWorkspace(t);
  const platform = await built(t, dir, 3);
  // A backfill of what is built ends at once; the builds after it push it out of the events kept.
  const backfill = await platform.createBackfill({ partitions: ['sum/1'], pattern: '', policy: 'missing', priority: 0, max_concurrent_job_runs: 0, comment: '' });
  if (!backfill.ok) return t.fail(backfill.error);
  for (const i of [4, 5, 6]) await waitForWant(platform, await want(platform, [`sum/${i}`]));
  const server = await startServer(t, platform);
  const cli = cliAgainst(() => server.url);
  const latest = platform.log.latestId();

  const gc = await cli('gc', '--json');
  t.is(gc.code, 0, gc.stderr);
  const report = JSON.parse(gc.stdout) as { events: { removed_events: number; first_event_id: number } };
  const first = latest - KEEP + 1;
  t.is(report.events.first_event_id, first);

  const gone = async (path: string, headers: Record<string, string> = {}) => {
    const r = await fetch(`${server.url}${path}`, { headers });
    t.is(r.status, 410, path);
    const body = (await r.json()) as { error: string; first_event_id: number };
    t.is(body.first_event_id, first, path);
    t.regex(body.error, new RegExp(`first still available is ${first}`));
    t.regex(body.error, /retention\.events_keep/);
  };
  await gone('/api/events?offset=0');
  await gone('/api/events/1');
  await gone(`/api/events/${first - 1}`);
  await gone('/api/events/stream?after=0');
  await gone('/api/events/stream', { 'last-event-id': '3' });

  const page = (await (await fetch(`${server.url}/api/events`)).json()) as { data: Array<{ event_id: number }>; first_id: number; latest_id: number };
  t.is(page.first_id, first);
  t.is(page.data[0]?.event_id, first, 'without an offset, from the first event still there');
  t.is(page.data.length, KEEP);
  t.is((await fetch(`${server.url}/api/events/${first}`)).status, 200);

  // w-1 ended before the first event kept: pruned, and its 404 says so; an id never made says nothing of the kind.
  t.false(platform.state().wants.has('w-1'), 'w-1 was pruned');
  const pruned = await fetch(`${server.url}/api/wants/w-1`);
  t.is(pruned.status, 404);
  t.regex(((await pruned.json()) as { error: string }).error, /pruned.*retention\.events_keep/);
  const never = await fetch(`${server.url}/api/wants/w-999`);
  t.notRegex(((await never.json()) as { error: string }).error, /pruned/);
  const prunedBackfill = await fetch(`${server.url}/api/backfills/${backfill.backfill!.backfill_id}`);
  t.is(prunedBackfill.status, 404);
  t.regex(((await prunedBackfill.json()) as { error: string }).error, /pruned.*retention\.events_keep/, 'a pruned backfill says so too');
  t.notRegex(((await (await fetch(`${server.url}/api/backfills/bf-99`)).json()) as { error: string }).error, /pruned/);

  // The CLI's --offset means "after": it tells the offset that reads from the first event kept, one less than its id.
  const old = await cli('events', '--offset', '0');
  t.not(old.code, 0);
  t.regex(old.stderr, new RegExp(`Event 1 is gone: events before ${first} were compacted .*; the first still available is ${first}: 'platform events --offset ${first - 1}' reads from there\\.`));
  const told = /'platform events (--offset \d+)'/.exec(old.stderr)?.[1]?.split(' ') ?? [];
  const resumed = await cli('events', ...told, '--json');
  t.is(resumed.code, 0, resumed.stderr);
  t.is((JSON.parse(resumed.stdout) as { data: Array<{ event_id: number }> }).data[0]?.event_id, first, 'the offset told reads from the first event kept');
  const oldJson = await cli('events', '--offset', '2', '--json');
  t.not(oldJson.code, 0);
  const error = JSON.parse(oldJson.stderr) as { error: string; status: number };
  t.is(error.status, 410);
  t.regex(error.error, new RegExp(`^Event 3 is gone: .*'platform events --offset ${first - 1}' reads from there\\.$`));
  const follow = await cli('events', '--follow', '--offset', '0');
  t.not(follow.code, 0);
  t.regex(follow.stderr, new RegExp(`the first still available is ${first}: 'platform events --follow --offset ${first - 1}' reads from there\\.`));
  const human = await cli('gc', '--dry-run');
  t.is(human.code, 0, human.stderr);
  t.regex(human.stdout, /events would remove\s*│?\s*0/);
  t.regex(human.stdout, new RegExp(`events ${first}\\.\\.${latest}`));
});

test('a daemon killed with -9 right after gc comes back with the same wants, partitions and event ids', async (t) => {
  const dir = makeWorkspace(t);
  writeFileSync(join(dir, 'platform.json'), JSON.stringify(graph()));
  const first = await serveSubprocess(t, dir);
  const json = async <T>(url: string, init?: RequestInit): Promise<T> => {
    const r = await fetch(url, init);
    if (!r.ok) throw new Error(`${init?.method ?? 'GET'} ${url}: ${r.status} ${await r.text()}`);
    return (await r.json()) as T;
  };
  for (const n of [1, 2, 3]) {
    const { want_id } = await json<{ want_id: string }>(`${first.url}/api/wants`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ partitions: [`sum/${n}`] }),
    });
    let status = '';
    for (let i = 0; i < 200 && status !== 'successful'; i++) {
      status = (await json<{ status: string }>(`${first.url}/api/wants/${want_id}`)).status;
      if (status !== 'successful') await new Promise((r) => setTimeout(r, 50));
    }
    t.is(status, 'successful', `sum/${n} built`);
  }
  const gc = await json<{ events: { first_event_id: number; latest_event_id: number; removed_events: number } }>(`${first.url}/api/gc`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{}',
  });
  t.true(gc.events.removed_events > 0);
  const wantsBefore = await json<unknown>(`${first.url}/api/wants?limit=1000`);
  const partitionsBefore = await json<unknown>(`${first.url}/api/partitions?limit=1000`);
  await first.kill9();
  rmSync(join(dir, '.platform', 'snapshot.bin'), { force: true });

  const second = await serveSubprocess(t, dir);
  t.deepEqual(await json<unknown>(`${second.url}/api/wants?limit=1000`), wantsBefore);
  t.deepEqual(await json<unknown>(`${second.url}/api/partitions?limit=1000`), partitionsBefore);
  const page = await json<{ first_id: number; latest_id: number }>(`${second.url}/api/events?limit=1`);
  t.is(page.first_id, gc.events.first_event_id);
  t.is(page.latest_id, gc.events.latest_event_id);
  t.is((await fetch(`${second.url}/api/events?offset=0`)).status, 410);
  await second.kill9();
});

test('platform.json: events_keep must be a whole number of at least 1', (t) => {
  const { jobs } = graph();
  for (const bad of [0, 1.5, '1000', -3]) {
    const err = t.throws(() => parseGraph({ jobs, retention: { events_keep: bad } }, 'platform.json'), { instanceOf: GraphError });
    t.regex(err?.message ?? '', /retention\.events_keep.*whole number/);
  }
  t.is(parseGraph({ jobs, retention: { events_keep: 1000 } }, 'platform.json').retention?.events_keep, 1000);
});
