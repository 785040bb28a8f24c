/**
 * The one place requests meet their schemas (lib/api/schemas): a value that does not fit becomes a 400 whose
 * message names the field and says what it must be, worded from the schema itself so message and contract agree.
 */
import { typeName } from '../orchestrator/request-checks.js';
import type { Static, TSchema } from '@sinclair/typebox';
import { HttpError } from './http-error.js';
import { escapeControls } from '../control-characters.js';
import { bodyProblem, checker, expects, firstError as first, lastKey, shown, type BodyUse } from '../api/body-check.js';

export type { BodyUse };
export { expects };

/** A JSON body (what express.json left in `req.body`) that fits `schema`, or a 400 (api/body-check.ts words it). */
export function validateBody<T extends TSchema>(schema: T, body: unknown, use: BodyUse): Static<T> {
  const problem = bodyProblem(schema, body, use);
  if (problem !== undefined) throw new HttpError(400, problem);
  return body as Static<T>;
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

/** What a JSON value is, for a message: 'an array', 'null', 'a string'... */
export { typeName };
