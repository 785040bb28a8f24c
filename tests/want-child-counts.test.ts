/**
 * A want's counts of its derived wants still active and failed (`children_active`, `children_failed`), which its status
 * is derived from instead of a walk of them: kept by the fold, and counted again from the statuses when a compaction
 * base is loaded (a base written before the counts has none; one with wrong counts is not believed). Cases a review
 * of session 32 found the property tests reach only now and then, fixed here.
 */
import test from 'ava';
import type { BuildEvent } from '../lib/events/build-event.js';
import { listItems } from '../lib/state/append-list.js';
import { TERMINAL_WANT_STATUSES, initialState, type BuildState } from '../lib/state/build-state.js';
import { reduce } from '../lib/state/reduce.js';
import { fromSnapshot, snapshotFromLines, snapshotLines, type SnapshotLine } from '../lib/state/snapshot.js';
import { canon } from './helpers/state-canon.js';

let id = 0;
const ev = (type: string, body: unknown): BuildEvent => ({ event_id: ++id, timestamp: 1_767_000_000_000 + id, type, [type]: body }) as unknown as BuildEvent;
const want = (wid: string, refs: string[], parent = '', backfill = '') =>
  ev('want_created', {
    want_id: wid, partitions: refs, comment: '', data_timestamp: 0, ttl_seconds: 0, sla_seconds: 0, source: parent ? 'derived' : 'user',
    parent_want_id: parent, root_want_id: parent ? 'w-1' : wid, rebuild: 'missing', priority: 0, backfill_id: backfill, max_concurrent_job_runs: 0, pattern: '', schedule_tick: 0,
  });
const queued = (run: string, outputs: string[], wants: string[]) =>
  ev('job_run_queued', { job_run_id: run, job_label: 'j', config: { outputs, inputs: [], args: [], env: {} }, want_ids: wants, attempt: 1, exec: ['true'], timeout_seconds: 0, input_builds: [], job_fingerprint: '', output_inputs: [], retry_of: '' });
const started = (run: string) => ev('job_run_started', { job_run_id: run, pid: 1, worker: 'local', started_at: 0 });
const failed = (run: string) => ev('job_run_failed', { job_run_id: run, exit_code: 1, signal: '', reason: 'exit 1', retry_at: 0, ended_at: 0 });
const succeeded = (run: string, refs: string[]) => ev('job_run_succeeded', { job_run_id: run, builds: refs.map((ref) => ({ partition_ref: ref, build_id: `b-${run}-${ref}` })), ended_at: 0 });
const fold = (events: BuildEvent[], s: BuildState = initialState()) => events.reduce(reduce, s);

/** Each want's counts as a walk of the derived wants it lists finds them. */
function walked(s: BuildState, wantId: string): { active: number; failed: number } {
  let active = 0;
  let failedCount = 0;
  for (const childId of listItems(s.wants.get(wantId)!.child_want_ids)) {
    const child = s.wants.get(childId);
    if (child?.status === 'failed' || child?.status === 'upstream_failed') failedCount++;
    else if (child && !TERMINAL_WANT_STATUSES.has(child.status)) active++;
  }
  return { active, failed: failedCount };
}

const counts = (s: BuildState, wantId: string) => ({ active: s.wants.get(wantId)!.children_active, failed: s.wants.get(wantId)!.children_failed });

/** A compaction base of `s` as a file holds it, each want line changed by `change`, loaded. */
function throughBase(s: BuildState, change: (want: Record<string, unknown>) => Record<string, unknown>): BuildState {
  const lines = (JSON.parse(JSON.stringify([...snapshotLines(s)])) as SnapshotLine[]).map((l) =>
    l[0] === 'want' ? (['want', change(l[1] as unknown as Record<string, unknown>)] as unknown as SnapshotLine) : l,
  );
  return fromSnapshot(snapshotFromLines(s.last_event_id, lines));
}

test('a base written before the counts, or with wrong ones, loads with the counts of the statuses, and folds on as the full fold', (t) => {
  id = 0;
  const head = [want('w-1', ['a']), want('w-2', ['b'], 'w-1')];
  const tail = [queued('r-1', ['b'], ['w-2']), started('r-1'), failed('r-1')];
  const base = fold(head);
  t.deepEqual(counts(base, 'w-1'), { active: 1, failed: 0 });
  const full = fold(tail, base);
  t.is(full.wants.get('w-1')!.status, 'upstream_failed');
  const before = throughBase(base, ({ children_active: _a, children_failed: _f, ...old }) => old);
  const wrong = throughBase(base, (w) => ({ ...w, children_active: 7, children_failed: 3 }));
  for (const loaded of [before, wrong]) {
    t.deepEqual(counts(loaded, 'w-1'), walked(loaded, 'w-1'));
    t.deepEqual(canon(loaded), canon(base));
    t.deepEqual(canon(fold(tail, loaded)), canon(full));
  }
});

test('a base counts a derived want upstream_failed as failed', (t) => {
  id = 0;
  const s = fold([want('w-1', ['a']), want('w-2', ['b'], 'w-1'), want('w-3', ['c'], 'w-2'), queued('r-1', ['c'], ['w-3']), started('r-1'), failed('r-1')]);
  t.is(s.wants.get('w-2')!.status, 'upstream_failed');
  t.deepEqual(counts(s, 'w-1'), { active: 0, failed: 1 });
  const loaded = throughBase(s, (w) => w);
  t.deepEqual(counts(loaded, 'w-1'), { active: 0, failed: 1 });
  t.deepEqual(canon(loaded), canon(s));
});

test('a want held aside while its derived want ends keeps the stored counts: it settles, not stays upstream_building', (t) => {
  id = 0;
  // One run builds the derived want's b and the parent's a: the event moves both wants' partitions, and the parent is
  // held (its partition counts changed) while its derived want ends.
  const s = fold([want('w-1', ['a', 'c']), want('w-2', ['b'], 'w-1'), queued('r-1', ['b', 'a'], []), started('r-1'), succeeded('r-1', ['b', 'a'])]);
  t.is(s.wants.get('w-2')!.status, 'successful');
  t.deepEqual(counts(s, 'w-1'), { active: 0, failed: 0 });
  t.deepEqual(counts(s, 'w-1'), walked(s, 'w-1'));
  t.is(s.wants.get('w-1')!.status, 'idle', 'c is not built, and nothing builds it: idle');
});

test('a backfill with an active derived want and nothing of its own waiting is upstream_building', (t) => {
  id = 0;
  const s = fold([want('w-1', ['a'], '', 'bf-1'), queued('r-1', ['b'], []), want('w-2', ['b'], 'w-1')]);
  t.deepEqual(counts(s, 'w-1'), { active: 1, failed: 0 });
  t.is(s.wants.get('w-1')!.status, 'upstream_building');
});
