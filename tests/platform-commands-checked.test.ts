/**
 * The embedding API's writes are refused as the JSON API refuses them: a typed object TypeScript cannot vouch for
 * at run time (NaN, a policy cast from a string, an empty list) is a 400 with why, and nothing is recorded.
 */
import test from 'ava';
import { existsSync } from 'node:fs';
import { runLogDir } from '../lib/executor/job-launch.js';
import type { CreateBackfillRequest, CreateTaintRequest, CreateWantRequest } from '../lib/orchestrator/command.js';
import { backfillView, backfillWant } from '../lib/server/backfill-queries.js';
import { makeWorkspace, openPlatform, waitForWant } from './helpers/jobs-fixture.js';
import { startServer } from './helpers/server-fixture.js';

const graph = { jobs: [{ label: 'a', outputs: ['a/(?<n>\\w+)'], exec: ['true'] }] };
const want = (extra: Partial<CreateWantRequest>): CreateWantRequest => ({ partitions: ['a/x'], comment: '', data_timestamp: 0, ttl_seconds: 0, sla_seconds: 0, ...extra });
const backfill = (extra: Partial<CreateBackfillRequest>): CreateBackfillRequest => ({
  partitions: ['a/1', 'a/2'], pattern: '', policy: 'missing', priority: 0, max_concurrent_job_runs: 0, comment: '', ...extra,
});
const taint = (extra: Partial<CreateTaintRequest>): CreateTaintRequest => ({ partitions: ['a/x'], reason: '', downstream: false, ...extra });

test('bad wants, backfills and taints through the embedding API are 400s with why; nothing is recorded and the loop goes on', async (t) => {
  const dir = makeWorkspace(t);
  const platform = await openPlatform(t, dir, graph);
  const cases: Array<[string, () => ReturnType<typeof platform.createWant>, RegExp]> = [
    ['no partitions', () => platform.createWant(want({ partitions: [] })), /partitions is empty/],
    ['partitions not a list', () => platform.createWant(want({ partitions: null as unknown as string[] })), /partitions must be an array/],
    ['an empty ref', () => platform.createWant(want({ partitions: [''] })), /partitions\[0\] is empty/],
    ['a ref no job makes', () => platform.createWant(want({ partitions: ['zzz/1'] })), /zzz\/1/],
    ['a policy cast from a string', () => platform.createWant(want({ rebuild: 'bogus' as 'all' })), /^Field 'rebuild' must be one of missing, stale, all, absent, got "bogus"\.$/],
    ['a negative ttl', () => platform.createWant(want({ ttl_seconds: -1 })), /^Field 'ttl_seconds' must be a whole number from 0 to \d+, got -1\.$/],
    ['a NaN sla', () => platform.createWant(want({ sla_seconds: NaN })), /^Field 'sla_seconds' must be a whole number from 0 to \d+, got NaN \(not a number\)\.$/],
    ['a fractional priority', () => platform.createWant(want({ priority: 1.5 })), /^Field 'priority' must be a whole number from -1000000 to 1000000, got 1\.5\.$/],
    ['a backfill policy cast', () => platform.createBackfill(backfill({ policy: 'nope' as 'all' })), /^Field 'policy' must be one of missing, failed, all, got "nope"\.$/],
    ['a negative cap', () => platform.createBackfill(backfill({ max_concurrent_job_runs: -3 })), /max_concurrent_job_runs/],
    ['downstream a string (JavaScript)', () => platform.createTaint({ partitions: ['a/x'], downstream: 'yes' } as unknown as CreateTaintRequest), /^Field 'downstream' must be true or false, got "yes"\.$/],
    ['no request at all (JavaScript)', () => platform.createWant(undefined as unknown as CreateWantRequest), /^createWant takes a request object \(\{partitions: \[\.\.\.\], \.\.\.\}\), got nothing/],
    ['a null backfill (JavaScript)', () => platform.createBackfill(null as unknown as CreateBackfillRequest), /^createBackfill takes a request object .*, got null/],
    ['no taint request (JavaScript): the step must not fail', () => platform.createTaint(undefined as unknown as CreateTaintRequest), /^createTaint takes a request object .*, got nothing/],
    ['an empty taint', () => platform.createTaint(taint({ partitions: [] })), /partitions is empty/],
  ];
  for (const [what, call, message] of cases) {
    const r = await call();
    t.false(r.ok, what);
    if (!r.ok) {
      t.is(r.status, 400, what);
      t.regex(r.error, message, what);
    }
  }
  t.is(platform.log.latestId(), 0, 'nothing recorded');
  const good = await platform.createWant(want({}));
  if (!good.ok) return t.fail(good.error);
  await waitForWant(platform, good.want_id, ['successful']);
});

