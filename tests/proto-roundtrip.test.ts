import test from 'ava';
import fc from 'fast-check';
import type { IConversionOptions, Type } from 'protobufjs';
import { EVENT_TYPES } from '../lib/events/build-event.js';
import type { BuildEvent } from '../lib/events/build-event.js';
import { EventCodecError, decodeEvent, encodeEvent } from '../lib/events/event-codec.js';
import {
  PLATFORM_SERVICE,
  canonicalRoot,
  canonicalSchema,
  platformService,
  protoDir,
  schema,
  snakeRoot,
} from '../lib/proto/schema.js';
import { arbBuildEvent, arbEventList, arbPayloadOfType } from './helpers/arbitrary-events.js';

// Plain objects in the shape toObject produces with these options (64-bit as decimal strings, enums by name).
const CONVERSION: IConversionOptions = { longs: String, enums: String, defaults: true, arrays: true, objects: true };

const dataDep = { dep_type: 'MATERIALIZE', partition_ref: 'data/a/2024-01-01' };
const jobConfig = {
  outputs: ['data/b/2024-01-01', 'data/c/2024-01-01'],
  inputs: [dataDep, { dep_type: 'QUERY', partition_ref: 'data/q' }],
  args: ['--date', '2024-01-01', ''],
  env: { HOME: '/tmp', EMPTY: '', 'ÜNICODE 🐱': 'välue' },
};
const task = { job_label: '//jobs:b', config: jobConfig };
const manifest = {
  outputs: ['data/b/2024-01-01'],
  inputs: [
    {
      outputs: ['data/a/2024-01-01'],
      inputs: [],
      start_time: { seconds: '1700000000', nanos: 0 },
      end_time: { seconds: '1700000060', nanos: 999_999_999 },
      task: { job_label: '//jobs:a', config: { outputs: ['data/a/2024-01-01'], inputs: [], args: [], env: {} } },
    },
  ],
  start_time: { seconds: '1700000100', nanos: 5 },
  end_time: { seconds: '-62135596800', nanos: 0 },
  task,
};
const jobGraph = { outputs: ['data/c/2024-01-01'], nodes: [task, { job_label: '//jobs:a', config: jobConfig }] };

const samples: Array<[keyof typeof schema, Record<string, unknown>]> = [
  ['DataDep', dataDep],
  ['JobConfig', jobConfig],
  ['PartitionManifest', manifest],
  ['Task', task],
  ['JobGraph', jobGraph],
  ['JobConfigRequest', { output_refs: ['data/c/2024-01-01', 'data/b/2024-01-01'] }],
  ['JobConfigResponse', { configs: [jobConfig, { outputs: [], inputs: [], args: [], env: {} }] }],
  ['GraphAnalyzeRequest', { output_refs: ['data/c/2024-01-01'] }],
  ['GraphAnalyzeResponse', { graph: jobGraph }],
];

function toCamel(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(toCamel);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [k.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase()), k === 'env' ? v : toCamel(v)]),
  );
}

function roundTrip(type: Type, obj: Record<string, unknown>): { binary: unknown; object: unknown; bytes: Uint8Array } {
  const message = type.fromObject(obj);
  const verifyError = type.verify(message);
  if (verifyError !== null) throw new Error(`verify ${type.name}: ${verifyError}`);
  const bytes = type.encode(message).finish();
  const binary = type.toObject(type.decode(bytes), CONVERSION);
  const object = type.toObject(type.fromObject(type.toObject(message, CONVERSION)), CONVERSION);
  return { binary, object, bytes };
}

test('schema loads edition 2023 sources from the package proto dir', (t) => {
  t.regex(protoDir(), /[/\\]proto$/);
  const files = snakeRoot().files.map((f) => f.replace(/\\/g, '/'));
  t.true(files.some((f) => f.endsWith('proto/platform/v1/platform.proto')));
  t.true(files.some((f) => f.endsWith('proto/platform/v1/events.proto')));
  t.true(files.includes('google/protobuf/timestamp.proto'));
  t.is(snakeRoot(), snakeRoot(), 'root is loaded once');
  t.is(schema.BuildEvent, schema.BuildEvent);
  t.is(schema.BuildEvent.fullName, '.platform.v1.BuildEvent');
  t.is(schema.Timestamp.fullName, '.google.protobuf.Timestamp');
  t.not(snakeRoot(), canonicalRoot());
});

