/**
 * What is wrong with a request body against its schema (lib/api/schemas), as one sentence for a 400: the field, and
 * what it must be, worded from the schema itself so message and contract agree. Pure, and shared: the JSON API
 * refuses a body with it (server/validate.ts), the embedding API a request object (platform.ts), so both say the same.
 */
import { ILL_FORMED_TEXT, illFormedPath } from './well-formed.js';
import { typeName } from '../orchestrator/request-checks.js';
import type { TSchema } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { ValueErrorType, type ValueError } from '@sinclair/typebox/errors';
import { escapeControls } from '../control-characters.js';

const compiled = new WeakMap<TSchema, TypeCheck<TSchema>>();

export function checker<T extends TSchema>(schema: T): TypeCheck<T> {
  let check = compiled.get(schema);
  if (!check) {
    check = TypeCompiler.Compile(schema);
    compiled.set(schema, check);
  }
  return check as TypeCheck<T>;
}

/** What a JSON body is for, to word its errors: `a want`, and a body that would do. */
export interface BodyUse {
  what: string;
  example: string;
}

/** Why `body` does not fit `schema`, or undefined when it does. */
export function bodyProblem(schema: TSchema, body: unknown, use: BodyUse): string | undefined {
  if (body === undefined) return `Expected a JSON body (Content-Type: application/json) like ${use.example}.`;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return `The body must be a JSON object, got ${typeName(body)}, like ${use.example}.`;
  }
  const check = checker(schema);
  const illFormed = illFormedPath(body);
  if (illFormed) return `${illFormed} ${ILL_FORMED_TEXT}; nothing was recorded.`;
  if (check.Check(body)) return undefined;
  const error = firstError(check.Errors(body));
  if (error.type === ValueErrorType.ObjectAdditionalProperties) {
    const fields = Object.keys((error.schema as { properties?: object }).properties ?? {});
    // A body of no fields (a resume) says so, and what to send, rather than "takes ." with nothing after it.
    const takes = fields.length > 0 ? `takes ${fields.join(', ')}` : `takes no fields: send ${use.example}`;
    return `Unknown field '${lastKey(error.path)}'; ${use.what} ${takes}.`;
  }
  const where = fieldName(error.path);
  if (error.type === ValueErrorType.ObjectRequiredProperty) {
    return `${where} is required: ${expects(error.schema)}; for example ${use.example}.`;
  }
  return `${where} must be ${expects(error.schema)}, got ${shown(error.value)}.`;
}

export function firstError(errors: Iterable<ValueError>): ValueError {
  for (const e of errors) return e;
  throw new Error('a schema check failed without saying why');
}

/** What a schema accepts, in words. */
export function expects(schema: TSchema): string {
  const s = schema as TSchema & Record<string, unknown>;
  if (typeof s['x-expects'] === 'string') return s['x-expects'];
  if (Array.isArray(s.anyOf)) {
    const variants = (s.anyOf as TSchema[]).filter((v) => v.type !== 'null');
    if (variants.every((v) => 'const' in v)) return `one of ${variants.map((v) => String(v.const)).join(', ')}`;
    return variants.map(expects).join(' or ');
  }
  if ('const' in s) return JSON.stringify(s.const);
  switch (s.type) {
    case 'integer':
    case 'number': {
      const kind = s.type === 'integer' ? 'a whole number' : 'a number';
      const min = typeof s.minimum === 'number' ? s.minimum : undefined;
      const max = typeof s.maximum === 'number' && s.maximum < Number.MAX_SAFE_INTEGER ? s.maximum : undefined;
      if (min !== undefined && max !== undefined) return `${kind} from ${min} to ${max}`;
      if (min !== undefined) return `${kind} of at least ${min}`;
      return kind;
    }
    case 'string':
      return typeof s.maxLength === 'number' ? `a string of at most ${s.maxLength} characters` : 'a string';
    case 'boolean':
      return 'true or false';
    case 'array': {
      // Items are named by their schema's title ("partition ref"); a single bad item gets its own message.
      const title = (s.items as TSchema | undefined)?.title;
      const noun = typeof title === 'string' ? `${title}s` : 'items';
      const size = typeof s.maxItems === 'number' ? `of at most ${s.maxItems} ${noun}` : `of ${noun}`;
      return `${typeof s.minItems === 'number' && s.minItems > 0 ? 'a non-empty array' : 'an array'} ${size}`;
    }
    case 'object':
      return 'a JSON object';
    case 'null':
      return 'null';
    default:
      return 'a valid value';
  }
}

/** `/partitions/2` -> `partitions[2]`, `/ttl_seconds` -> `Field 'ttl_seconds'`, '' -> `The body`. */
function fieldName(path: string): string {
  const keys = path.split('/').slice(1).map(unescapeKey);
  if (keys.length === 0) return 'The body';
  const name = keys.map((k, i) => (/^\d+$/.test(k) ? `[${k}]` : i === 0 ? k : `.${k}`)).join('');
  return keys.length === 1 ? `Field '${name}'` : name;
}

export function lastKey(path: string): string {
  return unescapeKey(path.slice(path.lastIndexOf('/') + 1));
}

function unescapeKey(key: string): string {
  return key.replace(/~1/g, '/').replace(/~0/g, '~');
}

/** A value in a message: short, and quoted as JSON. */
export function shown(value: unknown): string {
  // An embedder's NaN (JSON has none), which JSON.stringify would say is null.
  if (Number.isNaN(value)) return 'NaN (not a number)';
  // JSON.parse reads 1e400 as Infinity, which JSON.stringify would say is null: say what the request held.
  if (typeof value === 'number' && !Number.isFinite(value)) return `${value} (a number past 1.8e308 in size)`;
  if (value === undefined) return 'nothing';
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch {
    // A body of arrays nested a hundred thousand deep parses, but JSON.stringify overflows the stack on it.
    return `${typeName(value)} nested too deeply to show`;
  }
  // What JSON cannot carry, an embedder's function or symbol: said by its type.
  if (json === undefined) return typeName(value);
  const text = escapeControls(json);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