test('a want, backfill or taint of partitions alone takes the JSON API\'s defaults for the rest', async (t) => {
  const dir = makeWorkspace(t);
  const platform = await openPlatform(t, dir, graph);
  const w = await platform.createWant({ partitions: ['a/x'], comment: undefined });
  if (!w.ok) return t.fail(w.error);
  await waitForWant(platform, w.want_id, ['successful']);
  const want = platform.state().wants.get(w.want_id)!;
  t.like(want, { comment: '', data_timestamp: 0, ttl_seconds: 0, sla_seconds: 0, rebuild: 'missing', priority: 0 });
  const bf = await platform.createBackfill({ partitions: ['a/1', 'a/2'] });
  if (!bf.ok) return t.fail(bf.error);
  const view = backfillView(platform.state(), backfillWant(platform.state(), bf.backfill!.backfill_id)!);
  t.like(view, { policy: 'missing', pattern: '', max_concurrent_job_runs: 0 });
  const taint = await platform.createTaint({ partitions: ['a/x'] });
  if (!taint.ok) return t.fail(taint.error);
  t.like(platform.state().taints.get(taint.taint!.taint_id), { reason: '', downstream: false });
});

test('null for a field is left out, as the JSON API reads it (a JSON body handed on makes the same want); partitions of null are refused', async (t) => {
  const dir = makeWorkspace(t);
  const platform = await openPlatform(t, dir, graph);
  const nulls = { comment: null, data_timestamp: null, ttl_seconds: null, sla_seconds: null, rebuild: null, priority: null };
  const w = await platform.createWant({ partitions: ['a/n'], ...nulls } as unknown as CreateWantRequest);
  if (!w.ok) return t.fail(w.error);
  t.like(platform.state().wants.get(w.want_id), { comment: '', data_timestamp: 0, ttl_seconds: 0, sla_seconds: 0, rebuild: 'missing', priority: 0 });
  await waitForWant(platform, w.want_id, ['successful']);
  const bf = await platform.createBackfill({ partitions: ['a/3'], policy: null, priority: null, max_concurrent_job_runs: null, comment: null } as unknown as CreateBackfillRequest);
  if (!bf.ok) return t.fail(bf.error);
  t.like(backfillView(platform.state(), backfillWant(platform.state(), bf.backfill!.backfill_id)!), { policy: 'missing', priority: 0, max_concurrent_job_runs: 0, comment: '' });
  const taint = await platform.createTaint({ partitions: ['a/n'], reason: null, downstream: null } as unknown as CreateTaintRequest);
  if (!taint.ok) return t.fail(taint.error);
  t.like(platform.state().taints.get(taint.taint!.taint_id), { reason: '', downstream: false });
  const refused = await platform.createWant({ partitions: null } as unknown as CreateWantRequest);
  t.false(refused.ok);
  if (!refused.ok) t.regex(refused.error, /partitions must be an array/);
});

