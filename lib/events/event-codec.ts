/**
 * Binary codec of build events: the plain-data {@link BuildEvent} of build-event.ts <-> `platform.v1.BuildEvent`
 * protobuf bytes (snake_case schema root).
 *
 * Encoding checks the event against the schema (types and integer ranges) and leaves out fields holding their
 * default value ('' / 0 / [] / {}), so records stay small. Decoding fills every field back in, maps enums to
 * their names and 64-bit integers to JS numbers (refusing values beyond Number.MAX_SAFE_INTEGER), so that
 * `decodeEvent(encodeEvent(e))` deep-equals `e` for every valid event.
 */
import protobuf from 'protobufjs';
import type { Field, Type } from 'protobufjs';
import { schema } from '../proto/schema.js';
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

const WANT_SOURCES: readonly WantSource[] = ['user', 'derived', 'dep_missed'];
const MAX_DEPTH = 32;

type Obj = Record<string, unknown>;

/** Raised inside the walkers with the path of the offending field; turned into an EventCodecError at the top. */
class FieldError extends Error {}

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

function scalarToWire(field: Field, v: unknown, where: string): unknown {
  const resolved = field.resolvedType;
  if (resolved instanceof protobuf.Enum) {
    if (typeof v !== 'string' || !Object.prototype.hasOwnProperty.call(resolved.values, v)) {
      throw new FieldError(`${where}: expected one of ${Object.keys(resolved.values).join('|')}, got ${describe(v)}`);
    }
    return resolved.values[v];
  }
  const int = (min: number, max: number): number => {
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
      throw new FieldError(`${where}: expected an integer in [${min}, ${max}] (${field.type}), got ${describe(v)}`);
    }
    return v;
  };
  switch (field.type) {
    case 'string':
      if (typeof v !== 'string') throw new FieldError(`${where}: expected a string, got ${describe(v)}`);
      return v;
    case 'uint32':
    case 'fixed32':
      return int(0, 0xffffffff);
    case 'int32':
    case 'sint32':
    case 'sfixed32':
      return int(-0x80000000, 0x7fffffff);
    case 'uint64':
    case 'fixed64':
      return int(0, Number.MAX_SAFE_INTEGER);
    case 'int64':
    case 'sint64':
    case 'sfixed64':
      return int(Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER);
    case 'bool':
      if (typeof v !== 'boolean') throw new FieldError(`${where}: expected a boolean, got ${describe(v)}`);
      return v;
    case 'double':
    case 'float':
      if (typeof v !== 'number') throw new FieldError(`${where}: expected a number, got ${describe(v)}`);
      return v;
    case 'bytes':
      if (!(v instanceof Uint8Array)) throw new FieldError(`${where}: expected a Uint8Array, got ${describe(v)}`);
      return v;
    default:
      throw new FieldError(`${where}: unsupported field type ${field.type}`);
  }
}

function valueToWire(field: Field, v: unknown, where: string, depth: number): unknown {
  const resolved = field.resolvedType;
  if (resolved instanceof protobuf.Type) return messageToWire(resolved, v, where, depth + 1);
  return scalarToWire(field, v, where);
}

function isDefaultScalar(v: unknown): boolean {
  return v === '' || v === 0 || v === false || (v instanceof Uint8Array && v.length === 0);
}

