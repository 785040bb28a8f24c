/**
 * fast-check arbitraries producing valid build events (the plain shape of lib/events/build-event.ts).
 *
 * - `arbEventPayload()` / `arbBuildEvent()`: any valid payload / event, with wide-ranging strings and integers.
 * - `arbEventPayload({ pooled: true })`: ids and refs drawn from small pools (w1..w4, r1..r4, p1..p6), so random
 *   events refer to each other (a want's partitions, a run's wants, ...) — useful to fold random event lists.
 * - `arbEventList()`: a list of events as the log stores them: ids dense from 1, non-decreasing timestamps.
 */
import fc from 'fast-check';
import type {
  BuildEvent,
  DataDep,
  EventPayload,
  EventType,
  JobConfig,
  WantSource,
} from '../../lib/events/build-event.js';
import { EVENT_TYPES } from '../../lib/events/build-event.js';

export interface PayloadOptions {
  /** Draw want ids, job run ids, job labels and partition refs from small pools. Default false. */
  pooled?: boolean;
}

const UINT32_MAX = 0xffffffff;

/** Strings that survive UTF-8: printable ASCII most of the time, any code point (no lone surrogates) sometimes. */
export const arbText: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.string({ maxLength: 12 }), weight: 4 },
  { arbitrary: fc.string({ unit: 'binary', maxLength: 8 }), weight: 1 },
  { arbitrary: fc.string({ unit: 'grapheme', maxLength: 4 }), weight: 1 },
);

const arbInt64 = fc.oneof(
  fc.integer({ min: -1000, max: 2_000_000_000_000 }),
  fc.constantFrom(0, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER, -1, 2 ** 32, 2 ** 53 - 2),
);
const arbUint64 = fc.oneof(
  fc.integer({ min: 0, max: 1_000_000 }),
  fc.constantFrom(0, Number.MAX_SAFE_INTEGER, 2 ** 32, 2 ** 32 - 1, 2 ** 40 + 7),
);
const arbUint32 = fc.oneof(fc.integer({ min: 0, max: 100 }), fc.constantFrom(0, UINT32_MAX, 2 ** 31));
const arbInt32 = fc.oneof(fc.integer({ min: -1, max: 255 }), fc.constantFrom(-(2 ** 31), 2 ** 31 - 1));

/** The names of the schedules the want sources below name, so random events land on the same records. */
const arbScheduleName = fc.constantFrom('daily', 'hourly');

export const arbWantSource: fc.Arbitrary<WantSource> = fc.constantFrom<WantSource>('user', 'derived', 'dep_missed', 'schedule:daily', 'schedule:hourly');

interface Pools {
  wantId: fc.Arbitrary<string>;
  jobRunId: fc.Arbitrary<string>;
  jobLabel: fc.Arbitrary<string>;
  ref: fc.Arbitrary<string>;
  buildId: fc.Arbitrary<string>;
  taintId: fc.Arbitrary<string>;
}

function pools(options: PayloadOptions): Pools {
  if (options.pooled) {
    return {
      wantId: fc.constantFrom('w1', 'w2', 'w3', 'w4'),
      jobRunId: fc.constantFrom('r1', 'r2', 'r3', 'r4'),
      jobLabel: fc.constantFrom('//jobs:a', '//jobs:b'),
      ref: fc.constantFrom('p1', 'p2', 'p3', 'p4', 'p5', 'p6'),
      buildId: fc.constantFrom('b1', 'b2', 'b3', 'b4', 'b5', 'b6', 'b7', 'b8'),
      taintId: fc.constantFrom('t1', 't2', 't3'),
    };
  }
  return { wantId: arbText, jobRunId: arbText, jobLabel: arbText, ref: arbText, buildId: arbText, taintId: arbText };
}

// Env keys: anything but '__proto__' (an object key that plain JS objects cannot hold as data).
const arbEnvKey = arbText.filter((k) => k !== '__proto__');

export function arbDataDep(options: PayloadOptions = {}): fc.Arbitrary<DataDep> {
  return fc.record({ dep_type: fc.constantFrom('QUERY' as const, 'MATERIALIZE' as const), partition_ref: pools(options).ref });
}

export function arbJobConfig(options: PayloadOptions = {}): fc.Arbitrary<JobConfig> {
  const p = pools(options);
  return fc.record({
    outputs: fc.array(p.ref, { maxLength: 3 }),
    inputs: fc.array(arbDataDep(options), { maxLength: 3 }),
    args: fc.array(arbText, { maxLength: 3 }),
    env: fc.dictionary(arbEnvKey, arbText, { maxKeys: 3, noNullPrototype: true }),
  });
}