test('snake root keeps field names, canonical root uses camelCase', (t) => {
  t.deepEqual(Object.keys(schema.PartitionManifest.fields), ['outputs', 'inputs', 'start_time', 'end_time', 'task']);
  t.deepEqual(Object.keys(canonicalSchema.PartitionManifest.fields), ['outputs', 'inputs', 'startTime', 'endTime', 'task']);
  t.deepEqual(Object.keys(canonicalSchema.DataDep.fields), ['depType', 'partitionRef']);
  t.deepEqual(Object.keys(canonicalSchema.JobConfigRequest.fields), ['outputRefs']);
});

for (const [name, sample] of samples) {
  test(`${name} round-trips through binary and toObject/fromObject (snake_case)`, (t) => {
    const type = schema[name] as Type;
    const { binary, object } = roundTrip(type, sample);
    t.deepEqual(binary, sample);
    t.deepEqual(object, sample);
  });

  test(`${name} round-trips with the camelCase root and shares its wire format`, (t) => {
    const snakeType = schema[name] as Type;
    const camelType = canonicalSchema[name] as Type;
    const camelSample = toCamel(sample) as Record<string, unknown>;
    const { binary, object, bytes } = roundTrip(camelType, camelSample);
    t.deepEqual(binary, camelSample);
    t.deepEqual(object, camelSample);
    const snakeBytes = snakeType.encode(snakeType.fromObject(sample)).finish();
    t.deepEqual(Buffer.from(bytes), Buffer.from(snakeBytes));
    t.deepEqual(snakeType.toObject(snakeType.decode(bytes), CONVERSION), sample);
  });
}

test('JobConfig env map survives a round trip with empty values', (t) => {
  const type = schema.JobConfig;
  const decoded = type.toObject(type.decode(type.encode(type.fromObject(jobConfig)).finish()), CONVERSION);
  t.deepEqual(decoded['env'], jobConfig.env);
});

test('DepType enum names resolve', (t) => {
  for (const e of [schema.DepType, canonicalSchema.DepType]) {
    t.deepEqual({ ...e.values }, { QUERY: 0, MATERIALIZE: 1 });
    t.is(e.valuesById[0], 'QUERY');
    t.is(e.valuesById[1], 'MATERIALIZE');
  }
  const field = schema.DataDep.fields['dep_type'];
  t.is(field?.resolvedType, schema.DepType);
  t.deepEqual(schema.DataDep.toObject(schema.DataDep.decode(Uint8Array.of(0x08, 0x01)), { enums: String }), {
    dep_type: 'MATERIALIZE',
  });
});

test('PlatformService has both methods with their request and response types', (t) => {
  for (const [service, types] of [
    [schema.PlatformService, schema],
    [canonicalSchema.PlatformService, canonicalSchema],
    [platformService(), canonicalSchema],
  ] as const) {
    t.is(service.fullName, `.${PLATFORM_SERVICE}`);
    t.deepEqual(Object.keys(service.methods).sort(), ['AnalyzeGraph', 'GetJobConfigs']);
    const get = service.methods['GetJobConfigs'];
    const analyze = service.methods['AnalyzeGraph'];
    t.is(get?.resolvedRequestType, types.JobConfigRequest);
    t.is(get?.resolvedResponseType, types.JobConfigResponse);
    t.is(analyze?.resolvedRequestType, types.GraphAnalyzeRequest);
    t.is(analyze?.resolvedResponseType, types.GraphAnalyzeResponse);
    t.falsy(get?.requestStream, 'unary');
    t.falsy(get?.responseStream, 'unary');
    t.falsy(analyze?.requestStream, 'unary');
    t.falsy(analyze?.responseStream, 'unary');
  }
});

// ---------------------------------------------------------------------------------------------------------------
// Events

for (const type of EVENT_TYPES) {
  test(`event ${type} round-trips through encodeEvent/decodeEvent`, (t) => {
    fc.assert(
      fc.property(arbPayloadOfType(type), fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }), (payload, id) => {
        const e = { event_id: id, timestamp: 1_700_000_000_123, ...payload } as BuildEvent;
        t.deepEqual(decodeEvent(encodeEvent(e)), e);
        t.deepEqual(decodeEvent(encodeEvent(e), id), e);
      }),
      { numRuns: 150 },
    );
  });
}

