/**
 * The PlatformService RPCs are bounded and share the event loop (docs/decisions.md, "RPC answers are bounded"):
 * a graph over the budget is refused with resource_exhausted saying how to ask for less, a large answer lets other
 * requests through while it is worked out, and the work stops when the deadline passes or the client goes. A real
 * server on 127.0.0.1 (port 0), the stock Connect client and raw fetch. No timed assertions: orderings only.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Code, ConnectError, createClient } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import test from 'ava';
import type { AnalyzedGraph, AnalyzeOptions, JobResolver } from '../lib/graph/job-resolver.js';
import { parseGraph } from '../lib/graph/parse-graph.js';
import { Platform } from '../lib/platform.js';
import { startHttpServer, type RunningServer } from '../lib/server/http-server.js';
import { PlatformService } from './gen/platform/v1/platform_pb.js';

const SERVICE = 'platform.v1.PlatformService';

/** A declarative job `<name>/<d>` whose input template lists `fanIn` leaves `leaf/<d>-<i>`, all MATERIALIZE. */
function fanInJob(name: string, fanIn: number) {
  return {
    label: name,
    outputs: [`${name}/(?<d>\\d+)`],
    inputs: Array.from({ length: fanIn }, (_, i) => ({ partition_ref: `leaf/\${d}-${i}`, dep_type: 'MATERIALIZE' })),
    exec: ['true'],
  };
}

// wide: one ref is 30,001 partitions and 30,000 inputs, over the partition budget (RPC_GRAPH_BUDGET: 20,000) but
// under the input budget (50,000). mid: three refs are 18,003 partitions and 18,000 inputs, within both: a large answer.
const WIDE = 30_000;
const MID = 6_000;

let server: RunningServer;
let dir: string;
let resolver: JobResolver;

test.before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'platform-connect-bounds-'));
  const graph = parseGraph(
    { jobs: [fanInJob('wide', WIDE), fanInJob('mid', MID), { label: 'leaf', outputs: ['leaf/(?<x>[\\d-]+)'], exec: ['true'] }] },
    'platform.json',
  );
  const platform = await Platform.open(dir, { graph, tickMs: 50 });
  resolver = platform.resolver;
  server = await startHttpServer(platform, { port: 0, log: () => {}, logError: () => {} });
});

