import protobuf from 'protobufjs';
import type { Type } from 'protobufjs';
import protojson from 'protobufjs/ext/protojson.js';
import type { DataDep, JobConfig } from '../events/build-event.js';
import { errorMessage } from '../errors.js';
import { schema } from '../proto/schema.js';

/**
 * Parsing of a config program's `JobConfigResponse` JSON into fully-filled `JobConfig`s, by protobufjs' ProtoJSON
 * reader against the proto schema.
 *
 * ProtoJSON accepts both the field names of the proto (snake_case) and their lowerCamelCase JSON names, enum values as
 * names or numbers, and omitted or null fields as their defaults. Unknown fields are rejected, so that a typo such as
 * "input" does not silently drop inputs. On top of the schema: every input names a partition, and its dep_type is one
 * this version knows (edition 2023 enums are open, so the reader lets any number through).
 */

export class JobConfigResponseError extends Error {
  override readonly name = 'JobConfigResponseError';
}

/** toObject options giving the plain shape of build-event.ts: enum names, every field present. */
const PLAIN: protobuf.IConversionOptions = { enums: String, defaults: true, arrays: true, objects: true };

export function parseJobConfigResponse(value: unknown): JobConfig[] {
  const type = schema.JobConfigResponse;
  let message: protobuf.Message;
  try {
    message = protojson.fromJson(type, value);
  } catch (err) {
    throw new JobConfigResponseError(explain(type, value, err));
  }
  const { configs } = type.toObject(message, PLAIN) as { configs: JobConfig[] };
  configs.forEach((c, i) => c.inputs.forEach((d, k) => checkDataDep(d, `configs[${i}].inputs[${k}]`)));
  return configs;
}

function checkDataDep(d: DataDep, at: string): void {
  if (d.partition_ref === '') throw new JobConfigResponseError(`${at}.partition_ref must be a non-empty string, not ""`);
  if (typeof d.dep_type !== 'string' || !Object.hasOwn(schema.DepType.values, d.dep_type)) {
    throw new JobConfigResponseError(`${at}.dep_type must be ${enumValues(schema.DepType)}, not ${shown(d.dep_type)}`);
  }
}

/**
 * The reader's error names the message type and field, not where in the document they are: walk down to the
 * innermost message value that fails on its own, so the error reads "configs[2].inputs[0].dep_type: ...", and add
 * what would have been accepted.
 */
function explain(top: Type, json: unknown, err: unknown): string {
  const { type, value, at } = locate(top, json, '');
  let message = errorMessage(err);
  if (type !== top) {
    try {
      protojson.fromJson(type, value);
    } catch (inner) {
      message = errorMessage(inner);
    }
  }
  // The reader's messages read "<.full.Type>[.field]: <what>: <value>".
  const rest = message.startsWith(type.fullName) ? message.slice(type.fullName.length) : `: ${message}`;
  const where = at === '' ? (rest.startsWith('.') ? rest.slice(1) : `the response${rest}`) : `${at}${rest}`;
  const field = /^\.(\w+):/.exec(rest)?.[1];
  const resolved = field === undefined ? undefined : type.fields[field]?.resolvedType;
  let hint = '';
  if (/^: unknown field:/.test(rest)) hint = ` (expected one of ${type.fieldsArray.map((f) => f.name).join(', ')})`;
  else if (resolved instanceof protobuf.Enum) {
    hint = ` (expected ${enumValues(resolved)})`;
  } else if (at === '' && !isRecord(json)) hint = ' (print one JSON object such as {"configs": [...]})';
  return `${where}${hint}`;
}

function locate(type: Type, value: unknown, at: string): { type: Type; value: unknown; at: string } {
  if (!isRecord(value)) return { type, value, at };
  for (const [key, v] of Object.entries(value)) {
    const field = type.fieldsArray.find((f) => f.name === key || f.jsonName === key);
    const inner = field?.resolve().resolvedType;
    if (!field || field.map || !(inner instanceof protobuf.Type)) continue;
    const items: unknown[] = field.repeated ? (Array.isArray(v) ? v : []) : [v];
    for (const [i, item] of items.entries()) {
      if (item === null && !field.repeated) continue;
      try {
        protojson.fromJson(inner, item);
      } catch {
        return locate(inner, item, `${at === '' ? '' : `${at}.`}${key}${field.repeated ? `[${i}]` : ''}`);
      }
    }
  }
  return { type, value, at };
}

/** `"QUERY" (0) or "MATERIALIZE" (1)` */
function enumValues(e: protobuf.Enum): string {
  return Object.entries(e.values)
    .map(([name, n]) => `"${name}" (${n})`)
    .join(' or ');
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function shown(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
