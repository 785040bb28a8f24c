/**
 * Staleness kept incrementally by `reduce` (only the consumers of what changed are looked at again) equals
 * staleness recomputed from scratch, over random histories of builds, taints and job edits on a small DAG.
 */
import test from 'ava';
import fc from 'fast-check';
import type { BuildEvent, BuildInput, EventPayload } from '../lib/events/build-event.js';
import { buildIsTainted, buildLineage, initialState, type BuildState, type TaintRecord } from '../lib/state/build-state.js';
import { fromSnapshot, toSnapshot } from '../lib/state/snapshot.js';
import { OrderedMap } from '../lib/state/ordered-map.js';
import { reduce } from '../lib/state/reduce.js';
import { consumersPage, staleFromScratch } from '../lib/state/staleness.js';
import { partitionDetail, taintView } from '../lib/server/lineage-queries.js';

const REFS = ['p0', 'p1', 'p2', 'p3', 'p4', 'p5'];
const LABELS = ['job-a', 'job-b'];

/** How a run of a rebuild ends: built, failed, canceled, succeeded with no build recorded, left going, or given up by its want during a retry. */
const ENDS = ['built', 'built', 'built', 'built', 'built', 'built', 'failed', 'canceled', 'unbuilt', 'going', 'abandoned'] as const;
type End = (typeof ENDS)[number];

type Op =
  | { op: 'build'; ref: number; inputs: Array<{ ref: number; older: boolean }>; label: number; end: number }
  | { op: 'taint'; refs: number[] }
  | { op: 'jobs'; label: number; fingerprint: string };

const arbOp: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ op: fc.constant('build' as const), ref: fc.nat({ max: 5 }), inputs: fc.array(fc.record({ ref: fc.nat({ max: 5 }), older: fc.boolean() }), { maxLength: 3 }), label: fc.nat({ max: 1 }), end: fc.nat({ max: ENDS.length - 1 }) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('taint' as const), refs: fc.array(fc.nat({ max: 5 }), { minLength: 1, maxLength: 2 }) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('jobs' as const), label: fc.nat({ max: 1 }), fingerprint: fc.constantFrom('f1', 'f2', 'f3') }) },
);

/** Turns ops into a valid log: a build consumes builds of lower refs only (lineage is acyclic), current or older. */
function history(ops: Op[]): BuildEvent[] {
  const events: EventPayload[] = [];
  const builds = new Map<string, string[]>();
  const fingerprints = new Map<string, string>();
  let n = 0;
  let taints = 0;
  for (const o of ops) {
    if (o.op === 'build') {
      const ref = REFS[o.ref]!;
      const inputs = o.inputs
        .filter((i) => i.ref < o.ref && (builds.get(REFS[i.ref]!)?.length ?? 0) > 0)
        .map((i) => {
          const list = builds.get(REFS[i.ref]!)!;
          return { partition_ref: REFS[i.ref]!, build_id: (o.inputs.length > 0 && i.older ? list[0] : list[list.length - 1])! };
        })
        .filter((i, k, all) => all.findIndex((j) => j.partition_ref === i.partition_ref) === k);
      const build_id = `b-${++n}`;
      const end = ENDS[o.end]!;
      if (end === 'built') builds.set(ref, [...(builds.get(ref) ?? []), build_id]);
      const label = LABELS[o.label]!;
      events.push(...buildOf(ref, build_id, `r-${n}`, label, inputs, fingerprints.get(label) ?? '', end));
    } else if (o.op === 'taint') {
      const refs = o.refs.map((r) => REFS[r]!).filter((r) => builds.has(r));
      if (refs.length > 0) events.push({ type: 'taint_created', taint_created: { taint_id: `t-${++taints}`, partitions: refs, reason: '', downstream: false } });
    } else {
      const label = LABELS[o.label]!;
      fingerprints.set(label, o.fingerprint);
      events.push({ type: 'job_definitions_changed', job_definitions_changed: { jobs: [{ job_label: label, fingerprint: o.fingerprint }] } });
    }
  }
  return events.map((e, i) => ({ event_id: i + 1, timestamp: 1_700_000_000_000 + i, ...e }) as BuildEvent);
}