/** Arbitrary payload of one event type. */
export function arbPayloadOfType(type: EventType, options: PayloadOptions = {}): fc.Arbitrary<EventPayload> {
  const p = pools(options);
  switch (type) {
    case 'want_created':
      return fc
        .record({
          want_id: p.wantId,
          partitions: fc.array(p.ref, { maxLength: 6 }),
          comment: arbText,
          data_timestamp: arbInt64,
          ttl_seconds: arbUint64,
          sla_seconds: arbUint64,
          source: arbWantSource,
          parent_want_id: fc.oneof(fc.constant(''), p.wantId),
          root_want_id: fc.oneof(fc.constant(''), p.wantId),
          rebuild: fc.constantFrom('' as const, 'missing' as const, 'stale' as const, 'all' as const, 'absent' as const),
          priority: fc.oneof(fc.constant(0), fc.integer({ min: -3, max: 3 }), arbInt32),
          backfill_id: fc.oneof(fc.constant(''), fc.constantFrom('bf-1', 'bf-2')),
          // Small caps make small wants windowed (a window is twice the cap), so the folds reach windows.
          max_concurrent_job_runs: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 2 }), arbUint32),
          pattern: fc.oneof(fc.constant(''), arbText),
          schedule_tick: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 5 }), arbInt64),
        })
        .map((want_created) => ({ type, want_created }));
    case 'want_canceled':
      return fc.record({ want_id: p.wantId, reason: arbText }).map((want_canceled) => ({ type, want_canceled }));
    case 'job_run_queued':
      return fc
        .record({
          job_run_id: p.jobRunId,
          job_label: p.jobLabel,
          config: arbJobConfig(options),
          want_ids: fc.array(p.wantId, { maxLength: 3 }),
          attempt: arbUint32,
          exec: fc.array(arbText, { maxLength: 3 }),
          timeout_seconds: arbUint32,
          input_builds: fc.array(arbBuildInput(p), { maxLength: 3 }),
          job_fingerprint: fc.oneof(fc.constant(''), fc.constantFrom('f1', 'f2'), arbText),
          output_inputs: fc.array(fc.record({ output: p.ref, inputs: fc.array(p.ref, { maxLength: 2 }) }), { maxLength: 3 }),
          retry_of: fc.oneof(fc.constant(''), p.jobRunId),
        })
        .map((job_run_queued) => ({ type, job_run_queued }));
    case 'job_run_started':
      return fc.record({ job_run_id: p.jobRunId, pid: arbUint32, worker: fc.constantFrom('', 'local', 'w1'), started_at: arbInt64 }).map((job_run_started) => ({ type, job_run_started }));
    case 'job_run_placed':
      return fc.record({ job_run_id: p.jobRunId, worker: fc.constantFrom('w1', 'w2'), pid: arbUint32, started_at: arbInt64 }).map((job_run_placed) => ({ type, job_run_placed }));
    case 'job_run_succeeded':
      return fc
        .record({ job_run_id: p.jobRunId, builds: fc.array(arbBuildInput(p), { maxLength: 2 }), ended_at: arbInt64 })
        .map((job_run_succeeded) => ({ type, job_run_succeeded }));
    case 'job_run_failed':
      return fc
        .record({ job_run_id: p.jobRunId, exit_code: arbInt32, signal: arbText, reason: arbText, retry_at: arbInt64, ended_at: arbInt64 })
        .map((job_run_failed) => ({ type, job_run_failed }));
    case 'job_run_canceled':
      return fc.record({ job_run_id: p.jobRunId, reason: arbText }).map((job_run_canceled) => ({ type, job_run_canceled }));
    case 'job_run_dep_missed':
      return fc
        .record({ job_run_id: p.jobRunId, missing: fc.array(p.ref, { maxLength: 3 }), ended_at: arbInt64 })
        .map((job_run_dep_missed) => ({ type, job_run_dep_missed }));
    case 'partition_tainted':
      return fc.record({ partition_ref: p.ref, reason: arbText }).map((partition_tainted) => ({ type, partition_tainted }));
    case 'taint_created':
      return fc
        .record({ taint_id: p.taintId, partitions: fc.array(p.ref, { maxLength: 3 }), reason: arbText, downstream: fc.boolean() })
        .map((taint_created) => ({ type, taint_created }));
    case 'job_definitions_changed':
      return fc
        .record({ jobs: fc.array(fc.record({ job_label: p.jobLabel, fingerprint: fc.constantFrom('f1', 'f2', 'f3') }), { maxLength: 2 }) })
        .map((job_definitions_changed) => ({ type, job_definitions_changed }));
    case 'want_released':
      return fc.record({ want_id: p.wantId, released: fc.oneof(fc.integer({ min: 0, max: 7 }), arbUint32) }).map((want_released) => ({ type, want_released }));
    case 'want_sla_missed':
      return fc.record({ want_id: p.wantId, deadline: arbInt64 }).map((want_sla_missed) => ({ type, want_sla_missed }));
    case 'schedules_changed':
      return fc
        .record({
          schedules: fc.array(
            fc.record({
              name: arbScheduleName,
              cron: fc.constantFrom('0 3 * * *', '*/2 * * * * *', ''),
              timezone: fc.constantFrom('UTC', 'Europe/Paris'),
              since: fc.oneof(fc.integer({ min: 0, max: 5 }), arbInt64),
            }),
            { maxLength: 2 },
          ),
        })
        .map((schedules_changed) => ({ type, schedules_changed }));
    case 'schedule_ticks_skipped':
      return fc
        .record({
          name: arbScheduleName,
          count: fc.oneof(fc.integer({ min: 1, max: 5 }), arbUint64),
          count_at_least: fc.boolean(),
          first_tick: fc.oneof(fc.integer({ min: 0, max: 5 }), arbInt64),
          latest_tick: fc.oneof(fc.integer({ min: 0, max: 5 }), arbInt64),
          reason: fc.constantFrom('catchup', 'paused'),
        })
        .map((schedule_ticks_skipped) => ({ type, schedule_ticks_skipped }));
    case 'schedule_paused':
      return fc.record({ name: arbScheduleName, reason: arbText, requested_at: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 5 }), arbInt64) }).map((schedule_paused) => ({ type, schedule_paused }));
    case 'schedule_resumed':
      return fc.record({ name: arbScheduleName }).map((schedule_resumed) => ({ type, schedule_resumed }));
  }
}

