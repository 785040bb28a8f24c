/**
 * A want's runs and rebuilds at scale: a want of thousands of runs folds in linear time (its lists are append-lists),
 * `rebuilt` keeps the first 1,000 partitions and `rebuilt_total` counts every rebuild, its derived wants' too.
 */
import test from 'ava';
import type { BuildEvent } from '../lib/events/build-event.js';
import { initialState, type BuildState } from '../lib/state/build-state.js';
import { reduce } from '../lib/state/reduce.js';
import { listLength } from '../lib/state/append-list.js';
import { fromSnapshot, snapshotFromLines, snapshotLines, toSnapshot, type SnapshotLine } from '../lib/state/snapshot.js';
import { wantView } from '../lib/server/views.js';

let id = 0;
const ev = (type: string, body: unknown): BuildEvent => ({ event_id: ++id, timestamp: 1_767_000_000_000 + id, type, [type]: body }) as unknown as BuildEvent;
const want = (wid: string, refs: string[], rebuild: string, parent = '') =>
  ev('want_created', {
    want_id: wid, partitions: refs, comment: '', data_timestamp: 0, ttl_seconds: 0, sla_seconds: 0, source: parent ? 'derived' : 'user',
    parent_want_id: parent, root_want_id: parent || wid, rebuild, priority: 0, backfill_id: '', max_concurrent_job_runs: 0, pattern: '', schedule_tick: 0,
  });
const built = (wid: string, refs: string[], tag: string): BuildEvent[] =>
  refs.flatMap((ref) => {
    const r = `r-${tag}-${ref}`;
    return [
      ev('job_run_queued', { job_run_id: r, job_label: 'j', config: { outputs: [ref], inputs: [], args: [], env: {} }, want_ids: [wid], attempt: 1, exec: ['true'], timeout_seconds: 0, input_builds: [], job_fingerprint: '', output_inputs: [], retry_of: '' }),
      ev('job_run_started', { job_run_id: r, pid: 1, worker: 'local', started_at: 0 }),
      ev('job_run_succeeded', { job_run_id: r, builds: [{ partition_ref: ref, build_id: `b-${tag}-${ref}` }], ended_at: 0 }),
    ];
  });
const fold = (events: BuildEvent[], s: BuildState = initialState()) => events.reduce(reduce, s);

test('a want rebuilding 1,200 partitions lists the first 1,000 and counts 1,200; its parent counts its derived want\'s rebuilds', (t) => {
  id = 0;
  const refs = Array.from({ length: 1200 }, (_, i) => `p/${i}`);
  let s = fold([want('w-1', refs, 'missing'), ...built('w-1', refs, 'a')]);
  t.is(listLength(s.wants.get('w-1')!.job_run_ids), 1200);
  s = fold([want('w-2', [], 'all'), want('w-3', refs, 'all', 'w-2'), ...built('w-3', refs, 'b')], s);
  const derived = s.wants.get('w-3')!;
  t.is(derived.rebuilt.length, 1000);
  t.is(derived.rebuilt_total, 1200);
  t.is(s.wants.get('w-2')!.rebuilt_total, 1200, 'the parent counts what was rebuilt for its derived want');
  const view = wantView(s, s.wants.get('w-2')!);
  t.is(view.rebuilt.length, 1000);
  t.is(view.rebuilt_total, 1200);
  t.is(view.child_wants_total, 1);
  t.is(wantView(s, derived).job_runs_total, 1200);
  // Through the records a compaction base keeps (lists written plain, read back as append-lists): the same.
  const lines = JSON.parse(JSON.stringify([...snapshotLines(s)])) as SnapshotLine[];
  const want3 = lines.find((l) => l[0] === 'want' && (l[1] as { want_id: string }).want_id === 'w-3')![1] as { job_run_ids: unknown };
  t.true(Array.isArray(want3.job_run_ids), 'a file holds a want\'s runs as a plain list');
  const again = fromSnapshot(snapshotFromLines(s.last_event_id, lines));
  t.deepEqual(wantView(again, again.wants.get('w-3')!), wantView(s, derived));
  t.deepEqual(wantView(fromSnapshot(toSnapshot(s)), s.wants.get('w-2')!), wantView(s, s.wants.get('w-2')!));
});

test('a compaction base written before rebuilt_total gives a want its derived wants\' rebuilds, as the fold counts them', (t) => {
  id = 0;
  const refs = ['p/1', 'p/2'];
  let s = fold([want('w-1', refs, 'missing'), ...built('w-1', refs, 'a')]);
  s = fold([want('w-2', [], 'all'), want('w-3', refs, 'all', 'w-2'), ...built('w-3', refs, 'b')], s);
  t.is(s.wants.get('w-2')!.rebuilt_total, 2);
  // The file of before: no rebuilt_total in any want's line.
  const lines = (JSON.parse(JSON.stringify([...snapshotLines(s)])) as SnapshotLine[]).map((l) => {
    if (l[0] !== 'want') return l;
    const { rebuilt_total: _gone, ...old } = l[1] as unknown as Record<string, unknown>;
    return ['want', old] as unknown as SnapshotLine;
  });
  const loaded = fromSnapshot(snapshotFromLines(s.last_event_id, lines));
  t.is(loaded.wants.get('w-3')!.rebuilt_total, 2);
  t.is(loaded.wants.get('w-2')!.rebuilt_total, 2, 'the parent counts what was rebuilt for its derived want');
  t.deepEqual(wantView(loaded, loaded.wants.get('w-2')!).rebuilt, ['p/1', 'p/2']);
});