/** A run queued with the builds it consumes, then ended as `end` says (by default succeeded with the build of its output). */
function buildOf(ref: string, build_id: string, job_run_id: string, job_label: string, inputs: BuildInput[], job_fingerprint: string, end: End = 'built'): EventPayload[] {
  // A want of its own for 'abandoned': canceled while its run waits out a retry, which leaves the partition canceled.
  const wantId = `w-${job_run_id}`;
  const want: EventPayload[] =
    end === 'abandoned'
      ? [
          {
            type: 'want_created',
            want_created: {
              want_id: wantId, partitions: [ref], comment: '', data_timestamp: 0, ttl_seconds: 0, sla_seconds: 0, source: 'user', parent_want_id: '',
              root_want_id: wantId, rebuild: 'all', priority: 0, backfill_id: '', max_concurrent_job_runs: 0, pattern: '', schedule_tick: 0,
            },
          },
        ]
      : [];
  const ending: Record<End, EventPayload[]> = {
    built: [{ type: 'job_run_succeeded', job_run_succeeded: { job_run_id, builds: [{ partition_ref: ref, build_id }], ended_at: 0 } }],
    failed: [{ type: 'job_run_failed', job_run_failed: { job_run_id, exit_code: 1, signal: '', reason: '', retry_at: 0, ended_at: 0 } }],
    canceled: [{ type: 'job_run_canceled', job_run_canceled: { job_run_id, reason: 'test' } }],
    unbuilt: [{ type: 'job_run_succeeded', job_run_succeeded: { job_run_id, builds: [], ended_at: 0 } }],
    going: [],
    abandoned: [
      { type: 'job_run_failed', job_run_failed: { job_run_id, exit_code: 1, signal: '', reason: '', retry_at: 9_999_999_999_999, ended_at: 0 } },
      { type: 'want_canceled', want_canceled: { want_id: wantId, reason: 'test' } },
    ],
  };
  return [
    ...want,
    {
      type: 'job_run_queued',
      job_run_queued: {
        job_run_id,
        job_label,
        config: { outputs: [ref], inputs: inputs.map((i) => ({ dep_type: 'MATERIALIZE' as const, partition_ref: i.partition_ref })), args: [], env: {} },
        want_ids: end === 'abandoned' ? [wantId] : [],
        attempt: 1,
        exec: [],
        timeout_seconds: 0,
        input_builds: inputs,
        job_fingerprint,
        output_inputs: [], retry_of: '',
      },
    },
    ...ending[end],
  ];
}

function fold(events: BuildEvent[]): BuildState {
  return events.reduce(reduce, initialState());
}

test('incremental staleness equals staleness recomputed from scratch, after every event of random histories', (t) => {
  let staleSeen = 0;
  t.notThrows(() =>
    fc.assert(
      fc.property(fc.array(arbOp, { maxLength: 40 }), (ops) => {
        let state = initialState();
        for (const event of history(ops)) {
          state = reduce(state, event);
          const scratch = staleFromScratch(state);
          for (const p of state.partitions.values()) {
            if (p.stale_reasons.length > 0) staleSeen++;
            if (JSON.stringify(p.stale_reasons) !== JSON.stringify(scratch.get(p.ref) ?? [])) {
              throw new Error(`${p.ref} after event ${event.event_id} (${event.type}): incremental ${JSON.stringify(p.stale_reasons)} vs scratch ${JSON.stringify(scratch.get(p.ref))}`);
            }
          }
        }
      }),
      { numRuns: 600 },
    ),
  );
  t.true(staleSeen > 100, `the histories make partitions stale (${staleSeen} times), so the property is not vacuous`);
});

/** What consumed each build, from scratch: the partitions whose current build lists it as an input. */
function consumersFromScratch(state: BuildState): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const p of state.partitions.values()) {
    const b = p.build_id ? state.builds.get(p.build_id) : undefined;
    for (const input of b ? buildLineage(state, b).inputs : []) out.set(input.build_id, [...(out.get(input.build_id) ?? []), p.ref].sort());
  }
  return out;
}