test('any valid event round-trips (property)', (t) => {
  fc.assert(
    fc.property(arbBuildEvent(), (e) => {
      const decoded = decodeEvent(encodeEvent(e));
      t.deepEqual(decoded, e);
      // The result is plain JSON-able data: no Long, no Message instances.
      t.deepEqual(JSON.parse(JSON.stringify(decoded)), e);
    }),
    { numRuns: 500 },
  );
  fc.assert(
    fc.property(arbEventList({ pooled: true }), (events) => {
      t.deepEqual(events.map((e) => decodeEvent(encodeEvent(e))), events);
    }),
    { numRuns: 50 },
  );
});

test('decode fills every default in; defaults are not written', (t) => {
  const e: BuildEvent = {
    event_id: 1,
    timestamp: 0,
    type: 'job_run_queued',
    job_run_queued: {
      job_run_id: '',
      job_label: '',
      config: { outputs: [], inputs: [], args: [], env: {} },
      want_ids: [],
      attempt: 0, exec: [], timeout_seconds: 0, input_builds: [], job_fingerprint: '', output_inputs: [], retry_of: '',
    },
  };
  const bytes = encodeEvent(e);
  t.true(bytes.length <= 8, `all-default payload encodes small (${bytes.length} bytes)`);
  t.deepEqual(decodeEvent(bytes), e);
  // A payload with its sub-message absent on the wire still decodes with that sub-message filled in.
  const bare = schema.BuildEvent.encode({ event_id: 3, job_run_queued: {} }).finish();
  t.deepEqual(decodeEvent(bare), { ...e, event_id: 3 });
  const dep: BuildEvent = {
    event_id: 2,
    timestamp: -5,
    type: 'job_run_queued',
    job_run_queued: {
      job_run_id: 'r',
      job_label: 'l',
      config: { outputs: [], inputs: [{ dep_type: 'QUERY', partition_ref: '' }], args: [], env: { '': '' } },
      want_ids: [''],
      attempt: 1, exec: [], timeout_seconds: 0, input_builds: [], job_fingerprint: '', output_inputs: [], retry_of: '',
    },
  };
  t.deepEqual(decodeEvent(encodeEvent(dep)), dep);
});

test('decodeEvent rejects corrupt and unknown records naming the event', (t) => {
  const good = encodeEvent({ event_id: 7, timestamp: 1, type: 'job_run_succeeded', job_run_succeeded: { job_run_id: 'r', builds: [], ended_at: 0 } });

  const truncated = t.throws(() => decodeEvent(good.subarray(0, good.length - 1), 7), { instanceOf: EventCodecError });
  t.regex(truncated.message, /event 7/);
  t.is((truncated as EventCodecError).eventId, 7);

  t.throws(() => decodeEvent(Uint8Array.of(0xff, 0xff, 0xff), 12), { instanceOf: Error, message: /event 12/ });

  // An unknown payload case (field 99) is discarded by the decoder: the event has no known payload.
  const unknown = Uint8Array.of(0x08, 0x09, 0x9a, 0x06, 0x00);
  t.throws(() => decodeEvent(unknown), { message: /event 9.*no known payload/ });

  t.throws(() => decodeEvent(good, 8), { message: /event 8.*event_id 7/ });

  const badEnum = schema.BuildEvent.encode({
    event_id: 4,
    job_run_queued: { config: { inputs: [{ dep_type: 7 }] } },
  }).finish();
  t.throws(() => decodeEvent(badEnum), { message: /event 4.*dep_type.*unknown DepType value 7/ });

  const badSource = schema.BuildEvent.encode({ event_id: 5, want_created: { source: 'robot' } }).finish();
  t.throws(() => decodeEvent(badSource), { message: /event 5.*source/ });

  const tooBig = schema.BuildEvent.encode({ event_id: '18446744073709551615', want_canceled: {} }).finish();
  t.throws(() => decodeEvent(tooBig, 1), { message: /event 1.*safe integer/ });
});

