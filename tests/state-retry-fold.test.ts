/**
 * A run's `retried_by` is folded from its retry's `job_run_queued` (`retry_of`): each attempt names its own retry,
 * however deep the chain; a batch retried in halves names its first half; the record survives a snapshot (the
 * compaction base's records, format 9) and a base of format 8, which has no such field, loads it as '' and the view
 * works it out as before. Old logs' events (no `retry_of` on the wire) decode with none.
 */
import test from 'ava';
import type { BuildEvent, EventPayload } from '../lib/events/build-event.js';
import { decodeEvent, encodeEvent } from '../lib/events/event-codec.js';
import { schema } from '../lib/proto/schema.js';
import { initialState, withJobRun, type BuildState, type JobRunRecord } from '../lib/state/build-state.js';
import { SNAPSHOT_FORMAT, SNAPSHOT_FORMATS_READ, fromSnapshot, snapshotFromLines, snapshotLines, toSnapshot, type SnapshotLine } from '../lib/state/snapshot.js';
import { jobRunView } from '../lib/server/views.js';
import { canon } from './helpers/state-canon.js';
import { T0, apply } from './helpers/fold-payloads.js';

const wantCreated = (want_id: string, partitions: string[]): EventPayload => ({
  type: 'want_created',
  want_created: {
    want_id, partitions, comment: '', data_timestamp: 0, ttl_seconds: 0, sla_seconds: 0, source: 'user', parent_want_id: '', root_want_id: '',
    rebuild: 'missing', priority: 0, backfill_id: '', max_concurrent_job_runs: 0, pattern: '', schedule_tick: 0,
  },
});
const queued = (job_run_id: string, outputs: string[], attempt: number, retry_of = ''): EventPayload => ({
  type: 'job_run_queued',
  job_run_queued: {
    job_run_id, job_label: 'job', config: { outputs, inputs: [], args: [], env: {} }, want_ids: ['w-1'], attempt, exec: ['true'],
    timeout_seconds: 0, input_builds: [], job_fingerprint: '', output_inputs: [], retry_of,
  },
});
const started = (job_run_id: string): EventPayload => ({ type: 'job_run_started', job_run_started: { job_run_id, pid: 7, worker: 'local', started_at: 0 } });
const failed = (job_run_id: string, retry_at: number): EventPayload => ({
  type: 'job_run_failed',
  job_run_failed: { job_run_id, exit_code: 1, signal: '', reason: 'exited with code 1', retry_at, ended_at: 0 },
});
const succeeded = (job_run_id: string): EventPayload => ({ type: 'job_run_succeeded', job_run_succeeded: { job_run_id, builds: [], ended_at: 0 } });

const retriedBy = (s: BuildState) => [...s.job_runs.values()].map((r) => [r.job_run_id, r.retried_by]);
const viewed = (s: BuildState) => [...s.job_runs.values()].map((r) => [r.job_run_id, jobRunView(s, r).retried_by]);

/** r-1 fails, retried as r-2, which fails, retried as r-3, which succeeds. */
function chainOfThree(retryOf = (id: string) => id): BuildState {
  return apply(
    initialState(),
    wantCreated('w-1', ['p']),
    queued('r-1', ['p'], 1), started('r-1'), failed('r-1', T0 + 60_000),
    queued('r-2', ['p'], 2, retryOf('r-1')), started('r-2'), failed('r-2', T0 + 120_000),
    queued('r-3', ['p'], 3, retryOf('r-2')), started('r-3'), succeeded('r-3'),
  );
}

test('each attempt of a chain records its own retry: r-1 by r-2, r-2 by r-3, r-3 by none; the view shows the same', (t) => {
  let s = apply(initialState(), wantCreated('w-1', ['p']), queued('r-1', ['p'], 1), started('r-1'), failed('r-1', T0 + 60_000));
  t.is(s.job_runs.get('r-1')!.retried_by, '', 'failed, its retry not queued yet');
  t.is(jobRunView(s, s.job_runs.get('r-1')!).retried_by, null);
  s = apply(s, queued('r-2', ['p'], 2, 'r-1'));
  t.is(s.job_runs.get('r-1')!.retried_by, 'r-2', 'recorded when the retry is queued');
  const chain = chainOfThree();
  t.deepEqual(retriedBy(chain), [['r-1', 'r-2'], ['r-2', 'r-3'], ['r-3', '']]);
  t.deepEqual(viewed(chain), [['r-1', 'r-2'], ['r-2', 'r-3'], ['r-3', null]]);
});

test('a log without retry_of (written before it) records none; the view works out the latest retry as it did before', (t) => {
  const old = chainOfThree(() => '');
  t.deepEqual(retriedBy(old), [['r-1', ''], ['r-2', ''], ['r-3', '']]);
  // The read-time rule: the run that has r-1's output now is r-3, not its next attempt, so r-1 reads none.
  t.deepEqual(viewed(old), [['r-1', null], ['r-2', 'r-3'], ['r-3', null]]);
});