test("a build's consumers, and each taint's count of refs still tainted, are kept by the fold as they are from scratch after every event of random histories", (t) => {
  let replacedSeen = 0;
  let taintsPartlyRebuilt = 0;
  t.notThrows(() =>
    fc.assert(
      fc.property(fc.array(arbOp, { minLength: 20, maxLength: 40 }), (ops) => {
        let state = initialState();
        for (const event of history(ops)) {
          state = reduce(state, event);
          const scratch = consumersFromScratch(state);
          for (const b of state.builds.values()) {
            const want = scratch.get(b.build_id) ?? [];
            const all = consumersPage(state, b.build_id, 0, 100);
            const tail = consumersPage(state, b.build_id, 1, 1);
            if (JSON.stringify(all.refs) !== JSON.stringify(want) || all.total !== want.length || JSON.stringify(tail.refs) !== JSON.stringify(want.slice(1, 2))) {
              throw new Error(`${b.build_id} after event ${event.event_id} (${event.type}): index ${JSON.stringify(all)} vs scratch ${JSON.stringify(want)}`);
            }
          }
          // Each taint's count of its refs still tainted, kept as they flip, equals one counted now.
          for (const taint of state.taints.values()) {
            // Those whose current build is tainted and older than the taint: a later taint's mark on a rebuild is not its.
            const counted = [...new Set(taint.partitions)].filter((ref) => {
              const p = state.partitions.get(ref);
              return buildIsTainted(p) && p!.built_event_id < taint.event_id;
            }).length;
            const kept = taintView(taint, { offset: 0, limit: 1 }).still_tainted;
            if (kept !== counted) throw new Error(`${taint.taint_id} after event ${event.event_id} (${event.type}): kept ${kept} vs counted ${counted}`);
            if (counted > 0 && counted < taint.partitions.length) taintsPartlyRebuilt++;
          }
          // The case the index must drop: a consumer rebuilt without an input its old build had.
          for (const old of state.builds.values()) {
            const current = state.partitions.get(old.partition_ref)?.build_id;
            if (!current || current === old.build_id) continue;
            const now = new Set(buildLineage(state, state.builds.get(current)!).inputs.map((i) => i.build_id));
            if (buildLineage(state, old).inputs.some((i) => !now.has(i.build_id))) replacedSeen++;
          }
        }
      }),
      { numRuns: 150 },
    ),
  );
  t.true(taintsPartlyRebuilt > 100, `taints partly rebuilt (${taintsPartlyRebuilt} times)`);
  t.true(replacedSeen > 1000, `the histories replace builds (${replacedSeen} times), so the property is not vacuous`);
});

test('a rebuild marks direct consumers "rebuilt" and theirs "stale"; a job edit names the job; a new build clears it', (t) => {
  const built = (ref: string, build_id: string, inputs: Array<[string, string]>): EventPayload[] =>
    buildOf(ref, build_id, `r-${build_id}`, `job-${ref}`, inputs.map(([partition_ref, b]) => ({ partition_ref, build_id: b })), 'f1');
  const log = (payloads: EventPayload[]) => payloads.map((e, i) => ({ event_id: i + 1, timestamp: i, ...e }) as BuildEvent);
  const chain = [
    { type: 'job_definitions_changed', job_definitions_changed: { jobs: ['a', 'b', 'c'].map((r) => ({ job_label: `job-${r}`, fingerprint: 'f1' })) } } as EventPayload,
    ...built('a', 'b-1', []),
    ...built('b', 'b-2', [['a', 'b-1']]),
    ...built('c', 'b-3', [['b', 'b-2']]),
  ];
  let s = fold(log(chain));
  t.deepEqual([...s.partitions.values()].map((p) => p.stale_reasons.length), [0, 0, 0]);
  s = fold(log([...chain, ...built('a', 'b-4', [])]));
  t.deepEqual(s.partitions.get('a')!.stale_reasons, []);
  t.deepEqual(s.partitions.get('b')!.stale_reasons, ['input a was rebuilt since b-1']);
  t.deepEqual(s.partitions.get('c')!.stale_reasons, ['input b is stale']);
  s = fold(log([...chain, ...built('a', 'b-4', []), ...built('b', 'b-5', [['a', 'b-4']])]));
  t.deepEqual(s.partitions.get('b')!.stale_reasons, []);
  t.deepEqual(s.partitions.get('c')!.stale_reasons, ['input b was rebuilt since b-2']);
  s = fold(log([...chain, { type: 'job_definitions_changed', job_definitions_changed: { jobs: [{ job_label: 'job-c', fingerprint: 'f2' }] } }]));
  t.deepEqual(s.partitions.get('c')!.stale_reasons, ['job job-c changed since this build (fingerprint f1 -> f2)']);
  t.deepEqual(s.partitions.get('b')!.stale_reasons, []);
});