test.after.always(async () => {
  await server?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

function client(binary: boolean) {
  return createClient(PlatformService, createConnectTransport({ baseUrl: server.url, httpVersion: '1.1', useBinaryFormat: binary }));
}

function post(method: string, refs: string[], init: { headers?: Record<string, string>; signal?: AbortSignal } = {}): Promise<Response> {
  return fetch(`${server.url}/${SERVICE}/${method}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...init.headers },
    body: JSON.stringify({ outputRefs: refs }),
    ...(init.signal ? { signal: init.signal } : {}),
  });
}

const mids = (first: number): string[] => [first, first + 1, first + 2].map((d) => `mid/${d}`);

/**
 * Runs `around` in place of the next `resolver.analyze` call (one only); `around` gets the real analyze, already
 * bound to the call's refs and options. Resolves to what that analyze settled with.
 */
function interceptNextAnalyze(around: (analyze: () => Promise<AnalyzedGraph>) => Promise<AnalyzedGraph>): Promise<PromiseSettledResult<AnalyzedGraph>> {
  const original = resolver.analyze;
  return new Promise((settled) => {
    resolver.analyze = (refs: readonly string[], options?: AnalyzeOptions) => {
      resolver.analyze = original;
      const work = around(() => original.call(resolver, refs, options));
      void Promise.allSettled([work]).then(([result]) => settled(result!));
      return work;
    };
  });
}

for (const binary of [false, true]) {
  test.serial(`AnalyzeGraph of a graph over the partition budget is resource_exhausted, saying how to ask for less (${binary ? 'binary' : 'JSON'})`, async (t) => {
    const one = await t.throwsAsync(client(binary).analyzeGraph({ outputRefs: ['wide/1'] }));
    const err1 = ConnectError.from(one);
    t.is(err1.code, Code.ResourceExhausted);
    t.regex(err1.rawMessage, /^AnalyzeGraph stopped: the graph of the ref asked for has more than 20,000 partitions/);
    t.regex(err1.rawMessage, /GetJobConfigs gives the ref's own config and inputs, then AnalyzeGraph of those inputs/);

    const many = ConnectError.from(await t.throwsAsync(client(binary).analyzeGraph({ outputRefs: ['mid/1', 'wide/2'] })));
    t.is(many.code, Code.ResourceExhausted);
    t.regex(many.rawMessage, /these 2 refs has more than 20,000 partitions.*Ask for fewer refs per request/);
  });
}

test.serial('GetJobConfigs answers a config of 30,000 inputs, and refuses two (60,000: over the input budget)', async (t) => {
  const c = client(false);
  const one = await c.getJobConfigs({ outputRefs: ['wide/3'] });
  t.is(one.configs.length, 1);
  t.is(one.configs[0]!.inputs.length, WIDE);

  const err = ConnectError.from(await t.throwsAsync(c.getJobConfigs({ outputRefs: ['wide/3', 'wide/4'] })));
  t.is(err.code, Code.ResourceExhausted);
  t.regex(err.rawMessage, /^GetJobConfigs stopped: the configs for these 2 refs list more than 50,000 inputs \(the limit per request; the config of "wide\/3", job "wide", lists 30,000\)\. Ask for fewer refs per request/);

  const raw = await post('GetJobConfigs', ['wide/3', 'wide/4']);
  t.is(raw.status, 429);
  t.is(((await raw.json()) as { code: string }).code, 'resource_exhausted');
});

test.serial('AnalyzeGraph within the budget answers the whole graph, inputs first', async (t) => {
  const reply = await client(true).analyzeGraph({ outputRefs: mids(10) });
  const nodes = reply.graph!.nodes;
  t.is(nodes.length, 3 + 3 * MID);
  t.deepEqual(nodes.slice(MID, MID + 1).map((n) => n.jobLabel), ['mid']);
  t.deepEqual(nodes.filter((n) => n.jobLabel === 'mid').length, 3);
  t.is(nodes[0]!.config!.outputs[0], 'leaf/10-0');
});

test.serial('GET /health sent while a large AnalyzeGraph is worked out is answered before it', async (t) => {
  const order: string[] = [];
  let health: Promise<void> | undefined;
  const analyzed = interceptNextAnalyze((analyze) => {
    // The RPC has its request and starts on the graph: only now is /health asked.
    health = fetch(`${server.url}/health`).then(async (res) => {
      t.is(await res.text(), 'OK');
      order.push('health');
    });
    return analyze();
  });
  const rpc = post('AnalyzeGraph', mids(20)).then((res) => {
    order.push('rpc');
    t.is(res.status, 200);
    return res.arrayBuffer();
  });
  await rpc;
  t.is((await analyzed).status, 'fulfilled');
  await health;
  t.deepEqual(order, ['health', 'rpc']);
});

test.serial('Connect-Timeout-Ms stops the work: the analysis still under way when the deadline reply is sent ends then', async (t) => {
  let deadlineReplied!: () => void;
  const replied = new Promise<void>((resolve) => (deadlineReplied = resolve));
  // The analysis starts only once the client has the deadline's reply: whatever it does after that is for no one.
  const analyzed = interceptNextAnalyze(async (analyze) => {
    await replied;
    return analyze();
  });
  const res = await post('AnalyzeGraph', mids(30), { headers: { 'Connect-Timeout-Ms': '500' } });
  t.is(res.status, 504);
  t.is(((await res.json()) as { code: string }).code, 'deadline_exceeded');
  deadlineReplied();
  const result = await analyzed;
  t.is(result.status, 'rejected', 'the analysis went on to the end after its deadline');
  if (result.status === 'rejected') t.regex(String(result.reason), /within the 500 ms of Connect-Timeout-Ms/);
});

test.serial('a client that disconnects stops the work', async (t) => {
  const abort = new AbortController();
  const analyzed = interceptNextAnalyze((analyze) => {
    abort.abort(); // the client goes away as the server starts on the graph
    return analyze();
  });
  t.is(await post('AnalyzeGraph', mids(40), { signal: abort.signal }).then(() => 'answered', () => 'aborted'), 'aborted');
  const result = await analyzed;
  t.is(result.status, 'rejected', 'the analysis went on to the end for a client that had gone');
  if (result.status === 'rejected') t.regex(String(result.reason), /disconnected/);
  // The server still answers.
  t.is((await fetch(`${server.url}/health`)).status, 200);
});
