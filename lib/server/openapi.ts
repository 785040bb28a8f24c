/**
 * The OpenAPI 3.1 document of the API, printed from the operation table (api-operations.ts) and its TypeBox
 * schemas. TypeBox schemas are JSON Schema 2020-12, which is OpenAPI 3.1's schema dialect, so they go in as they
 * are; a schema with an `$id` is hoisted into `components.schemas` under that name and referred to.
 */
import type { TSchema } from '@sinclair/typebox';
import { ConnectErrorBodySchema, ErrorBodySchema } from '../api/schemas/errors.js';
import { VERSION } from '../version.js';
import { OPERATIONS, errorStatuses, type Answer, type Operation } from './api-operations.js';

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
type JsonObject = { [key: string]: JsonValue };

const COMPONENTS = '#/components/schemas/';

/** `/api/wants/:id` -> `/api/wants/{id}`. */
export function openApiPath(expressPath: string): string {
  return expressPath.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}');
}

export function openApiDocument(): JsonObject {
  const components: JsonObject = {};
  const schema = (s: TSchema): JsonValue => hoist(JSON.parse(JSON.stringify(s)) as JsonValue, components);
  const paths: JsonObject = {};
  for (const op of OPERATIONS) {
    const path = openApiPath(op.path);
    const item = (paths[path] ??= {}) as JsonObject;
    if (item[op.method] !== undefined) throw new Error(`${op.method.toUpperCase()} ${op.path} is in the operation table twice`);
    item[op.method] = operation(op, schema);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'platform daemon API',
      version: VERSION,
      description:
        'The REST API of a platform workspace daemon (README.md, "HTTP API"). Bound to 127.0.0.1; JSON bodies, snake_case ' +
        'fields, ISO 8601 times; errors are {"error", "want_id"?, "first_event_id"?, "stopping"?}; a request read while the server stops is answered 503 with "stopping": true (not carried out: run it again); a method a path does not take is a 405 with Allow. A daemon started by the CLI requires its token of every ' +
        'request but /health (a bare `platform serve` does not).',
    },
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    security: [{ bearerToken: [] }, { tokenCookie: [] }],
    paths,
    components: {
      schemas: components,
      securitySchemes: {
        bearerToken: { type: 'http', scheme: 'bearer', description: 'The `token` of .platform/server.json.' },
        tokenCookie: { type: 'apiKey', in: 'cookie', name: 'platform_token', description: "Set by `platform ui`'s one-time link, for the dashboard." },
      },
    },
  };
}

function operation(op: Operation, schema: (s: TSchema) => JsonValue): JsonObject {
  const parameters: JsonValue[] = [];
  for (const name of op.path.match(/:[A-Za-z_][A-Za-z0-9_]*/g) ?? []) {
    const key = name.slice(1);
    const s = op.pathParams?.[key];
    parameters.push({ name: key, in: 'path', required: true, schema: s ? schema(s) : { type: 'string' } });
  }
  const query = op.query as (TSchema & { properties?: Record<string, TSchema>; required?: string[] }) | undefined;
  for (const [name, s] of Object.entries(query?.properties ?? {})) {
    const description: JsonObject = typeof s.description === 'string' ? { description: s.description } : {};
    parameters.push({ name, in: 'query', required: query?.required?.includes(name) ?? false, schema: schema(s), ...description });
  }
  for (const [name, h] of Object.entries(op.headers ?? {})) {
    parameters.push({ name, in: 'header', required: false, schema: schema(h.schema), description: h.description });
  }
  const responses: JsonObject = {};
  for (const [status, answer] of Object.entries(op.responses)) responses[status] = response(answer, schema);
  const errorSchema = op.connect ? ConnectErrorBodySchema : ErrorBodySchema;
  // The guards' refusals on an RPC path are Connect errors too (connect/refusal-as-rpc-error.ts).
  for (const [status, description] of Object.entries(errorStatuses(op))) {
    responses[status] ??= { description, content: { 'application/json': { schema: schema(errorSchema) } } };
  }
  // express tags every GET answer with an ETag and answers a request that sends it back in If-None-Match with a
  // bodyless 304 (fast-reads.ts tags its answers the same); a stream has no ETag.
  const ok = op.responses[200];
  const streams = ok !== undefined && 'text' in ok && ok.text.includes('text/event-stream');
  if (op.method === 'get' && !op.connect && !streams) {
    responses['304'] ??= { description: 'Not modified: the ETag sent in If-None-Match still matches; no body.' };
  }
  const out: JsonObject = {
    operationId: operationId(op),
    summary: op.summary,
    ...(parameters.length > 0 ? { parameters } : {}),
    responses,
  };
  if (op.body) {
    const content: JsonObject = {};
    for (const media of op.body.media ?? ['application/json']) {
      content[media] = media === 'application/json' ? { schema: schema(op.body.schema), example: JSON.parse(op.body.example) as JsonValue } : {};
    }
    out.requestBody = { required: op.body.required, content };
  }
  if (op.open) out.security = [];
  return out;
}

function response(answer: Answer, schema: (s: TSchema) => JsonValue): JsonObject {
  const content: JsonObject = {};
  if ('text' in answer) for (const media of answer.text) content[media] = media === 'text/html' || media === 'application/proto' ? {} : { schema: { type: 'string' } };
  if ('json' in answer && answer.json) content['application/json'] = { schema: schema(answer.json) };
  return 'empty' in answer ? { description: answer.description } : { description: answer.description, content };
}

/** `GET /api/wants/:id` -> `getApiWantsById`. */
function operationId(op: Operation): string {
  const words = op.path
    .split(/[/.]/)
    .filter((w) => w !== '')
    .map((w) => (w.startsWith(':') ? `By_${w.slice(1)}` : w))
    .flatMap((w) => w.split(/[_-]/))
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1));
  return `${op.method}${words.join('') || 'Root'}`;
}

/**
 * Moves every schema with an `$id` into `components` (once per name: two different schemas may not claim one)
 * and points to it; a relative `$ref` (TypeBox's recursion refers to its `$id`) points there too.
 */
function hoist(value: JsonValue, components: JsonObject): JsonValue {
  if (Array.isArray(value)) return value.map((v) => hoist(v, components));
  if (value === null || typeof value !== 'object') return value;
  if (typeof value.$ref === 'string' && !value.$ref.startsWith('#')) return { ...value, $ref: COMPONENTS + value.$ref };
  const { $id, ...rest } = value;
  const walked: JsonObject = {};
  if (typeof $id === 'string') {
    const seen = components[$id];
    // A placeholder first, so a schema that refers to itself finds its name taken by itself.
    if (seen === undefined) components[$id] = {};
    for (const [k, v] of Object.entries(rest)) walked[k] = hoist(v, components);
    if (seen !== undefined && JSON.stringify(seen) !== JSON.stringify(walked)) throw new Error(`Two different schemas are named ${$id}`);
    components[$id] = walked;
    return { $ref: COMPONENTS + $id };
  }
  for (const [k, v] of Object.entries(value)) walked[k] = hoist(v, components);
  return walked;
}
