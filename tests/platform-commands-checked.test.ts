/**
 * The embedding API's writes are refused as the JSON API refuses them: a typed object TypeScript cannot vouch for
 * at run time (NaN, a policy cast from a string, an empty list) is a 400 with why, and nothing is recorded.
 */
import test from 'ava';
import type { CreateBackfillRequest, CreateTaintRequest, CreateWantRequest } from '../lib/orchestrator/command.js';
import { backfillView, backfillWant } from '../lib/server/backfill-queries.js';
import { makeWorkspace, openPlatform, waitForWant } from './helpers/jobs-fixture.js';

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
    ['a policy cast from a string', () => platform.createWant(want({ rebuild: 'bogus' as 'all' })), /rebuild must be one of missing, stale, all, absent, got "bogus"/],
    ['a negative ttl', () => platform.createWant(want({ ttl_seconds: -1 })), /ttl_seconds must be a whole number/],
    ['a NaN sla', () => platform.createWant(want({ sla_seconds: NaN })), /sla_seconds must be a whole number from 0 to \d+, got NaN/],
    ['a fractional priority', () => platform.createWant(want({ priority: 1.5 })), /priority must be a whole number/],
    ['a backfill policy cast', () => platform.createBackfill(backfill({ policy: 'nope' as 'all' })), /policy must be one of missing, failed, all/],
    ['a negative cap', () => platform.createBackfill(backfill({ max_concurrent_job_runs: -3 })), /max_concurrent_job_runs/],
    ['a comment of null (JavaScript)', () => platform.createWant({ partitions: ['a/x'], comment: null } as unknown as CreateWantRequest), /^comment must be a string, got null/],
    ['downstream a string (JavaScript)', () => platform.createTaint({ partitions: ['a/x'], downstream: 'yes' } as unknown as CreateTaintRequest), /downstream must be true or false, got a string/],
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