function messageToWire(type: Type, value: unknown, where: string, depth: number): Obj {
  if (depth > MAX_DEPTH) throw new FieldError(`${where}: nested too deeply`);
  if (!isObj(value)) throw new FieldError(`${where}: expected an object (${type.name}), got ${describe(value)}`);
  const out: Obj = {};
  for (const field of type.fieldsArray) {
    const v = value[field.name];
    const at = where === '' ? field.name : `${where}.${field.name}`;
    if (v === undefined) throw new FieldError(`${at}: missing`);
    if (field.map) {
      if (!isObj(v)) throw new FieldError(`${at}: expected an object (map), got ${describe(v)}`);
      const keys = Object.keys(v);
      if (keys.length === 0) continue;
      const map: Obj = Object.create(null) as Obj;
      for (const k of keys) map[k] = valueToWire(field, v[k], `${at}[${JSON.stringify(k)}]`, depth);
      out[field.name] = map;
    } else if (field.repeated) {
      if (!Array.isArray(v)) throw new FieldError(`${at}: expected an array, got ${describe(v)}`);
      if (v.length === 0) continue;
      out[field.name] = v.map((item: unknown, i) => valueToWire(field, item, `${at}[${i}]`, depth));
    } else {
      const w = valueToWire(field, v, at, depth);
      if (field.resolvedType instanceof protobuf.Type || !isDefaultScalar(w)) out[field.name] = w;
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Decoded message -> plain data (every field present).

function longToNumber(v: unknown, where: string): number {
  let n: number;
  if (typeof v === 'number') n = v;
  else if (isObj(v) && typeof v['toNumber'] === 'function') n = (v as { toNumber(): number }).toNumber();
  else throw new FieldError(`${where}: expected a 64-bit integer, got ${describe(v)}`);
  if (!Number.isSafeInteger(n)) throw new FieldError(`${where}: ${n} is beyond the safe integer range`);
  return n;
}

function valueFromWire(field: Field, v: unknown, where: string, depth: number): unknown {
  const resolved = field.resolvedType;
  if (resolved instanceof protobuf.Type) {
    return messageFromWire(resolved, v ?? resolved.create(), where, depth + 1);
  }
  if (resolved instanceof protobuf.Enum) {
    const name = typeof v === 'number' ? resolved.valuesById[v] : undefined;
    if (name === undefined) throw new FieldError(`${where}: unknown ${resolved.name} value ${describe(v)}`);
    return name;
  }
  if (field.long) return longToNumber(v, where);
  return v;
}

function messageFromWire(type: Type, msg: unknown, where: string, depth: number): Obj {
  if (depth > MAX_DEPTH) throw new FieldError(`${where}: nested too deeply`);
  if (!isObj(msg)) throw new FieldError(`${where}: expected a message, got ${describe(msg)}`);
  const out: Obj = {};
  for (const field of type.fieldsArray) {
    const v = msg[field.name];
    const at = where === '' ? field.name : `${where}.${field.name}`;
    if (field.map) {
      const map: Obj = {};
      if (isObj(v)) {
        for (const k of Object.keys(v)) {
          const item = valueFromWire(field, v[k], `${at}[${JSON.stringify(k)}]`, depth);
          Object.defineProperty(map, k, { value: item, enumerable: true, writable: true, configurable: true });
        }
      }
      out[field.name] = map;
    } else if (field.repeated) {
      out[field.name] = Array.isArray(v) ? v.map((item: unknown, i) => valueFromWire(field, item, `${at}[${i}]`, depth)) : [];
    } else {
      out[field.name] = valueFromWire(field, v, at, depth);
    }
  }
  return out;
}

function checkWantSource(type: EventType, payload: Obj, where: string): void {
  if (type !== 'want_created') return;
  const source = payload['source'];
  if (!(WANT_SOURCES as readonly unknown[]).includes(source)) {
    throw new FieldError(`${where}.source: expected one of ${WANT_SOURCES.join('|')}, got ${describe(source)}`);
  }
}

function payloadType(type: EventType): Type {
  const field = schema.BuildEvent.fields[type];
  const resolved = field?.resolve().resolvedType;
  if (!(resolved instanceof protobuf.Type)) throw new Error(`platform.v1.BuildEvent has no message field ${type}`);
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
    const payload = messageToWire(payloadType(type), raw[type], type, 0);
    checkWantSource(type, raw[type] as Obj, type);
    const wire: Obj = { event_id, timestamp, [type]: payload };
    return schema.BuildEvent.encode(wire).finish();
  } catch (err) {
    if (err instanceof FieldError) throw new EventCodecError(`cannot encode ${label}: ${err.message}`, id);
    throw err;
  }
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
    let msg: Obj;
    try {
      msg = schema.BuildEvent.decode(bytes) as unknown as Obj;
    } catch (err) {
      throw new FieldError(`corrupt record (${bytes.length} bytes): ${errorMessage(err)}`);
    }
    const event_id = longToNumber(msg['event_id'], 'event_id');
    if (expectedId === undefined) {
      label = `event ${event_id}`;
      eventId = event_id;
    } else if (event_id !== expectedId) {
      throw new FieldError(`record holds event_id ${event_id}`);
    }
    const timestamp = longToNumber(msg['timestamp'], 'timestamp');
    const oneof = schema.BuildEvent.oneofs['payload'];
    const type = oneof?.oneof.find((name) => msg[name] != null);
    if (type === undefined) throw new FieldError('no known payload (unknown event type or corrupt record)');
    if (!isEventType(type)) throw new FieldError(`event type ${type} is not known to this version`);
    const payload = messageFromWire(payloadType(type), msg[type], type, 0);
    checkWantSource(type, payload, type);
    return { event_id, timestamp, type, [type]: payload } as unknown as BuildEvent;
  } catch (err) {
    if (err instanceof FieldError) {
      throw new EventCodecError(`cannot decode ${label}: ${err.message}`, eventId, { cause: err });
    }
    throw err;
  }
}