test("a tainted input stays tainted for its consumers while it is rebuilt and after that rebuild fails, until a new build replaces it; so does one tainted mid-rebuild", (t) => {
  const built = (ref: string, build_id: string, inputs: Array<[string, string]>, end: End = 'built'): EventPayload[] =>
    buildOf(ref, build_id, `r-${build_id}`, `job-${ref}`, inputs.map(([partition_ref, b]) => ({ partition_ref, build_id: b })), '', end);
  const log = (payloads: EventPayload[]) => payloads.map((e, i) => ({ event_id: i + 1, timestamp: i, ...e }) as BuildEvent);
  const taint: EventPayload = { type: 'taint_created', taint_created: { taint_id: 't-1', partitions: ['a'], reason: 'bad rows', downstream: false } };
  const chain = [...built('a', 'b-1', []), ...built('b', 'b-2', [['a', 'b-1']])];
  const reasonsOfB = (payloads: EventPayload[]) => fold(log([...chain, ...payloads])).partitions.get('b')!.stale_reasons;
  t.deepEqual(reasonsOfB([]), []);
  t.deepEqual(reasonsOfB([taint]), ['input a is tainted']);
  t.deepEqual(reasonsOfB([taint, ...built('a', 'b-3', [], 'going')]), ['input a is tainted'], 'while it is rebuilt');
  const failedAgain = fold(log([...chain, taint, ...built('a', 'b-3', [], 'failed')]));
  t.is(failedAgain.partitions.get('a')!.status, 'tainted', 'a failed rebuild leaves it as its build is');
  t.deepEqual(failedAgain.partitions.get('b')!.stale_reasons, ['input a is tainted'], 'its rebuild failed: the tainted build is still the one b consumed');
  t.deepEqual(reasonsOfB([taint, ...built('a', 'b-3', [], 'canceled')]), ['input a is tainted'], 'its rebuild was canceled');
  const stillTainted = (payloads: EventPayload[]) => {
    const s = fold(log([...chain, taint, ...payloads]));
    return taintView(s.taints.get('t-1')!, { offset: 0, limit: 10 }).still_tainted;
  };
  t.is(stillTainted(built('a', 'b-3', [], 'canceled')), 1, 'the taint counts it still tainted after a canceled rebuild');
  t.is(stillTainted(built('a', 'b-3', [], 'failed')), 1);
  t.is(stillTainted(built('a', 'b-3', [])), 0, 'rebuilt');
  const detailOfA = (payloads: EventPayload[]) =>
    partitionDetail(fold(log([...chain, taint, ...payloads])), 'a', { builds_offset: 0, builds_limit: 5, downstream_limit: 5 })!;
  t.like(detailOfA(built('a', 'b-3', [], 'failed')), { status: 'tainted', build_tainted: true }, 'its detail says its build is still tainted');
  t.like(detailOfA(built('a', 'b-3', [])), { status: 'live', build_tainted: false });
  t.deepEqual(reasonsOfB([taint, ...built('a', 'b-3', [], 'failed'), ...built('a', 'b-4', [])]), ['input a was rebuilt since b-1'], 'a new build replaces it');
  // Tainted while a rebuild (not for a taint) runs: the taint holds should that run fail.
  const midRebuild = [...built('a', 'b-3', [], 'going'), taint, { type: 'job_run_failed', job_run_failed: { job_run_id: 'r-b-3', exit_code: 1, signal: '', reason: '', retry_at: 0, ended_at: 0 } } as EventPayload];
  t.deepEqual(reasonsOfB(midRebuild.slice(0, 1)), ['input a is being rebuilt']);
  t.deepEqual(reasonsOfB(midRebuild.slice(0, 2)), ['input a is tainted']);
  t.deepEqual(reasonsOfB(midRebuild), ['input a is tainted']);
  const s = fold(log([...chain, ...midRebuild]));
  t.deepEqual(staleFromScratch(s).get('b'), ['input a is tainted'], 'the fold from scratch agrees');
});