test("a want id that is no string (JavaScript) is a 400 to cancelWant: it neither names another want nor fails the step", async (t) => {
  const dir = makeWorkspace(t);
  const errors: string[] = [];
  const platform = await openPlatform(t, dir, graph, { logError: (m) => errors.push(m) });
  const first = await platform.createWant(want({}));
  if (!first.ok) return t.fail(first.error);
  await waitForWant(platform, first.want_id, ['successful']);
  for (const id of [1, undefined, null]) {
    const r = await platform.cancelWant(id as unknown as string);
    t.false(r.ok, String(id));
    if (!r.ok) {
      t.is(r.status, 400, String(id));
      t.regex(r.error, /^want_id must be a want's id, a string like 'w-12', got /, String(id));
    }
  }
  for (const name of [undefined, 5]) {
    const r = await platform.pauseSchedule(name as unknown as string);
    t.false(r.ok, String(name));
    if (!r.ok) {
      t.is(r.status, 400, String(name));
      t.regex(r.error, /^A schedule's name must be a string like 'nightly', got /, String(name));
    }
  }
  t.deepEqual(errors, [], 'no step failed');
});

test('a field the JSON API does not take, or of the wrong type, is refused by the embedding API in the same words', async (t) => {
  // The JSON API and the embedding API of one platform: each body sent to both, the 400s compared word for word.
  const f = await startServer(t);
  const api = { want: '/api/wants', backfill: '/api/backfills', taint: '/api/taints' } as const;
  const call = {
    want: (b: object) => f.platform.createWant(b as CreateWantRequest),
    backfill: (b: object) => f.platform.createBackfill(b as CreateBackfillRequest),
    taint: (b: object) => f.platform.createTaint(b as CreateTaintRequest),
  };
  const cases: Array<[keyof typeof api, object, string]> = [
    // Dropped unseen, these made a want of ttl 0 and a backfill of no cap of its own.
    ['want', { partitions: ['ok/a'], ttl_seconds: 60, priorty: 5 }, "Unknown field 'priorty'; a want takes partitions, comment, data_timestamp, ttl_seconds, sla_seconds, rebuild, priority."],
    ['backfill', { partitions: ['ok/a', 'ok/b'], maxConcurrentJobRuns: 1 }, "Unknown field 'maxConcurrentJobRuns'; a backfill takes pattern, partitions, policy, priority, max_concurrent_job_runs, comment."],
    ['taint', { partitions: ['ok/a'], downstreem: true }, "Unknown field 'downstreem'; a taint takes partitions, reason, downstream."],
    ['want', { partitions: ['ok/a'], ttl_seconds: '60' }, `Field 'ttl_seconds' must be a whole number from 0 to 3162240000, got "60".`],
    ['want', { partitions: ['ok/a'], comment: 5 }, 'Field \'comment\' must be a string of at most 10000 characters, got 5.'],
    ['backfill', { partitions: ['ok/a'], max_concurrent_job_runs: true }, 'Field \'max_concurrent_job_runs\' must be a whole number from 0 to 10000, got true.'],
    ['taint', { partitions: ['ok/a'], reason: ['late'] }, `Field 'reason' must be a string of at most 10000 characters, got ["late"].`],
  ];
  for (const [kind, body, message] of cases) {
    const what = `${kind} ${JSON.stringify(body)}`;
    const http = await f.api(api[kind], { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    t.is(http.status, 400, what);
    t.is(((await http.json()) as { error: string }).error, message, `the JSON API: ${what}`);
    const r = await call[kind](body);
    t.deepEqual(r, { ok: false, status: 400, error: message }, `the embedding API: ${what}`);
  }
  const state = f.platform.state();
  t.deepEqual([state.wants.size, state.taints.size, state.backfills.size], [0, 0, 0], 'nothing recorded');
  // A known field left undefined is left out, as the defaults read it.
  const ok = await f.platform.createWant({ partitions: ['ok/a'], priority: undefined });
  t.true(ok.ok, ok.ok ? '' : ok.error);
});

test('gc, collectJobLogs and compactEvents refuse options they do not take, or of the wrong type, and remove nothing', async (t) => {
  const dir = makeWorkspace(t);
  const retained = { ...graph, retention: { job_logs_days: 1, events_keep: 1 } };
  const platform = await openPlatform(t, dir, retained);
  const w = await platform.createWant(want({}));
  if (!w.ok) return t.fail(w.error);
  await waitForWant(platform, w.want_id, ['successful']);
  const latest = platform.log.latestId();
  const runs = [...platform.state().job_runs.keys()];
  // A day and more after the run ended: a real pass would remove its logs and every event but the last.
  const later = Date.now() + 3 * 86_400_000;
  type Call = () => Promise<unknown>;
  const cases: Array<[string, Call, RegExp]> = [
    ["POST /api/gc's spelling", () => platform.gc({ dry_run: true } as never), /^gc does not take the option 'dry_run' \(POST \/api\/gc's spelling; here it is dryRun\): it takes dryRun, now; nothing was removed\.$/],
    ['a dryRun of a string', () => platform.gc({ dryRun: 'yes' } as never), /^gc's dryRun must be true or false \(or left out: a real pass\), got "yes"; nothing was removed\.$/],
    ['null', () => platform.gc(null as never), /^gc takes an options object \(\{dryRun\?: boolean, now\?: epoch ms\}\) or none, got null; nothing was removed\.$/],
    ['a clock that is no time', () => platform.gc({ now: 'tomorrow' } as never), /^gc's now must be a time in epoch milliseconds .*got "tomorrow"; nothing was removed\.$/],
    ['collectJobLogs, misspelt', () => platform.collectJobLogs({ dry_run: true, now: later } as never), /^collectJobLogs does not take the option 'dry_run'/],
    ['compactEvents has no clock', () => platform.compactEvents({ now: later } as never), /^compactEvents does not take the option 'now': it takes dryRun; nothing was removed\.$/],
    ['compactEvents, a dryRun of 1', () => platform.compactEvents({ dryRun: 1 } as never), /^compactEvents's dryRun must be true or false .*got 1;/],
  ];
  for (const [what, call, message] of cases) {
    const err = await t.throwsAsync(call(), { instanceOf: RangeError }, what);
    t.regex(err?.message ?? '', message, what);
  }
  t.is(platform.log.firstId(), 1, 'no event removed');
  t.is(platform.log.latestId(), latest);
  t.deepEqual(runs.filter((id) => !existsSync(runLogDir(dir, id))), [], 'no log removed');
  // The options as they are spelt still work: a dry run counts, removes nothing.
  const dry = await platform.gc({ dryRun: true, now: later });
  t.true(dry.dry_run);
  t.is(dry.removed_runs, runs.length);
  t.is(platform.log.firstId(), 1);
});
