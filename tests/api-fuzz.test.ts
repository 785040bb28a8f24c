/**
 * Every operation of the OpenAPI document, fuzzed from its own schemas (fast-check, fixed seed, bounded runs):
 * path ids that exist and that do not, query parameters that fit and that do not, bodies that fit and that break
 * them, against the real server on a real log with real (instant) job processes. Every answer must fit the
 * contract (helpers/contract.ts), none may be a 5xx, the daemon must still answer /health, and at the end the event
 * log must still decode end to end, as many events as the API said it holds.
 */
import test from 'ava';
import fc from 'fast-check';
import { Platform, parseGraph } from '../lib/index.js';
import { checkedResponse, CONTRACT_DOCUMENT } from './helpers/contract.js';
import { schemaArbitraries, type Json } from './helpers/schema-arbitrary.js';
import { createWant, startServer, waitForWant } from './helpers/server-fixture.js';

/** Jobs that end at once (but one, never fuzzed: refs of it are not among the hints), so fuzzed wants never keep runs waiting. */
const FAST_GRAPH = {
  max_concurrent_job_runs: 8,
  jobs: [
    { label: 'ok', outputs: ['ok/(?<name>[a-z0-9_-]+)'], exec: ['true'] },
    { label: 'dep', outputs: ['dep/(?<name>[a-z0-9_-]+)'], inputs: [{ partition_ref: 'ok/${name}', dep_type: 'MATERIALIZE' }], exec: ['true'] },
    { label: 'fail', outputs: ['fail/(?<name>[a-z0-9_-]+)'], exec: ['false'] },
    // One want that stays running, so a cancel has something to cancel; killed at the end.
    { label: 'slow', outputs: ['slow/(?<name>[a-z0-9_-]+)'], exec: ['sleep', '30'] },
  ],
  // Never ticks during the run: a schedule to pause, resume and read.
  schedules: [{ name: 'yearly', cron: '0 0 1 1 *', partitions: ['ok/y${year}'] }],
};

const SEED = 20260114;
const RUNS = 40;

interface Operation {
  parameters?: Array<{ name: string; in: 'path' | 'query' | 'header'; schema: Json }>;
  requestBody?: { content: Record<string, { schema?: Json }> };
}

interface Request {
  path: string;
  body?: string;
  contentType?: string;
}