test('encodeEvent rejects invalid events', (t) => {
  const ok: BuildEvent = { event_id: 1, timestamp: 1, type: 'job_run_started', job_run_started: { job_run_id: 'r', pid: 1, worker: 'local', started_at: 0 } };
  t.notThrows(() => encodeEvent(ok));
  const bad = (e: unknown): BuildEvent => e as BuildEvent;
  t.throws(() => encodeEvent(bad({ ...ok, event_id: 1.5 })), { instanceOf: EventCodecError, message: /event_id/ });
  t.throws(() => encodeEvent(bad({ ...ok, timestamp: Number.NaN })), { message: /timestamp/ });
  t.throws(() => encodeEvent(bad({ ...ok, type: 'nope' })), { message: /unknown event type/ });
  t.throws(() => encodeEvent(bad({ ...ok, job_run_started: { job_run_id: 'r', pid: -1 } })), { message: /event 1.*pid/ });
  t.throws(() => encodeEvent(bad({ ...ok, job_run_started: { job_run_id: 3, pid: 1 } })), { message: /job_run_id/ });
  t.throws(() => encodeEvent(bad({ ...ok, job_run_started: undefined })), { message: /job_run_started/ });
  t.throws(
    () =>
      encodeEvent(
        bad({
          event_id: 2,
          timestamp: 0,
          type: 'want_created',
          want_created: {
            want_id: 'w',
            partitions: [],
            comment: '',
            data_timestamp: 0,
            ttl_seconds: 0,
            sla_seconds: 0,
            source: 'robot',
            parent_want_id: '',
            root_want_id: '',
            rebuild: 'missing', priority: 0, backfill_id: '', max_concurrent_job_runs: 0, pattern: '', schedule_tick: 0,
          },
        }),
      ),
    { message: /event 2.*source/ },
  );
});

test("encodeEvent's refusal names the field down to the list index or map key", (t) => {
  const queued = {
    job_run_id: 'r-1',
    job_label: 'j',
    config: { outputs: ['a', 'b'], inputs: [], args: [], env: { K: 'v' } },
    want_ids: ['w-1'],
    attempt: 1,
    exec: ['true'],
    timeout_seconds: 0,
    input_builds: [],
    job_fingerprint: '',
    output_inputs: [],
    retry_of: '',
  };
  const event = (payload: unknown): BuildEvent => ({ event_id: 9, timestamp: 0, type: 'job_run_queued', job_run_queued: payload }) as unknown as BuildEvent;
  t.notThrows(() => encodeEvent(event(queued)));
  const refusal = (payload: unknown) => t.throws(() => encodeEvent(event(payload)), { instanceOf: EventCodecError })?.message;
  t.is(refusal({ ...queued, config: { ...queued.config, outputs: ['a', 5] } }), 'cannot encode event 9: job_run_queued.config.outputs[1]: expected a string, got 5');
  t.is(refusal({ ...queued, config: { ...queued.config, env: { K: 1 } } }), 'cannot encode event 9: job_run_queued.config.env["K"]: expected a string, got 1');
  const { attempt: _, ...noAttempt } = queued;
  t.is(refusal(noAttempt), 'cannot encode event 9: job_run_queued.attempt: missing');
  t.is(refusal({ ...queued, input_builds: [{ partition_ref: 'a', build_id: 7 }] }), 'cannot encode event 9: job_run_queued.input_builds[0].build_id: expected a string, got 7');
  t.is(refusal('x'), 'cannot encode event 9: job_run_queued: expected an object (JobRunQueued), got "x"');
});

test('a record holding two payloads is refused as corrupt, not read as either', (t) => {
  const two = schema.BuildEvent.encode({ event_id: 6, want_canceled: { want_id: 'w-1', reason: 'x' }, job_run_started: { job_run_id: 'r-1', pid: 1 } }).finish();
  t.throws(() => decodeEvent(two, 6), { instanceOf: EventCodecError, message: 'cannot decode event 6: holds two payloads (want_canceled and job_run_started); a record holds one' });
  const none = schema.BuildEvent.encode({ event_id: 7 }).finish();
  t.throws(() => decodeEvent(none, 7), { instanceOf: EventCodecError, message: /event 7: no known payload/ });
});