test('a taint whose refs were rebuilt stays at 0 still tainted when a later taint marks the new builds, through a snapshot too', (t) => {
  const built = (ref: string, build_id: string): EventPayload[] => buildOf(ref, build_id, `r-${build_id}`, `job-${ref}`, [], '');
  const log = (payloads: EventPayload[]) => payloads.map((e, i) => ({ event_id: i + 1, timestamp: i, ...e }) as BuildEvent);
  const taint = (taint_id: string, partitions: string[]): EventPayload => ({ type: 'taint_created', taint_created: { taint_id, partitions, reason: '', downstream: false } });
  const still = (s: BuildState) => [...s.taints.values()].map((x) => [x.taint_id, taintView(x, { offset: 0, limit: 1 }).still_tainted]);
  const history = [...built('a', 'b-1'), ...built('c', 'b-2'), taint('t-1', ['a', 'c']), ...built('a', 'b-3')];
  t.deepEqual(still(fold(log(history))), [['t-1', 1]], 'a rebuilt, c not');
  const again = fold(log([...history, taint('t-2', ['a', 'c'])]));
  t.deepEqual(still(again), [['t-1', 1], ['t-2', 2]], "t-2's mark on b-3 is not t-1's: t-1 still counts only c");
  const rebuilt = fold(log([...history, taint('t-2', ['a', 'c']), ...built('a', 'b-4'), ...built('c', 'b-5')]));
  t.deepEqual(still(rebuilt), [['t-1', 0], ['t-2', 0]]);
  const loaded = fromSnapshot(JSON.parse(JSON.stringify(toSnapshot(again))));
  t.deepEqual(still(loaded), still(again), 'a snapshot counts them as the fold does');
  // A record written before taints kept their event (no event_id) counts whatever of its refs is tainted now.
  const old = toSnapshot(again);
  old.taints = old.taints.map(({ event_id: _dropped, ...rest }) => rest as unknown as TaintRecord);
  t.deepEqual(still(fromSnapshot(JSON.parse(JSON.stringify(old)))), [['t-1', 2], ['t-2', 2]]);
});

test('a retry queued with the definition of its first attempt does not set an edited job back', (t) => {
  const queued = (job_run_id: string, job_fingerprint: string): EventPayload => ({
    type: 'job_run_queued',
    job_run_queued: { job_run_id, job_label: 'j', config: { outputs: ['p'], inputs: [], args: [], env: {} }, want_ids: [], attempt: 1, exec: [], timeout_seconds: 0, input_builds: [], job_fingerprint, output_inputs: [], retry_of: '' },
  });
  const log = (payloads: EventPayload[]) => payloads.map((e, i) => ({ event_id: i + 1, timestamp: i, ...e }) as BuildEvent);
  const s = fold(
    log([
      queued('r-1', 'old'),
      { type: 'job_run_succeeded', job_run_succeeded: { job_run_id: 'r-1', builds: [{ partition_ref: 'p', build_id: 'b-1' }], ended_at: 0 } },
      { type: 'job_definitions_changed', job_definitions_changed: { jobs: [{ job_label: 'j', fingerprint: 'new' }] } },
      queued('r-2', 'old'),
    ]),
  );
  t.is(s.job_fingerprints.get('j'), 'new');
  t.deepEqual(s.partitions.get('p')!.stale_reasons, ['job j changed since this build (fingerprint old -> new)']);
});