test('a batch retried in halves: both halves name it, its retried_by is the first half (the one with its first output)', (t) => {
  const s = apply(
    initialState(),
    wantCreated('w-1', ['a', 'b', 'c']),
    queued('r-1', ['a', 'b', 'c'], 1), started('r-1'), failed('r-1', T0 + 60_000),
    queued('r-2', ['a', 'b'], 2, 'r-1'),
    queued('r-3', ['c'], 2, 'r-1'),
  );
  t.is(s.job_runs.get('r-1')!.retried_by, 'r-2');
  t.is(s.job_runs.get('r-2')!.retried_by, '');
  t.is(s.job_runs.get('r-3')!.retried_by, '');
});

test('a retry_of naming no run, or the run itself, changes no other run; a queued event seen twice changes nothing', (t) => {
  const base = apply(initialState(), wantCreated('w-1', ['p']), queued('r-1', ['p'], 1), started('r-1'), failed('r-1', T0 + 60_000));
  const ghost = apply(base, queued('r-2', ['p'], 2, 'r-99'));
  t.deepEqual(retriedBy(ghost), [['r-1', ''], ['r-2', '']]);
  const self = apply(base, queued('r-2', ['p'], 2, 'r-2'));
  t.deepEqual(retriedBy(self), [['r-1', ''], ['r-2', '']]);
  const once = apply(base, queued('r-2', ['p'], 2, 'r-1'));
  const twice = apply(once, queued('r-2', ['p'], 2, 'r-1'), queued('r-3', ['p'], 2, 'r-1'));
  t.is(twice.job_runs.get('r-1')!.retried_by, 'r-2', 'the first retry stays the one named');
});

test('the records format keeps retried_by (format 9); a base of format 8 loads it as \'\' in the fold\'s field order, the view falling back', (t) => {
  t.is(SNAPSHOT_FORMAT, 9);
  t.deepEqual(SNAPSHOT_FORMATS_READ, [6, 7, 8, 9]);
  const chain = chainOfThree();
  // Through JSON, as the file holds its records: the chain is whole after a load.
  const loaded = fromSnapshot(JSON.parse(JSON.stringify(toSnapshot(chain))));
  t.deepEqual(canon(loaded), canon(chain));
  t.deepEqual(retriedBy(loaded), [['r-1', 'r-2'], ['r-2', 'r-3'], ['r-3', '']]);
  // A base written before the field: its run records lack it.
  const lines: SnapshotLine[] = [...snapshotLines(chain)].map((line) => {
    if (line[0] !== 'job_run') return line;
    const { retried_by: _dropped, ...old } = line[1];
    return ['job_run', old as unknown as JobRunRecord];
  });
  const snap = snapshotFromLines(chain.last_event_id, lines);
  for (const r of snap.job_runs) t.deepEqual(Object.keys(r), Object.keys(withJobRun(chain.job_runs.get('r-1')!, {})), 'in the fold\'s field order');
  const fromOld = fromSnapshot(snap);
  t.deepEqual(retriedBy(fromOld), [['r-1', ''], ['r-2', ''], ['r-3', '']]);
  t.deepEqual(viewed(fromOld), [['r-1', null], ['r-2', 'r-3'], ['r-3', null]], 'as the view worked it out before');
  // Events after such a base record the retries they queue.
  const after = apply(fromOld, wantCreated('w-2', ['q']), queued('r-4', ['q'], 1), started('r-4'), failed('r-4', T0 + 60_000), queued('r-5', ['q'], 2, 'r-4'));
  t.is(after.job_runs.get('r-4')!.retried_by, 'r-5');
});

test('retry_of travels the codec; an event of a log written before it (no field 10 on the wire) decodes with none', (t) => {
  const e = { event_id: 4, timestamp: T0, ...queued('r-2', ['p'], 2, 'r-1') } as BuildEvent;
  t.deepEqual(decodeEvent(encodeEvent(e)), e);
  // What an older version wrote: the same message without the field.
  const wire = schema.BuildEvent.toObject(schema.BuildEvent.decode(encodeEvent(e))) as { job_run_queued: Record<string, unknown> };
  delete wire.job_run_queued['retry_of'];
  const oldBytes = schema.BuildEvent.encode(schema.BuildEvent.fromObject(wire)).finish();
  t.true(oldBytes.length < encodeEvent(e).length, 'the field is not on the old wire');
  const decoded = decodeEvent(oldBytes);
  t.is(decoded.type === 'job_run_queued' ? decoded.job_run_queued.retry_of : undefined, '');
  // And a run that is no retry writes nothing for it: its bytes are those an older version wrote.
  const first = { event_id: 1, timestamp: T0, ...queued('r-1', ['p'], 1) } as BuildEvent;
  const firstWire = schema.BuildEvent.toObject(schema.BuildEvent.decode(encodeEvent(first))) as { job_run_queued: Record<string, unknown> };
  t.false('retry_of' in firstWire.job_run_queued);
});
