/**
 * The PlatformService Connect binding against a real server (127.0.0.1, port 0) on real platforms: raw fetch with
 * JSON and binary bodies, and the stock Connect client (@connectrpc/connect-node) with the descriptors that
 * protoc-gen-es generated into tests/gen (`npm run gen:proto`).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { Code, ConnectError, createClient, type Client } from '@connectrpc/connect';
import { compressionGzip, createConnectTransport } from '@connectrpc/connect-node';
import test, { type ExecutionContext } from 'ava';
import type { GraphDefinition } from '../lib/graph/graph-definition.js';
import { parseGraph } from '../lib/graph/parse-graph.js';
import { Platform } from '../lib/platform.js';
import { canonicalSchema } from '../lib/proto/schema.js';
import { startHttpServer, type RunningServer } from '../lib/server/http-server.js';
import { DepType, PlatformService } from './gen/platform/v1/platform_pb.js';

// ---------------------------------------------------------------------------------------------
// Fixtures: a workspace with a -> b -> c (+ config-program jobs), and one with a cycle.

const CONFIG_PROGRAM = `
const [mode, ...refs] = process.argv.slice(2);
switch (mode) {
  case 'pair': // one config producing both sides, whichever side is asked for
    console.log(JSON.stringify({ configs: [{
      outputs: ['pair/left', 'pair/right'],
      inputs: [{ partitionRef: 'c/7', depType: 'MATERIALIZE' }],
      args: ['--both'],
    }] }));
    break;
  case 'fail':
    console.error('error: warehouse credentials expired for ' + refs.join(','));
    process.exit(3);
  case 'slow':
    setTimeout(() => console.log(JSON.stringify({ configs: refs.map((r) => ({ outputs: [r] })) })), 8000);
    break;
}
`;

function mainGraph(): GraphDefinition {
  const node = process.execPath;
  return parseGraph(
    {
      jobs: [
        { label: 'a', outputs: ['a/(?<d>\\d+)'], exec: ['true'], args: ['--day', '${d}'], env: { DAY: '${d}' } },
        {
          label: 'b',
          outputs: ['b/(?<d>\\d+)'],
          inputs: [
            { partition_ref: 'a/${d}', dep_type: 'MATERIALIZE' },
            { partition_ref: 'calendar/${d}', dep_type: 'QUERY' }, // no job produces it: never followed
          ],
          exec: ['true'],
          args: ['${d}'],
        },
        { label: 'c', outputs: ['c/(?<d>\\d+)'], inputs: [{ partition_ref: 'b/${d}', dep_type: 'MATERIALIZE' }], exec: ['true'] },
        { label: 'pair', outputs: ['pair/(?:left|right)'], config: [node, 'config.mjs', 'pair'], exec: ['true'] },
        { label: 'broken', outputs: ['broken/\\d+'], config: [node, 'config.mjs', 'fail'], exec: ['true'] },
        { label: 'slow', outputs: ['slow/\\d+'], config: [node, 'config.mjs', 'slow'], exec: ['true'] },
        { label: 'dup1', outputs: ['dup/(?<n>\\d+)'], exec: ['true'] },
        { label: 'dup2', outputs: ['dup/\\d+'], exec: ['true'] },
      ],
    },
    'platform.json',
  );
}

function cycleGraph(): GraphDefinition {
  return parseGraph(
    {
      jobs: [
        { label: 'x', outputs: ['x/(?<n>\\d+)'], inputs: [{ partition_ref: 'y/${n}', dep_type: 'MATERIALIZE' }], exec: ['true'] },
        { label: 'y', outputs: ['y/(?<n>\\d+)'], inputs: [{ partition_ref: 'x/${n}', dep_type: 'MATERIALIZE' }], exec: ['true'] },
        { label: 'top', outputs: ['top'], inputs: [{ partition_ref: 'x/1', dep_type: 'MATERIALIZE' }], exec: ['true'] },
      ],
    },
    'platform.json',
  );
}

interface Running {
  server: RunningServer;
  dir: string;
  errors: string[];
}

async function start(graph: GraphDefinition): Promise<Running> {
  const dir = await mkdtemp(join(tmpdir(), 'platform-connect-'));
  await writeFile(join(dir, 'config.mjs'), CONFIG_PROGRAM);
  const platform = await Platform.open(dir, { graph, tickMs: 50 });
  const errors: string[] = [];
  const server = await startHttpServer(platform, { port: 0, log: () => {}, logError: (l) => errors.push(l) });
  return { server, dir, errors };
}

let main: Running;
let cyclic: Running;

test.before(async () => {
  [main, cyclic] = await Promise.all([start(mainGraph()), start(cycleGraph())]);
});

test.after.always(async () => {
  for (const r of [main, cyclic]) {
    if (r === undefined) continue;
    await r.server.close();
    await rm(r.dir, { recursive: true, force: true });
  }
});

// ---------------------------------------------------------------------------------------------
// Helpers

const SERVICE = 'platform.v1.PlatformService';

function post(
  base: Running,
  method: string,
  body: string | Uint8Array,
  contentType: string | undefined,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(`${base.server.url}/${SERVICE}/${method}`, {
    method: 'POST',
    headers: { ...(contentType !== undefined ? { 'Content-Type': contentType } : {}), ...headers },
    body,
  });
}

async function expectConnectError(
  t: ExecutionContext,
  res: Response,
  status: number,
  code: string,
  message?: RegExp,
): Promise<{ code: string; message: string }> {
  t.is(res.status, status);
  t.is(res.headers.get('content-type'), 'application/json');
  const body = (await res.json()) as { code: string; message: string };
  t.deepEqual(Object.keys(body).sort(), ['code', 'message']);
  t.is(body.code, code);
  if (message) t.regex(body.message, message);
  return body;
}

type PlatformClient = Client<typeof PlatformService>;

function client(r: Running, binary: boolean, extra: { gzip?: boolean } = {}): PlatformClient {
  return createClient(
    PlatformService,
    createConnectTransport({
      baseUrl: r.server.url,
      httpVersion: '1.1',
      useBinaryFormat: binary,
      ...(extra.gzip ? { sendCompression: compressionGzip, compressMinBytes: 0 } : {}),
    }),
  );
}

async function connectError(t: ExecutionContext, call: Promise<unknown>): Promise<ConnectError> {
  const err = await t.throwsAsync(call);
  t.true(err instanceof ConnectError, `expected a ConnectError, got ${String(err)}`);
  return ConnectError.from(err);
}

const FORMATS = [
  { name: 'JSON', binary: false },
  { name: 'binary', binary: true },
] as const;

// The expected configs, in the camelCase proto3 JSON the server writes (defaults of explicit-presence fields are set).
const CONFIG_A1 = { outputs: ['a/1'], args: ['--day', '1'], env: { DAY: '1' } };
const CONFIG_B1 = {
  outputs: ['b/1'],
  inputs: [
    { depType: 'MATERIALIZE', partitionRef: 'a/1' },
    { depType: 'QUERY', partitionRef: 'calendar/1' },
  ],
  args: ['1'],
};
const CONFIG_C1 = { outputs: ['c/1'], inputs: [{ depType: 'MATERIALIZE', partitionRef: 'b/1' }] };

// ---------------------------------------------------------------------------------------------
// Raw HTTP: JSON

test('raw JSON: GetJobConfigs answers canonical proto3 JSON, one config per distinct task', async (t) => {
  const res = await post(main, 'GetJobConfigs', JSON.stringify({ outputRefs: ['c/1', 'b/1', 'c/1'] }), 'application/json');
  t.is(res.status, 200);
  t.is(res.headers.get('content-type'), 'application/json');
  t.deepEqual(await res.json(), { configs: [CONFIG_C1, CONFIG_B1] });
});

test('raw JSON: snake_case field names and a charset parameter are accepted', async (t) => {
  const res = await post(main, 'GetJobConfigs', JSON.stringify({ output_refs: ['a/1'] }), 'application/json; charset=utf-8');
  t.is(res.status, 200);
  t.is(res.headers.get('content-type'), 'application/json');
  t.deepEqual(await res.json(), { configs: [CONFIG_A1] });
});

test('raw JSON: AnalyzeGraph returns the MATERIALIZE closure, inputs first', async (t) => {
  const res = await post(main, 'AnalyzeGraph', JSON.stringify({ outputRefs: ['c/1'] }), 'application/json');
  t.is(res.status, 200);
  t.deepEqual(await res.json(), {
    graph: {
      outputs: ['c/1'],
      nodes: [
        { jobLabel: 'a', config: CONFIG_A1 },
        { jobLabel: 'b', config: CONFIG_B1 },
        { jobLabel: 'c', config: CONFIG_C1 },
      ],
    },
  });
});

test('raw JSON: a gzip-compressed request body is accepted; other encodings are unimplemented', async (t) => {
  const body = gzipSync(JSON.stringify({ outputRefs: ['a/1'] }));
  const ok = await post(main, 'GetJobConfigs', body, 'application/json', { 'Content-Encoding': 'gzip' });
  t.is(ok.status, 200);
  t.deepEqual(await ok.json(), { configs: [CONFIG_A1] });

  const br = await post(main, 'GetJobConfigs', body, 'application/json', { 'Content-Encoding': 'br' });
  await expectConnectError(t, br, 501, 'unimplemented', /Content-Encoding "br"/);
  t.is(br.headers.get('accept-encoding'), 'gzip');
});

// ---------------------------------------------------------------------------------------------
// Raw HTTP: binary

test('raw binary: request encoded with protobufjs, response decoded with protobufjs', async (t) => {
  const { JobConfigRequest, JobConfigResponse, GraphAnalyzeRequest, GraphAnalyzeResponse } = canonicalSchema;
  const conversion = { enums: String, defaults: false, arrays: true };

  const res = await post(main, 'GetJobConfigs', JobConfigRequest.encode({ outputRefs: ['b/1'] }).finish(), 'application/proto');
  t.is(res.status, 200);
  t.is(res.headers.get('content-type'), 'application/proto');
  const configs = JobConfigResponse.toObject(JobConfigResponse.decode(new Uint8Array(await res.arrayBuffer())), conversion);
  t.deepEqual(configs, { configs: [CONFIG_B1] });

  const res2 = await post(main, 'AnalyzeGraph', GraphAnalyzeRequest.encode({ outputRefs: ['b/2'] }).finish(), 'application/proto');
  t.is(res2.status, 200);
  t.is(res2.headers.get('content-type'), 'application/proto');
  const graph = GraphAnalyzeResponse.toObject(GraphAnalyzeResponse.decode(new Uint8Array(await res2.arrayBuffer())), conversion);
  t.deepEqual(graph.graph.outputs, ['b/2']);
  t.deepEqual(
    graph.graph.nodes.map((n: { jobLabel: string; config: { outputs: string[] } }) => [n.jobLabel, n.config.outputs]),
    [
      ['a', ['a/2']],
      ['b', ['b/2']],
    ],
  );
  t.deepEqual(graph.graph.nodes[1].config.inputs, [
    { depType: 'MATERIALIZE', partitionRef: 'a/2' },
    { depType: 'QUERY', partitionRef: 'calendar/2' },
  ]);
});

test('raw binary: errors are still JSON Connect errors', async (t) => {
  const bytes = canonicalSchema.JobConfigRequest.encode({ outputRefs: ['nope/1'] }).finish();
  await expectConnectError(t, await post(main, 'GetJobConfigs', bytes, 'application/proto'), 400, 'invalid_argument', /"nope\/1"/);
  await expectConnectError(
    t,
    await post(main, 'GetJobConfigs', new Uint8Array([0x0a, 0x05, 0x61]), 'application/proto'),
    400,
    'invalid_argument',
    /not a valid binary JobConfigRequest/,
  );
});

// ---------------------------------------------------------------------------------------------
// Raw HTTP: protocol errors

test('raw: unsupported content type is 415 with Accept-Post and a Connect error body', async (t) => {
  const res = await post(main, 'GetJobConfigs', '{"outputRefs":["a/1"]}', 'text/plain');
  await expectConnectError(t, res, 415, 'unimplemented', /text\/plain/);
  t.is(res.headers.get('accept-post'), 'application/json, application/proto');
  await expectConnectError(t, await post(main, 'GetJobConfigs', 'x', undefined), 415, 'unimplemented');
  await expectConnectError(t, await post(main, 'AnalyzeGraph', '{}', 'application/connect+json'), 415, 'unimplemented');
  await expectConnectError(t, await post(main, 'AnalyzeGraph', '{}', 'application/json; charset=latin1'), 415, 'unimplemented');
});

test('raw: GET is 405 (Allow: POST) and an unknown method 404, both unimplemented', async (t) => {
  const get = await fetch(`${main.server.url}/${SERVICE}/GetJobConfigs`);
  await expectConnectError(t, get, 405, 'unimplemented', /POST/);
  t.is(get.headers.get('allow'), 'POST');
  const unknown = await post(main, 'DeleteEverything', '{}', 'application/json');
  await expectConnectError(t, unknown, 404, 'unimplemented', /no method "DeleteEverything".*GetJobConfigs, AnalyzeGraph/);
  // Method names are case-sensitive, as in every Connect server.
  await expectConnectError(t, await post(main, 'getJobConfigs', '{}', 'application/json'), 404, 'unimplemented');
});

test('raw: malformed bodies and empty output_refs are invalid_argument', async (t) => {
  const cases: Array<[string, RegExp]> = [
    ['{"outputRefs": [', /not valid JSON/],
    ['', /not valid JSON/],
    ['[]', /not a valid JobConfigRequest/],
    ['{"outputRefs": "a/1"}', /outputRefs/],
    ['{"outputRefs": [1]}', /outputRefs/],
    ['{"partitions": ["a/1"]}', /unknown field.*partitions/],
    ['{}', /output_refs is empty/],
    ['{"outputRefs": []}', /output_refs is empty/],
    ['{"outputRefs": ["a/1", ""]}', /output_refs\[1\] is empty/],
  ];
  for (const [body, message] of cases) {
    await expectConnectError(t, await post(main, 'GetJobConfigs', body, 'application/json'), 400, 'invalid_argument', message);
  }
  const notUtf8 = new Uint8Array([0x7b, 0xff, 0x7d]);
  await expectConnectError(t, await post(main, 'AnalyzeGraph', notUtf8, 'application/json'), 400, 'invalid_argument', /UTF-8/);
  await expectConnectError(t, await post(main, 'AnalyzeGraph', new Uint8Array(), 'application/proto'), 400, 'invalid_argument', /output_refs is empty/);
  await expectConnectError(
    t,
    await post(main, 'AnalyzeGraph', '{"outputRefs":["a/1"]}', 'application/json', { 'Connect-Protocol-Version': '2' }),
    400,
    'invalid_argument',
    /Connect-Protocol-Version/,
  );
});

test('raw: a body giving a key twice, or a field under both its names, is invalid_argument naming it; keys alike only in a string are fine', async (t) => {
  const cases: Array<[string, RegExp]> = [
    ['{"outputRefs": ["a/1"], "outputRefs": ["b/1"]}', /gives the key "outputRefs" twice in the top-level object/],
    // The same key spelled with an escape is the same key.
    ['{"outputRefs": ["a/1"], "output\\u0052efs": ["b/1"]}', /gives the key "outputRefs" twice/],
    ['{"outputRefs": ["a/1"], "output_refs": ["b/1"]}', /field outputRefs twice, as "outputRefs" and as "output_refs"/],
  ];
  for (const [body, message] of cases) {
    await expectConnectError(t, await post(main, 'GetJobConfigs', body, 'application/json'), 400, 'invalid_argument', message);
  }
  // Colons and quoted keys inside strings are no keys.
  const res = await post(main, 'GetJobConfigs', '{"outputRefs": ["nope/\\"outputRefs\\": 1"]}', 'application/json');
  t.notRegex(await res.text(), /twice/);
});

test('raw: a body over 1 MiB is resource_exhausted, with or without Content-Length', async (t) => {
  const big = JSON.stringify({ outputRefs: ['x'.repeat(1024 * 1024)] });
  await expectConnectError(t, await post(main, 'GetJobConfigs', big, 'application/json'), 429, 'resource_exhausted', /1048576 bytes; send fewer refs per request/);
  // Under the byte limit but over the count: how many, the limit, and what to do.
  const many = JSON.stringify({ outputRefs: Array.from({ length: 10_001 }, (_, i) => `a/${i}`) });
  await expectConnectError(t, await post(main, 'GetJobConfigs', many, 'application/json'), 400, 'invalid_argument', /10001 refs; the limit is 10000 per request: split them/);

  const chunks = [Buffer.from('{"outputRefs":["'), Buffer.alloc(1024 * 1024, 'y'), Buffer.from('"]}')];
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      const next = chunks.shift();
      if (next === undefined) controller.close();
      else controller.enqueue(next);
    },
  });
  const res = await fetch(`${main.server.url}/${SERVICE}/GetJobConfigs`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: stream,
    duplex: 'half',
  } as RequestInit);
  await expectConnectError(t, res, 429, 'resource_exhausted');

  // A small body that inflates past the limit.
  const bomb = gzipSync(Buffer.concat([Buffer.from('{"outputRefs":["'), Buffer.alloc(2 * 1024 * 1024, 'z'), Buffer.from('"]}')]));
  t.true(bomb.length < 64 * 1024);
  await expectConnectError(
    t,
    await post(main, 'GetJobConfigs', bomb, 'application/json', { 'Content-Encoding': 'gzip' }),
    429,
    'resource_exhausted',
    /decompressed/,
  );
  // The server still answers on new connections.
  t.is((await post(main, 'GetJobConfigs', '{"outputRefs":["a/1"]}', 'application/json')).status, 200);
});

test('raw: Connect-Timeout-Ms is honoured (deadline_exceeded) and validated', async (t) => {
  const started = Date.now();
  await expectConnectError(
    t,
    await post(main, 'GetJobConfigs', '{"outputRefs":["slow/1"]}', 'application/json', { 'Connect-Timeout-Ms': '150' }),
    504,
    'deadline_exceeded',
    /150 ms/,
  );
  // The program takes 8 s: an answer well before that came from the deadline (the margin absorbs a loaded machine).
  t.true(Date.now() - started < 5000, 'answered at the deadline, not when the config program finished');
  await expectConnectError(
    t,
    await post(main, 'GetJobConfigs', '{"outputRefs":["a/1"]}', 'application/json', { 'Connect-Timeout-Ms': 'soon' }),
    400,
    'invalid_argument',
    /Connect-Timeout-Ms/,
  );
  // The protocol's timeout is positive: 0 was taken as none.
  await expectConnectError(
    t,
    await post(main, 'GetJobConfigs', '{"outputRefs":["a/1"]}', 'application/json', { 'Connect-Timeout-Ms': '0' }),
    400,
    'invalid_argument',
    /Connect-Timeout-Ms must be a positive whole number .* got "0"/,
  );
  const ok = await post(main, 'GetJobConfigs', '{"outputRefs":["a/1"]}', 'application/json', { 'Connect-Timeout-Ms': '10000' });
  t.is(ok.status, 200);
});

test('raw: the JSON API next to the binding is unaffected', async (t) => {
  const res = await fetch(`${main.server.url}/api/nothing-here`);
  t.is(res.status, 404);
  t.truthy(((await res.json()) as { error?: string }).error);
  t.is(await (await fetch(`${main.server.url}/health`)).text(), 'OK');
});

// ---------------------------------------------------------------------------------------------
// Stock Connect client, JSON and binary

for (const { name, binary } of FORMATS) {
  test(`connect client (${name}): GetJobConfigs`, async (t) => {
    const c = client(main, binary);
    const res = await c.getJobConfigs({ outputRefs: ['b/3', 'a/3', 'b/3'] });
    t.is(res.configs.length, 2);
    const [b, a] = res.configs;
    t.deepEqual(b!.outputs, ['b/3']);
    t.deepEqual(
      b!.inputs.map((d) => [d.depType, d.partitionRef]),
      [
        [DepType.MATERIALIZE, 'a/3'],
        [DepType.QUERY, 'calendar/3'],
      ],
    );
    t.deepEqual(b!.args, ['3']);
    t.deepEqual(a!.outputs, ['a/3']);
    t.deepEqual(a!.args, ['--day', '3']);
    t.deepEqual(a!.env, { DAY: '3' });
    t.deepEqual(a!.inputs, []);
  });

  test(`connect client (${name}): GetJobConfigs lists a multi-output task once`, async (t) => {
    const res = await client(main, binary).getJobConfigs({ outputRefs: ['pair/left', 'a/1', 'pair/right'] });
    t.deepEqual(
      res.configs.map((c) => c.outputs),
      [['pair/left', 'pair/right'], ['a/1']],
    );
    t.deepEqual(res.configs[0]!.args, ['--both']);
    t.deepEqual(
      res.configs[0]!.inputs.map((d) => [d.depType, d.partitionRef]),
      [[DepType.MATERIALIZE, 'c/7']],
    );
  });

  test(`connect client (${name}): AnalyzeGraph`, async (t) => {
    const res = await client(main, binary).analyzeGraph({ outputRefs: ['pair/right', 'c/7', 'b/7'] });
    const graph = res.graph!;
    t.deepEqual(graph.outputs, ['pair/right', 'c/7', 'b/7']);
    t.deepEqual(
      graph.nodes.map((n) => [n.jobLabel, n.config!.outputs.join(',')]),
      [
        ['a', 'a/7'],
        ['b', 'b/7'],
        ['c', 'c/7'],
        ['pair', 'pair/left,pair/right'],
      ],
    );
    const b = graph.nodes[1]!.config!;
    t.deepEqual(
      b.inputs.map((d) => [d.depType, d.partitionRef]),
      [
        [DepType.MATERIALIZE, 'a/7'],
        [DepType.QUERY, 'calendar/7'],
      ],
    );
    t.deepEqual(graph.nodes[0]!.config!.env, { DAY: '7' });
  });

  test(`connect client (${name}): unknown and ambiguous refs are InvalidArgument naming the ref`, async (t) => {
    const c = client(main, binary);
    const unknown = await connectError(t, c.getJobConfigs({ outputRefs: ['a/1', 'nope/1'] }));
    t.is(unknown.code, Code.InvalidArgument);
    t.regex(unknown.rawMessage, /No job produces ref "nope\/1"/);
    const viaAnalyze = await connectError(t, c.analyzeGraph({ outputRefs: ['nope/2'] }));
    t.is(viaAnalyze.code, Code.InvalidArgument);
    t.regex(viaAnalyze.rawMessage, /"nope\/2"/);
    const ambiguous = await connectError(t, c.analyzeGraph({ outputRefs: ['dup/1'] }));
    t.is(ambiguous.code, Code.InvalidArgument);
    t.regex(ambiguous.rawMessage, /"dup\/1".*"dup1".*"dup2"/);
    const empty = await connectError(t, c.analyzeGraph({ outputRefs: [] }));
    t.is(empty.code, Code.InvalidArgument);
    t.regex(empty.rawMessage, /output_refs is empty/);
  });

  test(`connect client (${name}): a cycle is InvalidArgument naming the cycle`, async (t) => {
    const c = client(cyclic, binary);
    const err = await connectError(t, c.analyzeGraph({ outputRefs: ['top'] }));
    t.is(err.code, Code.InvalidArgument);
    t.regex(err.rawMessage, /Dependency cycle: x\/1 -> y\/1 -> x\/1 \(jobs x -> y -> x\)/);
    // GetJobConfigs does not follow inputs, so the cycle does not concern it.
    const res = await c.getJobConfigs({ outputRefs: ['x/1'] });
    t.deepEqual(
      res.configs.map((cfg) => cfg.inputs.map((d) => [d.depType, d.partitionRef])),
      [[[DepType.MATERIALIZE, 'y/1']]],
    );
  });

  test(`connect client (${name}): a failing config program is FailedPrecondition with its stderr`, async (t) => {
    const err = await connectError(t, client(main, binary).getJobConfigs({ outputRefs: ['broken/1'] }));
    t.is(err.code, Code.FailedPrecondition);
    t.regex(err.rawMessage, /broken/);
    t.regex(err.rawMessage, /warehouse credentials expired for broken\/1/);
    t.deepEqual(main.errors, [], 'a graph error is the caller\'s answer, not a logged server fault');
  });

  test(`connect client (${name}): gzip-compressed requests`, async (t) => {
    const res = await client(main, binary, { gzip: true }).analyzeGraph({ outputRefs: ['c/9'] });
    t.deepEqual(
      res.graph!.nodes.map((n) => n.jobLabel),
      ['a', 'b', 'c'],
    );
  });
}

// A daemon that requires its token refuses before any method runs: a Connect client must still get the reason, not a
// bare `[unauthenticated]` (it reads only a `{"code", "message"}` body).
test('connect client: the token, Host and Origin guards refuse with a Connect error carrying their message', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'platform-connect-token-'));
  const platform = await Platform.open(dir, { graph: mainGraph(), tickMs: 50 });
  const server = await startHttpServer(platform, { port: 0, token: 'sesame', log: () => {}, logError: () => {} });
  t.teardown(async () => {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });
  const withHeaders = (headers: Record<string, string>, binary: boolean) =>
    createClient(
      PlatformService,
      createConnectTransport({
        baseUrl: server.url,
        httpVersion: '1.1',
        useBinaryFormat: binary,
        interceptors: [
          (next) => (req) => {
            for (const [k, v] of Object.entries(headers)) req.header.set(k, v);
            return next(req);
          },
        ],
      }),
    );
  for (const { binary } of FORMATS) {
    const noToken = await connectError(t, withHeaders({}, binary).getJobConfigs({ outputRefs: ['a/1'] }));
    t.is(noToken.code, Code.Unauthenticated);
    t.regex(noToken.rawMessage, /requires its token.*Authorization: Bearer/);
    const wrongOrigin = await connectError(t, withHeaders({ Authorization: 'Bearer sesame', Origin: 'http://evil.example' }, binary).analyzeGraph({ outputRefs: ['a/1'] }));
    t.is(wrongOrigin.code, Code.PermissionDenied);
    t.regex(wrongOrigin.rawMessage, /origin "http:\/\/evil.example" is refused/);
    const wrongHost = await connectError(t, withHeaders({ Authorization: 'Bearer sesame', Host: 'rebound.example' }, binary).getJobConfigs({ outputRefs: ['a/1'] }));
    t.is(wrongHost.code, Code.PermissionDenied);
    t.regex(wrongHost.rawMessage, /Host 'rebound.example' is not a loopback name/);
    const ok = await withHeaders({ Authorization: 'Bearer sesame' }, binary).getJobConfigs({ outputRefs: ['a/1'] });
    t.deepEqual(ok.configs[0]!.outputs, ['a/1']);
  }
  const res = await fetch(`${server.url}/${SERVICE}/GetJobConfigs`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"outputRefs":["a/1"]}' });
  await expectConnectError(t, res, 401, 'unauthenticated', /requires its token/);
  // The JSON API next to it keeps its own error body.
  const api = await fetch(`${server.url}/api/wants`);
  t.is(api.status, 401);
  t.regex(((await api.json()) as { error: string }).error, /requires its token/);
});

test('raw: a body nesting arrays 100,000 deep is invalid_argument saying so, not a stack overflow message', async (t) => {
  const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
  for (const body of [deep, `{"outputRefs": ${deep}}`, `{"outputRefs": ["a/1"], "extra": ${deep}}`]) {
    const res = await post(main, 'GetJobConfigs', body, 'application/json');
    const err = await expectConnectError(t, res, 400, 'invalid_argument');
    t.notRegex(err.message, /call stack/);
    t.regex(err.message, /too deeply|unknown field|expected/);
  }
});
