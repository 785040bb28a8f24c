/**
 * Binary codec of build events: the plain-data {@link BuildEvent} of build-event.ts <-> `platform.v1.BuildEvent`
 * protobuf bytes (snake_case schema root).
 *
 * Encoding checks the event against the schema (types and integer ranges) and leaves out fields holding their
 * default value ('' / 0 / [] / {}), so records stay small. Decoding is protobufjs' toObject: every field filled back
 * in, enums by name, 64-bit integers as JS numbers (refusing values beyond Number.MAX_SAFE_INTEGER), so that
 * `decodeEvent(encodeEvent(e))` deep-equals `e` for every valid event.
 */
import { isWellFormed } from '../api/well-formed.js';
import protobuf from 'protobufjs';
import type { Field, IConversionOptions, Type } from 'protobufjs';
import { schema, snakeRoot } from '../proto/schema.js';
import { EVENT_TYPES } from './build-event.js';
import type { BuildEvent, EventType, WantSource } from './build-event.js';
import { errorMessage } from '../errors.js';

/** Thrown when an event cannot be encoded or a stored record cannot be decoded. */
export class EventCodecError extends Error {
  /** Id of the event concerned, when known. */
  readonly eventId: number | undefined;

  constructor(message: string, eventId: number | undefined, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'EventCodecError';
    this.eventId = eventId;
  }
}

// Read once: protobufjs is CommonJS, and in the bundle each `protobuf.X` is a getter call (on every field encoded).
const { Enum: ProtoEnum, Type: ProtoType } = protobuf;

const WANT_SOURCES: readonly WantSource[] = ['user', 'derived', 'dep_missed'];
const MAX_DEPTH = 32;

type Obj = Record<string, unknown>;

/**
 * A field refused by a walker, turned into an EventCodecError at the top. Its path is built as it unwinds (`under`,
 * then `named` at the payload), so that the walk of a valid event, the one that always happens, builds no paths.
 */
class FieldError extends Error {
  /** Below the payload, e.g. `.config.outputs[0]`. */
  at = '';

  constructor(readonly reason: string) {
    super(reason);
  }

  under(segment: string): FieldError {
    this.at = segment + this.at;
    return this;
  }
}

/** The segment of a map's key or a list's index in a path. */
const segment = (key: string | number): string => (typeof key === 'number' ? `[${key}]` : `[${JSON.stringify(key)}]`);