function arbBuildInput(p: Pools): fc.Arbitrary<{ partition_ref: string; build_id: string }> {
  return fc.record({ partition_ref: p.ref, build_id: p.buildId });
}


/** Arbitrary payload of any event type. */
export function arbEventPayload(options: PayloadOptions = {}): fc.Arbitrary<EventPayload> {
  // The want and run lifecycle carries most of the state's logic: weighted up so that random histories reach deep
  // states (a derived want that failed under an active parent) often, not by luck of the seed.
  const weight = (t: EventType): number => LIFECYCLE_WEIGHTS[t] ?? 2;
  // The schedule events touch only the schedule records, which no other event reads: one rare branch for all of
  // them (where `schedules_changed` alone was), so the lifecycle keeps its share.
  const schedules = fc.oneof(...SCHEDULE_EVENT_TYPES.map((t) => arbPayloadOfType(t, options)));
  return fc.oneof(
    ...EVENT_TYPES.flatMap((t) =>
      t === 'schedules_changed' ? [{ arbitrary: schedules, weight: 1 }] : SCHEDULE_EVENT_TYPES.includes(t) ? [] : [{ arbitrary: arbPayloadOfType(t, options), weight: weight(t) }],
    ),
  );
}

const SCHEDULE_EVENT_TYPES: readonly EventType[] = ['schedules_changed', 'schedule_ticks_skipped', 'schedule_paused', 'schedule_resumed'];

const LIFECYCLE_WEIGHTS: Partial<Record<EventType, number>> = {
  want_created: 10,
  job_run_queued: 8,
  job_run_started: 4,
  job_run_failed: 8,
  job_run_succeeded: 6,
};

/** Arbitrary single event with any valid id (>= 1) and timestamp. */
export function arbBuildEvent(options: PayloadOptions = {}): fc.Arbitrary<BuildEvent> {
  return fc
    .tuple(fc.oneof(fc.integer({ min: 1, max: 100_000 }), fc.constantFrom(256, 65536, 2 ** 32, Number.MAX_SAFE_INTEGER)), arbInt64, arbEventPayload(options))
    .map(([event_id, timestamp, payload]) => ({ event_id, timestamp, ...payload }) as BuildEvent);
}

export interface EventListOptions extends PayloadOptions {
  minLength?: number;
  maxLength?: number;
  /** Timestamp of the first event. Default 1_700_000_000_000. */
  startTime?: number;
}

/** Arbitrary event list as the log holds it: ids 1..n, timestamps non-decreasing from startTime. */
export function arbEventList(options: EventListOptions = {}): fc.Arbitrary<BuildEvent[]> {
  const start = options.startTime ?? 1_700_000_000_000;
  const step = fc.tuple(fc.integer({ min: 0, max: 60_000 }), arbEventPayload(options));
  return fc
    .array(step, { minLength: options.minLength ?? 0, maxLength: options.maxLength ?? 40 })
    .map((steps) => {
      let t = start;
      return steps.map(([dt, payload], i) => {
        t += dt;
        return { event_id: i + 1, timestamp: t, ...payload } as BuildEvent;
      });
    });
}