test('every operation, fuzzed from the document: answers fit the contract, no 5xx, the daemon stays up, the log still decodes', async (t) => {
  t.timeout(120_000);
  const f = await startServer(t, { graph: FAST_GRAPH, platform: { tickMs: 20 } });

  // Something of everything to find: wants (one failed), runs, builds, a taint, a backfill.
  const done = await waitForWant(f, await createWant(f, ['dep/a', 'ok/b']));
  t.is(done.status, 'successful');
  await waitForWant(f, await createWant(f, ['fail/c']));
  await waitForWant(f, await createWant(f, ['slow/s']), ['building']);
  const taint = await f.api('/api/taints', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"partitions": ["ok/b"]}' });
  t.is(taint.status, 201);
  const backfill = await f.api('/api/backfills', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"pattern": "ok/n{1..3}"}' });
  t.is(backfill.status, 201);

  const state = f.platform.state();
  const pools: Record<string, string[]> = {
    '/api/wants/{id}': [...state.wants.keys()],
    '/api/partitions/{ref}': [...state.partitions.keys()],
    '/api/partitions/{ref}/lineage': [...state.partitions.keys()],
    '/api/taints/{id}': [...state.taints.keys()],
    '/api/backfills/{id}': [...state.wants.values()].map((w) => w.backfill_id).filter((id) => id !== ''),
    '/api/job_runs/{id}': [...state.job_runs.keys()],
    '/api/job_runs/{id}/logs/{stream}': [...state.job_runs.keys()],
    '/api/schedules/{name}': ['yearly'],
    '/api/schedules/{name}/pause': ['yearly'],
    '/api/schedules/{name}/resume': ['yearly'],
    '/api/events/{id}': Array.from({ length: f.platform.log.latestId() }, (_, i) => String(i + 1)),
  };
  const refs = ['ok/a', 'ok/b', 'ok/fuzz', 'dep/a', 'dep/fuzz', 'fail/c', 'nothing/makes/this'];
  const arbs = schemaArbitraries((CONTRACT_DOCUMENT.components as { schemas: Record<string, Json> }).schemas, {
    refs,
    properties: { pattern: ['ok/n{1..3}', 'ok/{x,y}', 'dep/d{01..02}', 'ok/{', 'fail/{1..2}'] },
  });

  const paths = CONTRACT_DOCUMENT.paths as unknown as Record<string, Record<string, Operation>>;
  let requests = 0;
  /** `POST /api/wants 201` -> how many: what the fuzz reached, shown in the log and checked below. */
  const tally = new Map<string, number>();
  for (const [template, item] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(item)) {
      // The dashboard's page is a file read; /login's codes are one-time links a fuzzer cannot have.
      if (template === '/') continue;
      const parameters = op.parameters ?? [];
      const pathArb = parameters
        .filter((p) => p.in === 'path')
        .reduce<fc.Arbitrary<string>>(
          (acc, p) =>
            acc.chain((path) =>
              fc
                .oneof(
                  { arbitrary: fc.constantFrom(...((p.name === 'stream' ? ['stdout', 'stderr'] : pools[template]) ?? ['x'])), weight: 4 },
                  { arbitrary: arbs.fitting(p.schema).map(String), weight: 1 },
                  { arbitrary: fc.string({ maxLength: 12 }), weight: 1 },
                )
                .map((v) => path.replace(`{${p.name}}`, encodeURIComponent(v === '' ? 'empty' : v))),
            ),
          fc.constant(template),
        );
      const queryArb = fc
        .tuple(
          ...parameters
            .filter((p) => p.in === 'query')
            .map((p) =>
              fc.option(
                fc
                  .oneof(
                    { arbitrary: arbs.fitting(p.schema).map(String), weight: 6 },
                    { arbitrary: fc.string({ maxLength: 8 }), weight: 1 },
                    { arbitrary: fc.integer().map(String), weight: 1 },
                  )
                  .map((v) => `${p.name}=${encodeURIComponent(v)}`),
                { nil: undefined, freq: 2 },
              ),
            ),
        )
        .map((pairs) => pairs.filter((x) => x !== undefined).join('&'));
      const bodySchema = op.requestBody?.content['application/json']?.schema;
      const bodyArb: fc.Arbitrary<Json | undefined> = bodySchema
        ? fc.oneof({ arbitrary: arbs.fitting(bodySchema), weight: 2 }, { arbitrary: arbs.breaking(bodySchema), weight: 1 }, fc.constant(undefined))
        : fc.constant(undefined);
      const requestArb: fc.Arbitrary<Request> = fc.tuple(pathArb, queryArb, bodyArb).map(([path, query, body]) => ({
        path: query ? `${path}?${query}` : path,
        ...(body !== undefined ? { body: JSON.stringify(body), contentType: 'application/json' } : {}),
      }));

      await fc.assert(
        fc.asyncProperty(requestArb, async (req) => {
          requests++;
          const controller = new AbortController();
          const raw = await fetch(`${f.url}${req.path}`, {
            method: method.toUpperCase(),
            redirect: 'manual',
            signal: controller.signal,
            ...(req.body !== undefined ? { body: req.body, headers: { 'content-type': req.contentType! } } : {}),
          });
          try {
            const res = await checkedResponse(method, req.path, raw);
            const key = `${method.toUpperCase()} ${template} ${res.status}`;
            tally.set(key, (tally.get(key) ?? 0) + 1);
            if (res.status >= 500) throw new Error(`${method.toUpperCase()} ${req.path} ${req.body ?? ''} -> ${res.status}: ${await res.text()}`);
            // A stream is left once it answered; anything else is read to its end.
            if ((res.headers.get('content-type') ?? '').startsWith('text/event-stream')) controller.abort();
            else await res.arrayBuffer();
          } finally {
            controller.abort();
          }
        }),
        { seed: SEED, numRuns: RUNS, endOnFailure: true },
      );
      const health = await f.api('/health');
      t.is(health.status, 200, `after ${method.toUpperCase()} ${template}`);
    }
  }
  t.true(requests >= RUNS * 28, `${requests} requests`);
  t.log([...tally].map(([k, n]) => `${k}: ${n}`).join('\n'));
  // The fitting bodies did get through: fuzzed wants, taints and backfills were made, and existing ids were found.
  for (const reached of ['POST /api/wants 201', 'POST /api/wants 400', 'POST /api/taints 201', 'POST /api/backfills 201', 'GET /api/wants/{id} 200', 'GET /api/wants/{id} 404', 'DELETE /api/wants/{id} 200', 'GET /api/job_runs/{id}/logs/{stream} 200', 'POST /platform.v1.PlatformService/AnalyzeGraph 200', 'POST /api/schedules/{name}/pause 200', 'POST /api/schedules/{name}/pause 400', 'POST /api/schedules/{name}/pause 404', 'POST /api/schedules/{name}/resume 200']) {
    t.true((tally.get(reached) ?? 0) > 0, `the fuzz never reached ${reached}`);
  }
  t.deepEqual(
    f.errorLines.filter((l) => /failed:|Internal/.test(l)),
    [],
    'no request was an internal fault',
  );

  // The log decodes end to end: as many events, dense from 1, as GET /api/events said, and it folds again.
  const latest = ((await f.getJson('/api/events?limit=1')) as { latest_id: number }).latest_id;
  const wantsTotal = ((await f.getJson('/api/wants?limit=1')) as { total: number }).total;
  t.true(latest > 10);
  await f.close();
  const reopened = await Platform.open(f.dir, { graph: parseGraph(FAST_GRAPH, 'test'), cancelRunsOnClose: true });
  t.teardown(() => reopened.close());
  t.is(reopened.log.latestId(), latest);
  let seen = 0;
  for (let offset = 0; ; offset += 10_000) {
    const page = await reopened.log.list(offset, 10_000);
    if (page.length === 0) break;
    for (const e of page) t.is(e.event_id, ++seen);
  }
  t.is(seen, latest);
  t.is(reopened.state().wants.size, wantsTotal, 'the log folds into as many wants as the API listed');
});
