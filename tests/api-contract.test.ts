/**
 * The API's contract: GET /api/openapi.json serves a valid OpenAPI 3.1 document (checked by a maintained
 * validator and by hand: every operation answers something, every $ref resolves), under the same access rules as
 * the rest of /api, and it lists exactly the routes the express app has, so a route added without its entry (or
 * an entry left after its route) fails here. The checker the fixtures use (helpers/contract.ts) is tested too.
 */
import test from 'ava';
import { ReplaySubject } from 'rxjs';
import { Validator } from '@seriousme/openapi-schema-validator';
import { createApp } from '../lib/server/app.js';
import { LoginCodes } from '../lib/server/login-codes.js';
import { SseClients } from '../lib/server/sse-clients.js';
import { openApiDocument, openApiPath } from '../lib/server/openapi.js';
import { PLATFORM_SERVICE, platformService } from '../lib/proto/schema.js';
import { contractProblem } from './helpers/contract.js';
import { rawRequest, startServer } from './helpers/server-fixture.js';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

const METHODS = ['get', 'post', 'delete', 'put', 'patch', 'head', 'options'];

test('GET /api/openapi.json is a valid OpenAPI 3.1 document: the validator passes it, every operation has responses, every $ref resolves', async (t) => {
  const f = await startServer(t);
  const res = await f.api('/api/openapi.json');
  t.is(res.status, 200);
  t.regex(res.headers.get('content-type') ?? '', /^application\/json/);
  const doc = (await res.json()) as { [k: string]: Json };
  t.deepEqual(doc, JSON.parse(JSON.stringify(openApiDocument())), 'the served document is the one the fixtures check answers against');
  t.regex(String(doc.openapi), /^3\.1\.\d+$/);

  const verdict = await new Validator().validate(doc);
  t.true(verdict.valid, JSON.stringify(verdict.errors));

  const paths = doc.paths as { [path: string]: { [method: string]: { responses?: { [status: string]: Json } } } };
  let operations = 0;
  for (const [path, item] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(item)) {
      t.true(METHODS.includes(method), `${path}: ${method}`);
      operations++;
      t.true(Object.keys(op.responses ?? {}).length > 0, `${method.toUpperCase()} ${path} has no responses`);
      const errors = Object.keys(op.responses ?? {}).filter((s) => Number(s) >= 400);
      if (path !== '/health') t.true(errors.includes('400') || path === '/login', `${method.toUpperCase()} ${path} documents no 400`);
      t.true(errors.length > 0, `${method.toUpperCase()} ${path} documents no error`);
    }
  }
  t.true(operations >= 30, `${operations} operations`);

  const refs: string[] = [];
  const walk = (v: Json): void => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v !== null && typeof v === 'object') {
      if (typeof v.$ref === 'string') refs.push(v.$ref);
      Object.values(v).forEach(walk);
    }
  };
  walk(doc);
  t.true(refs.length > 20);
  for (const ref of new Set(refs)) {
    t.true(ref.startsWith('#/'), `${ref} is not a local reference`);
    let target: Json | undefined = doc;
    for (const part of ref.slice(2).split('/').map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))) {
      target = target !== null && typeof target === 'object' && !Array.isArray(target) ? target[part] : undefined;
    }
    t.true(target !== undefined && target !== null && typeof target === 'object', `${ref} does not resolve`);
  }

  // The error body and the security scheme are there; /health needs no token.
  const schemas = (doc.components as { schemas: { [k: string]: Json } }).schemas;
  t.truthy(schemas.ErrorBody);
  t.deepEqual((doc.components as { securitySchemes: { [k: string]: Json } }).securitySchemes.bearerToken, {
    type: 'http',
    scheme: 'bearer',
    description: 'The `token` of .platform/server.json.',
  });
  t.deepEqual((paths['/health']!.get as { security?: Json }).security, []);
});