/** A refusal below `root` (a payload, or a top-level field) with its whole path: `job_run_queued.config.outputs[1]: ...`. */
function named(root: string, err: unknown): unknown {
  return err instanceof FieldError ? new FieldError(`${root}${err.at}: ${err.reason}`) : err;
}

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}...` : v);
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  return typeof v;
}

function isEventType(v: unknown): v is EventType {
  return typeof v === 'string' && (EVENT_TYPES as readonly string[]).includes(v);
}

// ---------------------------------------------------------------------------------------------------------------
// Plain data -> wire object (the runtime types protobufjs' encoder takes: numbers for 64-bit, enum numbers).

function integerIn(v: unknown, min: number, max: number, type: string): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
    throw new FieldError(`expected an integer in [${min}, ${max}] (${type}), got ${describe(v)}`);
  }
  return v;
}

function scalarToWire(field: Field, v: unknown): unknown {
  const resolved = field.resolvedType;
  if (resolved instanceof ProtoEnum) {
    if (typeof v !== 'string' || !Object.prototype.hasOwnProperty.call(resolved.values, v)) {
      throw new FieldError(`expected one of ${Object.keys(resolved.values).join('|')}, got ${describe(v)}`);
    }
    return resolved.values[v];
  }
  switch (field.type) {
    case 'string':
      if (typeof v !== 'string') throw new FieldError(`expected a string, got ${describe(v)}`);
      // Written, it would be bytes the decoder refuses: the log could not be read at the next start.
      if (!isWellFormed(v)) throw new FieldError(`expected text with a UTF-8 form, got one with a lone UTF-16 surrogate`);
      return v;
    case 'uint32':
    case 'fixed32':
      return integerIn(v, 0, 0xffffffff, field.type);
    case 'int32':
    case 'sint32':
    case 'sfixed32':
      return integerIn(v, -0x80000000, 0x7fffffff, field.type);
    case 'uint64':
    case 'fixed64':
      return integerIn(v, 0, Number.MAX_SAFE_INTEGER, field.type);
    case 'int64':
    case 'sint64':
    case 'sfixed64':
      return integerIn(v, Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER, field.type);
    case 'bool':
      if (typeof v !== 'boolean') throw new FieldError(`expected a boolean, got ${describe(v)}`);
      return v;
    case 'double':
    case 'float':
      if (typeof v !== 'number') throw new FieldError(`expected a number, got ${describe(v)}`);
      return v;
    case 'bytes':
      if (!(v instanceof Uint8Array)) throw new FieldError(`expected a Uint8Array, got ${describe(v)}`);
      return v;
    default:
      throw new FieldError(`unsupported field type ${field.type}`);
  }
}

function valueToWire(field: Field, v: unknown, depth: number): unknown {
  const resolved = field.resolvedType;
  if (resolved instanceof ProtoType) return messageToWire(resolved, v, depth + 1);
  return scalarToWire(field, v);
}

function isDefaultScalar(v: unknown): boolean {
  return v === '' || v === 0 || v === false || (v instanceof Uint8Array && v.length === 0);
}

function messageToWire(type: Type, value: unknown, depth: number): Obj {
  if (depth > MAX_DEPTH) throw new FieldError('nested too deeply');
  if (!isObj(value)) throw new FieldError(`expected an object (${type.name}), got ${describe(value)}`);
  const out: Obj = {};
  for (const field of type.fieldsArray) {
    try {
      fieldToWire(field, value[field.name], depth, out);
    } catch (err) {
      throw err instanceof FieldError ? err.under(`.${field.name}`) : err;
    }
  }
  return out;
}

function fieldToWire(field: Field, v: unknown, depth: number, out: Obj): void {
  if (v === undefined) throw new FieldError('missing');
  if (field.map) {
    if (!isObj(v)) throw new FieldError(`expected an object (map), got ${describe(v)}`);
    const keys = Object.keys(v);
    if (keys.length === 0) return;
    const map: Obj = Object.create(null) as Obj;
    for (const k of keys) map[k] = itemToWire(field, v[k], depth, k);
    out[field.name] = map;
  } else if (field.repeated) {
    if (!Array.isArray(v)) throw new FieldError(`expected an array, got ${describe(v)}`);
    if (v.length === 0) return;
    out[field.name] = v.map((item: unknown, i) => itemToWire(field, item, depth, i));
  } else {
    const w = valueToWire(field, v, depth);
    if (field.resolvedType instanceof ProtoType || !isDefaultScalar(w)) out[field.name] = w;
  }
}

/** A map's value or a list's item, named by its key or index if it is refused. */
function itemToWire(field: Field, v: unknown, depth: number, key: string | number): unknown {
  try {
    return valueToWire(field, v, depth);
  } catch (err) {
    throw err instanceof FieldError ? err.under(segment(key)) : err;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Decoded message -> plain data (every field present): protobufjs' toObject, then what it leaves to us.

/** Every field present, enums by name, 64-bit integers as JS numbers (the payload is found by payloadOf). */
const PLAIN: IConversionOptions = { longs: Number, enums: String, defaults: true, arrays: true, objects: true };

/** A 64-bit integer that toObject turned into a number: beyond 2^53 it is no longer exact. */
function safeInteger(v: unknown): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw new FieldError(`${describe(v)} is beyond the safe integer range`);
  return v;
}

function topLevelInteger(obj: Obj, name: 'event_id' | 'timestamp'): number {
  try {
    return safeInteger(obj[name]);
  } catch (err) {
    throw named(name, err);
  }
}

/**
 * What toObject leaves open: 64-bit integers beyond the safe range, enum numbers this version has no name for
 * (left as numbers), and sub-messages absent on the wire (left null, filled here with their defaults).
 */
function settle(type: Type, obj: Obj): Obj {
  for (const field of fieldsToSettle(type)) {
    const v = obj[field.name];
    try {
      if (field.map) {
        const map = v as Obj;
        for (const k of Object.keys(map)) map[k] = settleItem(field, map[k], k);
      } else if (field.repeated) {
        (v as unknown[]).forEach((item, i, items) => (items[i] = settleItem(field, item, i)));
      } else {
        obj[field.name] = settleValue(field, v);
      }
    } catch (err) {
      throw err instanceof FieldError ? err.under(`.${field.name}`) : err;
    }
  }
  return obj;
}

function settleItem(field: Field, v: unknown, key: string | number): unknown {
  try {
    return settleValue(field, v);
  } catch (err) {
    throw err instanceof FieldError ? err.under(segment(key)) : err;
  }
}

const settled = new WeakMap<Type, readonly Field[]>();

/** The fields settle() has anything to do with; strings and the like are left as toObject made them. */
function fieldsToSettle(type: Type): readonly Field[] {
  let fields = settled.get(type);
  if (fields === undefined) {
    fields = type.fieldsArray.filter((f) => f.resolve().long || f.resolvedType !== null);
    settled.set(type, fields);
  }
  return fields;
}

function settleValue(field: Field, v: unknown): unknown {
  const resolved = field.resolvedType;
  if (resolved instanceof ProtoType) return settle(resolved, (v ?? resolved.toObject(resolved.create(), PLAIN)) as Obj);
  if (resolved instanceof ProtoEnum && typeof v !== 'string') {
    throw new FieldError(`unknown ${resolved.name} value ${describe(v)}`);
  }
  if (field.long) return safeInteger(v);
  return v;
}

const SCHEDULE_SOURCE = /^schedule:[A-Za-z0-9][A-Za-z0-9_.-]*$/;

function checkWantSource(type: EventType, payload: Obj, where: string): void {
  if (type !== 'want_created') return;
  const source = payload['source'];
  if (!(WANT_SOURCES as readonly unknown[]).includes(source) && !(typeof source === 'string' && SCHEDULE_SOURCE.test(source))) {
    throw new FieldError(`${where}.source: expected one of ${WANT_SOURCES.join('|')}|schedule:<name>, got ${describe(source)}`);
  }
}

function payloadType(type: EventType): Type {
  const field = schema.BuildEvent.fields[type];
  const resolved = field?.resolve().resolvedType;
  if (!(resolved instanceof ProtoType)) throw new Error(`platform.v1.BuildEvent has no message field ${type}`);
  return resolved;
}

// ---------------------------------------------------------------------------------------------------------------

/** Encodes an event as `platform.v1.BuildEvent` bytes. Throws an {@link EventCodecError} for an invalid event. */
export function encodeEvent(e: BuildEvent): Uint8Array {
  const raw: unknown = e;
  const id = isObj(raw) && typeof raw['event_id'] === 'number' ? raw['event_id'] : undefined;
  const label = id === undefined ? 'event' : `event ${id}`;
  try {
    if (!isObj(raw)) throw new FieldError(`expected an object, got ${describe(raw)}`);
    const { event_id, timestamp, type } = raw;
    if (typeof event_id !== 'number' || !Number.isSafeInteger(event_id) || event_id < 0) {
      throw new FieldError(`event_id: expected a non-negative safe integer, got ${describe(event_id)}`);
    }
    if (typeof timestamp !== 'number' || !Number.isSafeInteger(timestamp)) {
      throw new FieldError(`timestamp: expected a safe integer (epoch ms), got ${describe(timestamp)}`);
    }
    if (!isEventType(type)) throw new FieldError(`type: unknown event type ${describe(type)}`);
    let payload: Obj;
    try {
      payload = messageToWire(payloadType(type), raw[type], 0);
    } catch (err) {
      throw named(type, err);
    }
    checkWantSource(type, raw[type] as Obj, type);
    const wire: Obj = { event_id, timestamp, [type]: payload };
    return schema.BuildEvent.encode(wire).finish();
  } catch (err) {
    if (err instanceof FieldError) throw new EventCodecError(`cannot encode ${label}: ${err.message}`, id);
    throw err;
  }
}

/**
 * Has protobufjs generate the events' encoders and decoders now rather than at their first use (a type's code is
 * made the first time it is encoded or decoded: ~15-20 ms for the event types on this machine, which the first step
 * after a daemon's start paid, before its first run could start). The log calls it on a turn of its own after it
 * opens.
 */
let warmed = false;

export function warmEventCodec(): void {
  // Once a process: setup() makes a type's code again each time it is called.
  if (warmed) return;
  warmed = true;
  const seen = new Set<Type>();
  const setUp = (type: Type): void => {
    if (seen.has(type)) return;
    seen.add(type);
    type.setup();
    for (const field of type.fieldsArray) {
      const resolved = field.resolve().resolvedType;
      if (resolved instanceof ProtoType) setUp(resolved);
    }
  };
  setUp(schema.BuildEvent);
  setUp(eventRecords().type);
}

/**
 * `platform.v1.BuildEvent` without its `payload` oneof, for reading records. On the wire a oneof is only its fields,
 * so the bytes are the same; but protobufjs' decoder calls the oneof's setter on each record, which deletes every
 * other member from the message (15 deletes: a warm decode took 3.1 us with them, 2.4 us without). In a root of its
 * own, so nothing that walks the schema sees it.
 */
let records: { type: Type; payloads: readonly string[] } | undefined;

function eventRecords(): { type: Type; payloads: readonly string[] } {
  if (records) return records;
  const json = snakeRoot().toJSON();
  let spec: protobuf.INamespace & Partial<protobuf.IType> = json;
  for (const name of ['platform', 'v1', 'BuildEvent']) {
    const inner = spec.nested?.[name];
    if (!inner) throw new Error(`the schema has no platform.v1.BuildEvent (at ${name})`);
    spec = inner as protobuf.INamespace & Partial<protobuf.IType>;
  }
  const payloads = spec.oneofs?.['payload']?.oneof;
  if (!payloads) throw new Error('platform.v1.BuildEvent has no payload oneof');
  delete spec.oneofs!['payload'];
  const type = protobuf.Root.fromJSON(json).lookupType('platform.v1.BuildEvent');
  return (records = { type, payloads });
}

/** The one payload a record holds, by which of the oneof's fields is set. */
function payloadOf(obj: Obj, payloads: readonly string[]): string {
  let found: string | undefined;
  for (const name of payloads) {
    if (obj[name] === null || obj[name] === undefined) continue;
    if (found !== undefined) throw new FieldError(`holds two payloads (${found} and ${name}); a record holds one`);
    found = name;
  }
  if (found === undefined) throw new FieldError('no known payload (unknown event type or corrupt record)');
  return found;
}

/**
 * Decodes `platform.v1.BuildEvent` bytes into the plain shape of build-event.ts, every field filled in.
 * `expectedId` (e.g. the id in the record's key) names the event in errors and must equal the decoded event_id.
 * Throws an {@link EventCodecError} naming the event for a corrupt record or one of an unknown event type.
 */
export function decodeEvent(bytes: Uint8Array, expectedId?: number): BuildEvent {
  let label = expectedId === undefined ? 'event' : `event ${expectedId}`;
  let eventId = expectedId;
  try {
    if (!(bytes instanceof Uint8Array)) throw new FieldError(`expected a Uint8Array, got ${describe(bytes)}`);
    const { type: record, payloads } = eventRecords();
    let obj: Obj;
    try {
      obj = record.toObject(record.decode(bytes), PLAIN);
    } catch (err) {
      throw new FieldError(`corrupt record (${bytes.length} bytes): ${errorMessage(err)}`);
    }
    const event_id = topLevelInteger(obj, 'event_id');
    if (expectedId === undefined) {
      label = `event ${event_id}`;
      eventId = event_id;
    } else if (event_id !== expectedId) {
      throw new FieldError(`record holds event_id ${event_id}`);
    }
    const timestamp = topLevelInteger(obj, 'timestamp');
    const type = payloadOf(obj, payloads);
    if (!isEventType(type)) throw new FieldError(`event type ${describe(type)} is not known to this version`);
    let payload: Obj;
    try {
      payload = settle(payloadType(type), obj[type] as Obj);
    } catch (err) {
      throw named(type, err);
    }
    checkWantSource(type, payload, type);
    return { event_id, timestamp, type, [type]: payload } as unknown as BuildEvent;
  } catch (err) {
    if (err instanceof FieldError) {
      throw new EventCodecError(`cannot decode ${label}: ${err.message}`, eventId, { cause: err });
    }
    throw err;
  }
}
