/**
 * The one place requests meet their schemas (lib/api/schemas): a value that does not fit becomes a 400 whose
 * message names the field and says what it must be, worded from the schema itself so message and contract agree.
 */
import { ILL_FORMED_TEXT, illFormedPath } from '../api/well-formed.js';
import { typeName } from '../orchestrator/request-checks.js';
import type { Static, TSchema } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { ValueErrorType, type ValueError } from '@sinclair/typebox/errors';
import { HttpError } from './http-error.js';
import { escapeControls } from '../control-characters.js';

const compiled = new WeakMap<TSchema, TypeCheck<TSchema>>();

function checker<T extends TSchema>(schema: T): TypeCheck<T> {
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

/** A JSON body (what express.json left in `req.body`) that fits `schema`, or a 400. */
export function validateBody<T extends TSchema>(schema: T, body: unknown, use: BodyUse): Static<T> {
  if (body === undefined) throw new HttpError(400, `Expected a JSON body (Content-Type: application/json) like ${use.example}.`);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new HttpError(400, `The body must be a JSON object, got ${typeName(body)}, like ${use.example}.`);
  }
  const check = checker(schema);
  const illFormed = illFormedPath(body);
  if (illFormed) throw new HttpError(400, `${illFormed} ${ILL_FORMED_TEXT}; nothing was recorded.`);
  if (check.Check(body)) return body;
  const error = first(check.Errors(body));
  if (error.type === ValueErrorType.ObjectAdditionalProperties) {
    const fields = Object.keys((error.schema as { properties?: object }).properties ?? {});
    // A body of no fields (a resume) says so, and what to send, rather than "takes ." with nothing after it.
    const takes = fields.length > 0 ? `takes ${fields.join(', ')}` : `takes no fields: send ${use.example}`;
    throw new HttpError(400, `Unknown field '${lastKey(error.path)}'; ${use.what} ${takes}.`);
  }
  const where = fieldName(error.path);
  if (error.type === ValueErrorType.ObjectRequiredProperty) {
    throw new HttpError(400, `${where} is required: ${expects(error.schema)}; for example ${use.example}.`);
  }
  throw new HttpError(400, `${where} must be ${expects(error.schema)}, got ${shown(error.value)}.`);
}

/**
 * The body of a write that may go without one (a pause, a resume, gc): none at all is `{}`, but whatever JSON was
 * sent must fit, `null` included: a `?? {}` read `null` as no body and paused, or ran a real gc pass, where the
 * client had sent something else than it meant.
 */
export function validateOptionalBody<T extends TSchema>(schema: T, body: unknown, use: BodyUse): Static<T> {
  return validateBody(schema, body === undefined ? {} : body, use);
}

export type Query = Record<string, unknown>;

/**
 * A 400 for a query parameter `schema` (the operation's query, none when absent) does not name. A name the path does
 * not read was dropped unseen: a misspelt filter (`want=` for `want_id=`) answered everything, and a write took
 * `POST /api/gc?dry_run=true` for a real gc.
 */
export function refuseUnknownQuery(schema: TSchema | undefined, query: Query): void {
  const properties = (schema as { properties?: Record<string, TSchema> } | undefined)?.properties ?? {};
  for (const name of Object.keys(query)) {
    if (!Object.hasOwn(properties, name)) {
      const takes = Object.keys(properties);
      throw new HttpError(
        400,
        `Unknown query parameter '${name}'; ${takes.length > 0 ? `this path takes ${takes.join(', ')}` : 'this path takes none'}: nothing was done. See README.md for the API.`,
      );
    }
  }
}

/**
 * The query parameters `schema` names, or a 400. A query string carries only text: a
 * parameter whose schema is an integer is read as one when it is all digits; an empty one counts as absent.
 */
export function validateQuery<T extends TSchema>(schema: T, query: Query): Static<T> {
  refuseUnknownQuery(schema, query);
  const properties = (schema as { properties?: Record<string, TSchema> }).properties ?? {};
  const value: Record<string, unknown> = {};
  for (const [name, property] of Object.entries(properties)) {
    const raw = query[name];
    if (raw === undefined || raw === '') continue;
    if (typeof raw !== 'string') throw new HttpError(400, `Query parameter '${name}' must be given once, as ${expects(property)}.`);
    value[name] = property.type === 'integer' && /^\d+$/.test(raw) ? Number(raw) : raw;
  }
  const check = checker(schema);
  if (check.Check(value)) return value as Static<T>;
  const error = first(check.Errors(value));
  const name = lastKey(error.path);
  const raw = query[name];
  // Digits past a maximum the words of `expects` leave out (the largest safe integer): "must be a whole number of at
  // least 0" read as if the digits were no number at all.
  const max = (properties[name] as { maximum?: unknown } | undefined)?.maximum;
  if (typeof raw === 'string' && /^\d+$/.test(raw) && typeof max === 'number' && max >= Number.MAX_SAFE_INTEGER && Number(raw) > max) {
    throw new HttpError(400, `Query parameter '${name}' is too large: at most ${max}, got ${raw.length > 40 ? `${raw.slice(0, 37)}... (${raw.length} digits)` : raw}.`);
  }
  throw new HttpError(400, `Query parameter '${name}' must be ${expects(error.schema)}, got ${escapeControls(JSON.stringify(raw))}.`);
}

/** One value (a path segment, a header) against its schema, or a 400 that calls it `what`. */
export function validateValue<T extends TSchema>(schema: T, value: unknown, what: string): Static<T> {
  const check = checker(schema);
  if (check.Check(value)) return value;
  throw new HttpError(400, `${what} must be ${expects(schema)}, got ${shown(value)}.`);
}

function first(errors: Iterable<ValueError>): ValueError {
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

function lastKey(path: string): string {
  return unescapeKey(path.slice(path.lastIndexOf('/') + 1));
}

function unescapeKey(key: string): string {
  return key.replace(/~1/g, '/').replace(/~0/g, '~');
}

/** A value in a message: short, and quoted as JSON. */
function shown(value: unknown): string {
  // JSON.parse reads 1e400 as Infinity, which JSON.stringify would say is null: say what the request held.
  if (typeof value === 'number' && !Number.isFinite(value)) return `${value} (a number past 1.8e308 in size)`;
  let text: string;
  try {
    text = value === undefined ? 'nothing' : escapeControls(JSON.stringify(value));
  } catch {
    // A body of arrays nested a hundred thousand deep parses, but JSON.stringify overflows the stack on it.
    return `${typeName(value)} nested too deeply to show`;
  }
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/** What a JSON value is, for a message: 'an array', 'null', 'a string'... */
export { typeName };