test("a batch run's outputs each consume their own inputs: rebuilding one output drops only its own entries from the consumers index", (t) => {
  const log = (payloads: EventPayload[]) => payloads.map((e, i) => ({ event_id: i + 1, timestamp: i, ...e }) as BuildEvent);
  const single = (ref: string, build_id: string, run: string, inputs: BuildInput[]) => buildOf(ref, build_id, run, 'job-a', inputs, '');
  const batch: EventPayload[] = [
    {
      type: 'job_run_queued',
      job_run_queued: {
        job_run_id: 'r-batch',
        job_label: 'job-b',
        config: { outputs: ['a', 'b'], inputs: [{ dep_type: 'MATERIALIZE', partition_ref: 'x' }, { dep_type: 'MATERIALIZE', partition_ref: 'y' }], args: [], env: {} },
        want_ids: [],
        attempt: 1,
        exec: [],
        timeout_seconds: 0,
        input_builds: [{ partition_ref: 'x', build_id: 'b-x' }, { partition_ref: 'y', build_id: 'b-y' }],
        job_fingerprint: '',
        output_inputs: [{ output: 'a', inputs: ['x'] }, { output: 'b', inputs: ['y'] }], retry_of: '',
      },
    },
    { type: 'job_run_succeeded', job_run_succeeded: { job_run_id: 'r-batch', builds: [{ partition_ref: 'a', build_id: 'b-a1' }, { partition_ref: 'b', build_id: 'b-b1' }], ended_at: 0 } },
  ];
  const events = [...single('x', 'b-x', 'r-x', []), ...single('y', 'b-y', 'r-y', []), ...batch];
  const s1 = fold(log(events));
  t.deepEqual(consumersPage(s1, 'b-x', 0, 10), { refs: ['a'], total: 1 }, 'a consumed x only');
  t.deepEqual(consumersPage(s1, 'b-y', 0, 10), { refs: ['b'], total: 1 }, 'b consumed y only');
  // a rebuilt alone, from y now: x loses it, y gains it, b stays.
  const s2 = fold(log([...events, ...single('a', 'b-a2', 'r-a2', [{ partition_ref: 'y', build_id: 'b-y' }])]));
  t.deepEqual(consumersPage(s2, 'b-x', 0, 10), { refs: [], total: 0 });
  t.deepEqual(consumersPage(s2, 'b-y', 0, 10), { refs: ['a', 'b'], total: 2 });
});

test("a flip reads no taint whose count it does not move: a later taint's marks do not decode an earlier taint's refs", (t) => {
  const built = (ref: string, build_id: string): EventPayload[] => buildOf(ref, build_id, `r-${build_id}`, `job-${ref}`, [], '');
  const refs = Array.from({ length: 50 }, (_, i) => `p${i}`);
  const payloads: EventPayload[] = [
    ...refs.flatMap((ref, i) => built(ref, `b-${i + 1}`)),
    { type: 'taint_created', taint_created: { taint_id: 't-1', partitions: refs, reason: '', downstream: false } },
    ...refs.flatMap((ref, i) => built(ref, `b-${i + 100}`)),
  ];
  const log = (ps: EventPayload[], from = 1) => ps.map((e, i) => ({ event_id: from + i, timestamp: i, ...e }) as BuildEvent);
  const before = fold(log(payloads));
  const get = OrderedMap.prototype.get;
  let reads = 0;
  OrderedMap.prototype.get = function (this: OrderedMap<unknown, unknown>, key: unknown) {
    if (key === 't-1') reads++;
    return get.call(this, key);
  } as typeof get;
  let after: BuildState;
  try {
    after = log([{ type: 'taint_created', taint_created: { taint_id: 't-2', partitions: refs, reason: '', downstream: false } }], payloads.length + 1).reduce(reduce, before);
  } finally {
    OrderedMap.prototype.get = get;
  }
  t.is(reads, 0, "t-1's record was read for flips that do not move its count");
  t.deepEqual([...after.taints.values()].map((x) => [x.taint_id, x.still_tainted]), [['t-1', 0], ['t-2', 50]]);
});