test('the document lists exactly the routes the express app registers, and the RPCs of PlatformService', async (t) => {
  const f = await startServer(t);
  const shutdown$ = new ReplaySubject<void>(1);
  t.teardown(() => shutdown$.next());
  const app = createApp({ platform: f.platform, shutdown$, sse: new SseClients(), access: { codes: new LoginCodes() } }, () => {});

  interface Layer {
    route?: { path: unknown; methods: Record<string, boolean> };
    handle?: { stack?: Layer[] };
  }
  const registered = new Set<string>();
  const visit = (stack: Layer[]) => {
    for (const layer of stack) {
      if (layer.route) {
        for (const method of Object.keys(layer.route.methods)) {
          // The dashboard's catch-all (a regular expression: any non-API path a browser asks for) is documented as GET /.
          const path = typeof layer.route.path === 'string' ? openApiPath(layer.route.path) : '/';
          registered.add(`${method.toUpperCase()} ${path}`);
        }
      } else if (layer.handle?.stack) {
        visit(layer.handle.stack);
      }
    }
  };
  visit((app as unknown as { router: { stack: Layer[] } }).router.stack);
  // The RPCs are one middleware under /platform.v1.PlatformService/; their methods come from the .proto.
  for (const method of platformService().methodsArray) registered.add(`POST /${PLATFORM_SERVICE}/${method.name}`);

  const documented = new Set<string>();
  const doc = openApiDocument() as { paths: Record<string, Record<string, unknown>> };
  for (const [path, item] of Object.entries(doc.paths)) for (const method of Object.keys(item)) documented.add(`${method.toUpperCase()} ${path}`);

  t.deepEqual([...registered].filter((r) => !documented.has(r)).sort(), [], 'routes without a document entry');
  t.deepEqual([...documented].filter((d) => !registered.has(d)).sort(), [], 'document entries without a route');
  t.true(registered.has('GET /api/openapi.json'));
  t.true(registered.has('GET /api/wants/{id}'));
});

test('GET /api/openapi.json follows the access rules of /api: with a token it needs it, /health does not', async (t) => {
  const f = await startServer(t, { server: { token: 'contract-token' } });
  const without = await rawRequest(`${f.url}/api/openapi.json`);
  t.is(without.status, 401);
  const withToken = await rawRequest(`${f.url}/api/openapi.json`, { headers: { authorization: 'Bearer contract-token' } });
  t.is(withToken.status, 200);
  t.is((JSON.parse(withToken.body) as { openapi: string }).openapi, '3.1.0');
  t.is((await rawRequest(`${f.url}/health`)).status, 200);
  const foreignHost = await rawRequest(`${f.url}/api/openapi.json`, { headers: { host: 'evil.example', authorization: 'Bearer contract-token' } });
  t.is(foreignHost.status, 403);
});

test('the contract checker catches a body that breaks its schema, an undocumented status and an undocumented media type', (t) => {
  t.is(contractProblem('GET', '/api/status', 200, 'application/json', JSON.stringify({ pid: 1 })) !== undefined, true);
  t.regex(contractProblem('GET', '/api/status', 200, 'application/json', JSON.stringify({ pid: 1 }))!, /GET \/api\/status -> 200.*required property 'port'/);
  t.regex(contractProblem('GET', '/api/wants/w-1', 418, 'application/json', '{"error":"x"}')!, /status 418 is not documented/);
  t.regex(contractProblem('GET', '/api/status', 200, 'text/plain', 'hi')!, /media type "text\/plain"/);
  t.regex(contractProblem('GET', '/api/wants/w-1', 404, 'application/json', '{"error":"x","extra":1}')!, /does not fit/);
  t.is(contractProblem('GET', '/api/wants/w-1', 404, 'application/json', '{"error":"No want","want_id":"w-1"}'), undefined);
  t.is(contractProblem('GET', '/api/events/stream', 200, 'text/event-stream', ''), undefined, '/api/events/stream is not taken for /api/events/{id}');
  t.regex(contractProblem('GET', '/api/nothing-here', 404, 'application/json', '{"message":"no"}')!, /no operation/);
});
