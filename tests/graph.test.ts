import test from 'ava';
import fc from 'fast-check';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { GraphDefinition } from '../lib/graph/graph-definition.js';
import { GraphError } from '../lib/graph/graph-error.js';
import { JobConfigResponseError, parseJobConfigResponse } from '../lib/graph/job-config-response.js';
import { JobMatcher, matchJob } from '../lib/graph/job-matcher.js';
import { JobResolver } from '../lib/graph/job-resolver.js';
import { loadGraph, parseGraphText } from '../lib/graph/load-graph.js';
import { jsonErrorOffset } from '../lib/graph/json-error-offset.js';
import { parseGraph } from '../lib/graph/parse-graph.js';
import { compileTemplate, fillCompiledTemplate, fillTemplate, templateVariables } from '../lib/graph/template.js';

// ---------------------------------------------------------------------------------------------
// helpers

async function tempDir(t: { teardown(fn: () => Promise<void>): void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'platform-graph-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

function parseError(json: unknown): GraphError {
  try {
    parseGraph(json, 'platform.json');
  } catch (err) {
    if (err instanceof GraphError) return err;
    throw err;
  }
  throw new Error('expected parseGraph to throw');
}

const job = (extra: Record<string, unknown>) => ({ label: 'j', outputs: ['j/(?<d>\\d+)'], exec: ['true'], ...extra });

/**
 * A config program: records each spawn (its refs, as a JSON line) in spawns.log beside itself, then behaves as
 * `mode` says. `weekly/revenue/week=N` needs daily/revenue/date=N-1..N-3 (MATERIALIZE) and calendar/holidays (QUERY,
 * produced by no job).
 */
const CONFIG_PROGRAM = `
import { appendFileSync } from 'node:fs';
const [mode, ...refs] = process.argv.slice(2);
appendFileSync(new URL('./spawns.log', import.meta.url), JSON.stringify(refs) + '\\n');
const week = (ref) => Number(ref.split('=')[1]);
const camel = (ref) => ({
  outputs: [ref],
  inputs: [
    ...[1, 2, 3].map((i) => ({ partitionRef: 'daily/revenue/date=' + (week(ref) * 10 + i), depType: i === 1 ? 1 : 'MATERIALIZE' })),
    { partitionRef: 'calendar/holidays' },
  ],
  args: ['--week', String(week(ref))],
  env: { WEEK: String(week(ref)) },
});
const snake = (ref) => ({ outputs: [ref], inputs: [{ partition_ref: 'calendar/holidays', dep_type: 'QUERY' }] });
switch (mode) {
  case 'camel':
    await new Promise((r) => setTimeout(r, 100)); // long enough for concurrent callers to overlap
    console.log(JSON.stringify({ configs: refs.map(camel) }));
    break;
  case 'snake':
    console.log(JSON.stringify({ configs: refs.map(snake) }));
    break;
  case 'multi': // one config producing every requested ref
    console.log(JSON.stringify({ configs: [{ outputs: refs, args: ['all'] }] }));
    break;
  case 'fail':
    console.error('connecting to warehouse...');
    console.error('error: warehouse credentials expired for ' + refs.join(','));
    process.exit(3);
  case 'badjson':
    console.log('configs: none');
    console.error('printed yaml by mistake');
    break;
  case 'missing':
    console.log(JSON.stringify({ configs: refs.slice(1).map(snake) }));
    break;
  case 'wide': // a variable over what one may be (128 KiB)
    console.log(JSON.stringify({ configs: refs.map((ref) => ({ outputs: [ref], env: { BIG: 'x'.repeat(200 * 1024) } })) }));
    break;
  case 'many': // 300,000 variables of 25 bytes: each fine, together over what a program can be started with (6 MiB)
    console.log(JSON.stringify({ configs: refs.map((ref) => ({ outputs: [ref], env: Object.fromEntries(Array.from({ length: 300000 }, (_, i) => ['V' + i, 'y'.repeat(16)])) })) }));
    break;
  case 'fits': // 12 variables of 100 KiB: 1.2 MiB, under both limits with a default stack (8 MiB: 2 MiB)
    console.log(JSON.stringify({ configs: refs.map((ref) => ({ outputs: [ref], env: Object.fromEntries(Array.from({ length: 12 }, (_, i) => ['V' + i, 'z'.repeat(100 * 1024)])) })) }));
    break;
  case 'slow':
    console.error('thinking very hard');
    setTimeout(() => {}, 60_000);
    break;
}
`;

async function configWorkspace(t: { teardown(fn: () => Promise<void>): void }, mode: string): Promise<{ root: string; graph: GraphDefinition; spawns(): Promise<string[][]> }> {
  const root = await tempDir(t);
  await writeFile(join(root, 'config.mjs'), CONFIG_PROGRAM);
  await writeFile(join(root, 'spawns.log'), '');
  const graph = parseGraph(
    {
      jobs: [
        { label: 'raw', outputs: ['raw/orders/date=(?<date>\\d+)'], exec: ['true'] },
        {
          label: 'daily',
          outputs: ['daily/revenue/date=(?<date>\\d+)'],
          inputs: [{ partition_ref: 'raw/orders/date=${date}', dep_type: 'MATERIALIZE' }],
          exec: ['true'],
          args: ['${date}'],
        },
        {
          label: 'weekly',
          outputs: ['weekly/revenue/week=(?<week>\\d+)'],
          config: [process.execPath, 'config.mjs', mode],
          exec: ['true'],
        },
      ],
    },
    'platform.json',
  );
  const spawns = async () =>
    (await readFile(join(root, 'spawns.log'), 'utf8'))
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as string[]);
  return { root, graph, spawns };
}

// ---------------------------------------------------------------------------------------------
// parseGraph

test('parse: the DESIGN example parses with defaults filled', (t) => {
  const g = parseGraph(
    {
      max_concurrent_job_runs: 4,
      jobs: [
        { label: 'raw_orders', outputs: ['raw/orders/date=(?<date>\\d{4}-\\d{2}-\\d{2})'], exec: ['bash', 'jobs/raw_orders.sh'], args: ['${date}'], env: { DATE: '${date}' } },
        {
          label: 'daily_revenue',
          outputs: ['daily/revenue/date=(?<date>\\d{4}-\\d{2}-\\d{2})'],
          inputs: [{ partition_ref: 'raw/orders/date=${date}', dep_type: 'MATERIALIZE' }, { partition_ref: 'fx/rates/date=${date}' }],
          exec: ['node', 'jobs/daily_revenue.mjs'],
          args: ['${date}'],
          retries: 2,
          timeout_seconds: 600,
          max_concurrency: 2,
        },
        { label: 'weekly_revenue', outputs: ['weekly/revenue/week=(?<week>\\d{4}-W\\d{2})'], config: ['node', 'w.mjs', 'config'], exec: ['node', 'w.mjs', 'exec'] },
      ],
    },
    'platform.json',
  );
  t.is(g.max_concurrent_job_runs, 4);
  t.deepEqual(g.jobs[0], {
    label: 'raw_orders',
    outputs: ['raw/orders/date=(?<date>\\d{4}-\\d{2}-\\d{2})'],
    inputs: [],
    args: ['${date}'],
    env: { DATE: '${date}' },
    exec: ['bash', 'jobs/raw_orders.sh'],
    retries: 0,
    timeout_seconds: 0,
    max_concurrency: 0,
  });
  t.is(g.jobs[1]!.inputs[1]!.dep_type, 'QUERY', 'dep_type defaults to QUERY, as in the proto');
  t.deepEqual(g.jobs[2]!.config, ['node', 'w.mjs', 'config']);
  t.deepEqual(g.jobs[2]!.inputs, []);
  t.is(parseGraph({ jobs: [] }, 'p').max_concurrent_job_runs, availableParallelism());
});

test('parse: a bad regex names the job and field', (t) => {
  const e = parseError({ jobs: [job({}), job({ label: 'broken', outputs: ['ok/(?<d>\\d+)', 'bad/(unclosed'] })] });
  t.is(e.code, 'invalid_graph');
  t.regex(e.message, /^platform\.json: jobs\[1\]\.outputs\[1\] \(job "broken"\): "bad\/\(unclosed" is not a valid regular expression/);
  t.deepEqual(e.jobs, ['broken']);
  // a source that would escape the ^(?:...)$ wrapper is rejected too
  t.regex(parseError({ jobs: [job({ outputs: ['a)|(b'] })] }).message, /outputs\[0\].*not a valid regular expression/);
});

test('parse: an unknown template variable names the job, field and variable', (t) => {
  const e = parseError({ jobs: [job({}), job({ label: 'daily', outputs: ['d/(?<date>\\d+)'], args: ['--date', '${dat}'] })] });
  t.regex(e.message, /jobs\[1\]\.args\[1\] \(job "daily"\): uses \$\{dat\}, but output "d\/\(\?<date>\\\\d\+\)" has no named group "dat" \(its named groups are: date\)/);
  // must be a group of EVERY output
  const e2 = parseError({ jobs: [job({ outputs: ['a/(?<x>\\d+)', 'b/\\d+'], env: { X: '${x}' } })] });
  t.regex(e2.message, /jobs\[0\]\.env\.X \(job "j"\): uses \$\{x\}, but output "b\/\\\\d\+" has no named group "x" \(it has no named groups\)/);
  const e3 = parseError({ jobs: [job({ inputs: [{ partition_ref: 'up/${nope}', dep_type: 'MATERIALIZE' }] })] });
  t.regex(e3.message, /jobs\[0\]\.inputs\[0\]\.partition_ref \(job "j"\): uses \$\{nope\}/);
});

test('parse: missing exec, duplicate label, unknown keys, bad numbers and types', (t) => {
  t.regex(parseError({ jobs: [{ label: 'noexec', outputs: ['x'] }] }).message, /jobs\[0\]\.exec \(job "noexec"\): missing: a job needs "exec"/);
  t.regex(parseError({ jobs: [job({ exec: [] })] }).message, /jobs\[0\]\.exec \(job "j"\): must be a non-empty array of strings/);

  const dup = parseError({ jobs: [job({ label: 'a' }), job({ label: 'b' }), job({ label: 'a' })] });
  t.regex(dup.message, /jobs\[2\]\.label: duplicate label "a" \(also used by jobs\[0\]\)/);

  const typo = parseError({ jobs: [job({ label: 'typo', input: [] })] });
  t.regex(typo.message, /jobs\[0\] \(job "typo"\): unknown job key "input" \(did you mean "inputs"\?\)/);
  t.regex(parseError({ job: [] }).message, /unknown top-level key "job" \(did you mean "jobs"\?\)/);
  t.regex(parseError({ jobs: [job({ inputs: [{ partition_ref: 'x', deptype: 'QUERY' }] })] }).message, /jobs\[0\]\.inputs\[0\] \(job "j"\): unknown input key "deptype" \(did you mean "dep_type"\?\)/);

  t.regex(parseError({ jobs: [job({ retries: -1 })] }).message, /jobs\[0\]\.retries \(job "j"\): must be a non-negative integer/);
  t.regex(parseError({ jobs: [job({ timeout_seconds: 1.5 })] }).message, /timeout_seconds/);
  t.regex(parseError({ jobs: [], max_concurrent_job_runs: 0 }).message, /max_concurrent_job_runs: must be a positive integer/);
  t.regex(parseError({ jobs: [job({ outputs: [] })] }).message, /jobs\[0\]\.outputs \(job "j"\): must be a non-empty array/);
  t.regex(parseError({ jobs: [job({ inputs: [{ partition_ref: 'x', dep_type: 'materialize' }] })] }).message, /inputs\[0\]\.dep_type.*"MATERIALIZE"/);
  t.regex(parseError({ jobs: [job({ config: ['c'], args: ['a'] })] }).message, /jobs\[0\]\.args \(job "j"\): a config-program job/);
  t.regex(parseError([]).message, /must be a JSON object/);
  t.regex(parseError({}).message, /jobs: missing/);
});

test('loadGraph: missing file is an empty graph, bad JSON names file and position', async (t) => {
  const root = await tempDir(t);
  t.deepEqual((await loadGraph(root)).jobs, []);
  await writeFile(join(root, 'platform.json'), '{\n  "jobs": [\n    {"label": "a",}\n  ]\n}\n');
  const e = await t.throwsAsync(loadGraph(root), { instanceOf: GraphError });
  t.is(e!.code, 'invalid_graph');
  t.true(e!.message.startsWith(`${join(root, 'platform.json')}:3:`), e!.message);
  t.regex(e!.message, /not valid JSON/);
  await writeFile(join(root, 'platform.json'), JSON.stringify({ jobs: [job({})] }));
  t.is((await loadGraph(root)).jobs[0]!.label, 'j');
});

test('jsonErrorOffset finds the offset V8 gives wherever V8 gives one (5,000 corrupted platform.json texts)', (t) => {
  const base = JSON.stringify(
    { jobs: [{ label: 'a', outputs: ['a/(?<n>\\d+)'], exec: ['true'], env: { X: '1\u00e9' }, n: -1.5e3, b: true, z: null, u: '\\u0041', o: 0 }] },
    null,
    2,
  );
  let seed = 7;
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const chars = '{}[],:"x0-tn .eE+\\u1';
  let compared = 0;
  for (let k = 0; k < 5_000; k++) {
    const text = base.split('');
    for (let j = 0; j < 1 + Math.floor(random() * 2); j++) {
      const at = Math.floor(random() * text.length);
      const c = chars[Math.floor(random() * chars.length)]!;
      const r = random();
      if (r < 0.33) text.splice(at, 1);
      else if (r < 0.66) text.splice(at, 0, c);
      else text[at] = c;
    }
    const bad = text.join('');
    let message = '';
    try {
      JSON.parse(bad);
      continue;
    } catch (err) {
      message = (err as Error).message;
    }
    const v8 = /at position (\d+)/.exec(message);
    if (!v8) continue;
    compared++;
    t.is(jsonErrorOffset(bad), Number(v8[1]), `${JSON.stringify(bad)}: ${message}`);
  }
  t.true(compared > 1_000, `${compared} texts compared`);
});

test('parseGraphText: every kind of bad JSON names its line and column, where V8 says no position too', (t) => {
  const cases: Array<[string, string]> = [
    ['{"jobs": [}', '1:11'], // V8: Unexpected token '}', "..." is not valid JSON (no position)
    ['{\n  "jobs": [\n    {"label": "a",}\n  ]\n}', '3:19'],
    ['{"jobs": [', '1:11'],
    ['{"jobs": [] } x', '1:15'],
    ['{"jobs": [tru]}', '1:14'],
    ['{"a": "\\q"}', '1:9'],
    ['{"a": -}', '1:8'],
    ['', '1:1'],
    [`{"jobs": ${'['.repeat(20_000)}`, '1:20010'], // deeper than the walk's stack: the end of the text
  ];
  for (const [text, where] of cases) {
    const e = t.throws(() => parseGraphText(text, 'platform.json'), { instanceOf: GraphError }, text);
    t.true(e!.message.startsWith(`platform.json:${where}: not valid JSON`), `${JSON.stringify(text)}: ${e!.message}`);
  }
});

// ---------------------------------------------------------------------------------------------
// lookup and templates

const lookupGraph = parseGraph(
  {
    jobs: [
      { label: 'daily', outputs: ['daily/(?<date>\\d{4}-\\d{2}-\\d{2})', 'daily/(?<date>\\d{4}-\\d{2}-\\d{2})/v(?<v>\\d)?'], exec: ['x'] },
      { label: 'wide', outputs: ['any/.*'], exec: ['x'] },
      { label: 'narrow', outputs: ['any/thing'], exec: ['x'] },
    ],
  },
  'platform.json',
);

test('lookup: a single match returns the job and its groups (whole-ref match)', (t) => {
  const m = matchJob(lookupGraph, 'daily/2026-01-05');
  t.is(m.job.label, 'daily');
  t.deepEqual(m.groups, { date: '2026-01-05' });
  t.deepEqual(matchJob(lookupGraph, 'daily/2026-01-05/v').groups, { date: '2026-01-05' }, 'an unset optional group is absent');
  t.is(matchJob(lookupGraph, 'any/other').job.label, 'wide');
});

test('lookup: no match is unknown_ref naming the ref; two is ambiguous_ref naming both jobs', (t) => {
  const matcher = new JobMatcher(lookupGraph);
  const none = t.throws(() => matcher.match('xdaily/2026-01-05'), { instanceOf: GraphError })!;
  t.is(none.code, 'unknown_ref');
  t.is(none.ref, 'xdaily/2026-01-05');
  t.regex(none.message, /No job produces ref "xdaily\/2026-01-05".*platform\.json/);
  t.throws(() => matcher.match('daily/2026-01-05x'), { message: /No job produces/ }); // full match only
  const two = t.throws(() => matcher.match('any/thing'), { instanceOf: GraphError })!;
  t.is(two.code, 'ambiguous_ref');
  t.deepEqual(two.jobs, ['wide', 'narrow']);
  t.regex(two.message, /Ref "any\/thing" is produced by two jobs: "wide" .* and "narrow"/);
  t.is(matcher.tryMatch('nothing'), undefined);
});

test('template: fill, variables, literal dollars', (t) => {
  t.is(fillTemplate('raw/date=${date}/h=${h}', { date: '2026-01-05', h: '3' }), 'raw/date=2026-01-05/h=3');
  t.is(fillTemplate('$HOME ${x} $${x} {x}', { x: '1' }), '$HOME 1 $1 {x}');
  t.is(fillTemplate('${missing}!', {}), '!');
  t.deepEqual(templateVariables('${a}-${b}-${a}'), ['a', 'b', 'a']);
  fc.assert(
    fc.property(fc.string(), fc.dictionary(fc.string(), fc.string()), (tpl, groups) => {
      return fillCompiledTemplate(compileTemplate(tpl), groups) === fillTemplate(tpl, groups);
    }),
  );
});

// ---------------------------------------------------------------------------------------------
// resolve

test('resolve: declarative jobs get filled templates and outputs = [ref]; cached', async (t) => {
  const graph = parseGraph(
    {
      jobs: [
        {
          label: 'daily',
          outputs: ['daily/(?<region>[a-z]+)/(?<date>[\\d-]+)'],
          inputs: [{ partition_ref: 'raw/${region}/${date}', dep_type: 'MATERIALIZE' }, { partition_ref: 'fx/${date}' }],
          exec: ['node', 'daily.mjs'],
          args: ['--region=${region}', '${date}'],
          env: { DATE: '${date}', FIXED: 'yes' },
        },
      ],
    },
    'platform.json',
  );
  const resolver = new JobResolver(graph, '/nowhere');
  const tasks = await resolver.resolve(['daily/eu/2026-01-05', 'daily/us/2026-01-06', 'daily/eu/2026-01-05']);
  t.deepEqual([...tasks.keys()], ['daily/eu/2026-01-05', 'daily/us/2026-01-06']);
  const eu = tasks.get('daily/eu/2026-01-05')!;
  t.is(eu.job_label, 'daily');
  t.is(eu.job, graph.jobs[0]);
  t.deepEqual(eu.config, {
    outputs: ['daily/eu/2026-01-05'],
    inputs: [
      { dep_type: 'MATERIALIZE', partition_ref: 'raw/eu/2026-01-05' },
      { dep_type: 'QUERY', partition_ref: 'fx/2026-01-05' },
    ],
    args: ['--region=eu', '2026-01-05'],
    env: { DATE: '2026-01-05', FIXED: 'yes' },
  });
  const again = await resolver.resolve(['daily/eu/2026-01-05']);
  t.is(again.get('daily/eu/2026-01-05'), eu, 'served from the cache');
  t.is(resolver.jobFor('daily/us/2026-01-06').label, 'daily');
  await t.throwsAsync(resolver.resolve(['daily/eu/2026-01-05', 'nope']), { instanceOf: GraphError, message: /"nope"/ });
});

test('resolve: a config program runs once for all refs of its job, and not again for cached refs', async (t) => {
  const { root, graph, spawns } = await configWorkspace(t, 'camel');
  const resolver = new JobResolver(graph, root);
  const refs = Array.from({ length: 50 }, (_, i) => `weekly/revenue/week=${i + 1}`);
  const tasks = await resolver.resolve([...refs, 'daily/revenue/date=7']);
  t.deepEqual(await spawns(), [refs], 'one process, all refs as arguments');
  const w3 = tasks.get('weekly/revenue/week=3')!;
  t.is(w3.job_label, 'weekly');
  t.deepEqual(w3.config, {
    outputs: ['weekly/revenue/week=3'],
    inputs: [
      { dep_type: 'MATERIALIZE', partition_ref: 'daily/revenue/date=31' },
      { dep_type: 'MATERIALIZE', partition_ref: 'daily/revenue/date=32' },
      { dep_type: 'MATERIALIZE', partition_ref: 'daily/revenue/date=33' },
      { dep_type: 'QUERY', partition_ref: 'calendar/holidays' },
    ],
    args: ['--week', '3'],
    env: { WEEK: '3' },
  });
  t.is(tasks.get('daily/revenue/date=7')!.job_label, 'daily');

  const second = await resolver.resolve(refs.slice(0, 10));
  t.is((await spawns()).length, 1, 'no spawn for cached refs');
  t.is(second.get('weekly/revenue/week=3'), w3);

  // only the uncached refs go to the next process
  await resolver.resolve(['weekly/revenue/week=2', 'weekly/revenue/week=99']);
  t.deepEqual((await spawns())[1], ['weekly/revenue/week=99']);
});

test('resolve: concurrent calls for the same refs share one in-flight spawn', async (t) => {
  const { root, graph, spawns } = await configWorkspace(t, 'camel');
  const resolver = new JobResolver(graph, root);
  const refs = ['weekly/revenue/week=1', 'weekly/revenue/week=2'];
  const [a, b] = await Promise.all([resolver.resolve(refs), resolver.resolve([...refs].reverse())]);
  t.is((await spawns()).length, 1);
  t.is(a.get(refs[0]!), b.get(refs[0]!));
  t.deepEqual([...b.keys()], [...refs].reverse());
});

test('resolve: snake_case responses and multi-output configs', async (t) => {
  const snake = await configWorkspace(t, 'snake');
  const r1 = await new JobResolver(snake.graph, snake.root).resolve(['weekly/revenue/week=1']);
  t.deepEqual(r1.get('weekly/revenue/week=1')!.config, {
    outputs: ['weekly/revenue/week=1'],
    inputs: [{ dep_type: 'QUERY', partition_ref: 'calendar/holidays' }],
    args: [],
    env: {},
  });
  const multi = await configWorkspace(t, 'multi');
  const r2 = await new JobResolver(multi.graph, multi.root).resolve(['weekly/revenue/week=1', 'weekly/revenue/week=2']);
  t.is(r2.get('weekly/revenue/week=1'), r2.get('weekly/revenue/week=2'), 'one task for one config');
  t.deepEqual(r2.get('weekly/revenue/week=1')!.config.outputs, ['weekly/revenue/week=1', 'weekly/revenue/week=2']);
});

test('resolve: a failing config program reports the job and its stderr, and is not cached', async (t) => {
  const { root, graph, spawns } = await configWorkspace(t, 'fail');
  const resolver = new JobResolver(graph, root);
  const e = await t.throwsAsync(resolver.resolve(['weekly/revenue/week=1', 'weekly/revenue/week=2']), { instanceOf: GraphError });
  t.is(e!.code, 'config_failed');
  t.deepEqual(e!.jobs, ['weekly']);
  t.regex(e!.message, /^Config program of job "weekly" exited with code 3\./);
  t.regex(e!.message, /error: warehouse credentials expired for weekly\/revenue\/week=1,weekly\/revenue\/week=2/);
  t.regex(e!.message, /connecting to warehouse/);
  await t.throwsAsync(resolver.resolve(['weekly/revenue/week=1']), { message: /exited with code 3/ });
  t.is((await spawns()).length, 2, 'a failure is retried on the next call');
});

test('resolve: bad JSON, a missing ref and a timeout are config_failed', async (t) => {
  const bad = await configWorkspace(t, 'badjson');
  const e1 = await t.throwsAsync(new JobResolver(bad.graph, bad.root).resolve(['weekly/revenue/week=1']), { instanceOf: GraphError });
  t.is(e1!.code, 'config_failed');
  t.regex(e1!.message, /did not print a JobConfigResponse as JSON/);
  t.regex(e1!.message, /stdout began with: "configs: none"/);
  t.regex(e1!.message, /printed yaml by mistake/);

  const missing = await configWorkspace(t, 'missing');
  const e2 = await t.throwsAsync(
    new JobResolver(missing.graph, missing.root).resolve(['weekly/revenue/week=1', 'weekly/revenue/week=2']),
    { instanceOf: GraphError },
  );
  t.regex(e2!.message, /returned no config whose outputs include "weekly\/revenue\/week=1"/);

  const slow = await configWorkspace(t, 'slow');
  const started = Date.now();
  const e3 = await t.throwsAsync(
    new JobResolver(slow.graph, slow.root, { configTimeoutMs: 500 }).resolve(['weekly/revenue/week=1']),
    { instanceOf: GraphError },
  );
  t.regex(e3!.message, /did not finish within 0\.5 s and was killed/);
  t.regex(e3!.message, /thinking very hard/);
  t.true(Date.now() - started < 10_000);
});

test('resolve: a config no program can be started with is config_failed when read, naming what is too large', async (t) => {
  const wide = await configWorkspace(t, 'wide');
  const e1 = await t.throwsAsync(new JobResolver(wide.graph, wide.root).resolve(['weekly/revenue/week=1']), { instanceOf: GraphError });
  t.is(e1!.code, 'config_failed');
  t.regex(e1!.message, /returned a config for "weekly\/revenue\/week=1" that no job can be started with: its variable BIG is 204,805 bytes, over the 131,072 Linux allows one argument or variable/);
  t.regex(e1!.message, /stdin \(its JobConfig\) or in a file/);
  const many = await configWorkspace(t, 'many');
  const e2 = await t.throwsAsync(new JobResolver(many.graph, many.root).resolve(['weekly/revenue/week=1']), { instanceOf: GraphError });
  t.regex(e2!.message, /its 0 arguments and 300,000 variables take [\d,]+ bytes, over the [\d,]+ Linux allows a program's arguments and environment together here/);
  const fits = await configWorkspace(t, 'fits');
  const r = await new JobResolver(fits.graph, fits.root).resolve(['weekly/revenue/week=1']);
  t.is(Object.keys(r.get('weekly/revenue/week=1')!.config.env).length, 12, 'what can be started is taken');
});

test('JobConfigResponse: proto and JSON names, enum names or numbers, defaults filled in', (t) => {
  t.deepEqual(
    parseJobConfigResponse({
      configs: [
        { outputs: ['a'], inputs: [{ partition_ref: 'x', dep_type: 'MATERIALIZE' }, { partitionRef: 'y', depType: 1 }, { partitionRef: 'z' }], env: { A: 'b' } },
        { args: null },
      ],
    }),
    [
      {
        outputs: ['a'],
        inputs: [
          { dep_type: 'MATERIALIZE', partition_ref: 'x' },
          { dep_type: 'MATERIALIZE', partition_ref: 'y' },
          { dep_type: 'QUERY', partition_ref: 'z' },
        ],
        args: [],
        env: { A: 'b' },
      },
      { outputs: [], inputs: [], args: [], env: {} },
    ],
  );
  t.deepEqual(parseJobConfigResponse({}), []);
  t.deepEqual(parseJobConfigResponse({ configs: null }), []);
});

test('JobConfigResponse: an invalid one names where and what, and what would do', (t) => {
  const error = (value: unknown): string => t.throws(() => parseJobConfigResponse(value), { instanceOf: JobConfigResponseError }).message;
  t.is(error({ configs: [{ outputs: ['a'] }, { input: [] }] }), 'configs[1]: unknown field: "input" (expected one of outputs, inputs, args, env)');
  t.is(error({ configs: [{ outputs: ['a', 1] }] }), 'configs[0].outputs: expected string: 1');
  t.is(
    error({ configs: [{ outputs: ['b'] }, { inputs: [{ partition_ref: 'y' }, { partition_ref: 'x', dep_type: 'materialize' }] }] }),
    'configs[1].inputs[1].dep_type: unknown enum value: "materialize" (expected "QUERY" (0) or "MATERIALIZE" (1))',
  );
  t.is(error({ configs: [{ inputs: [{ partition_ref: 'x', dep_type: 7 }] }] }), 'configs[0].inputs[0].dep_type must be "QUERY" (0) or "MATERIALIZE" (1), not 7');
  t.is(error({ configs: [{ inputs: [{ dep_type: 0 }] }] }), 'configs[0].inputs[0].partition_ref must be a non-empty string, not ""');
  t.is(error({ configs: [{ env: { A: 1 } }] }), 'configs[0].env: expected string: 1');
  t.is(error({ configs: [{ inputs: [null] }] }), 'configs[0].inputs[0]: expected object: null');
  t.is(error({ configs: {} }), 'configs: expected array: {}');
  t.is(error([]), 'the response: expected object: [] (print one JSON object such as {"configs": [...]})');
  t.is(error({ config: [] }), 'the response: unknown field: "config" (expected one of configs)');
});

// ---------------------------------------------------------------------------------------------
// analyze

const layered = parseGraph(
  {
    jobs: [
      { label: 'raw', outputs: ['raw/(?<d>\\d+)'], exec: ['x'] },
      { label: 'lookup', outputs: ['lookup/ref'], exec: ['x'] },
      {
        label: 'clean',
        outputs: ['clean/(?<d>\\d+)'],
        inputs: [
          { partition_ref: 'raw/${d}', dep_type: 'MATERIALIZE' },
          { partition_ref: 'lookup/ref', dep_type: 'MATERIALIZE' },
        ],
        exec: ['x'],
      },
      {
        label: 'report',
        outputs: ['report/(?<d>\\d+)'],
        inputs: [
          { partition_ref: 'clean/${d}', dep_type: 'MATERIALIZE' },
          { partition_ref: 'raw/${d}', dep_type: 'MATERIALIZE' },
          { partition_ref: 'audit/${d}', dep_type: 'QUERY' }, // no job produces it: must not be followed
        ],
        exec: ['x'],
      },
    ],
  },
  'platform.json',
);

test('analyze: three levels in dependency order, shared inputs once, QUERY not followed', async (t) => {
  const resolver = new JobResolver(layered, '/nowhere');
  const g = await resolver.analyze(['report/1', 'report/2', 'report/1']);
  t.deepEqual(g.outputs, ['report/1', 'report/2']);
  t.deepEqual(
    g.nodes.map((n) => n.config.outputs[0]),
    ['raw/1', 'lookup/ref', 'clean/1', 'report/1', 'raw/2', 'clean/2', 'report/2'],
  );
  t.deepEqual(
    g.nodes.map((n) => n.job_label),
    ['raw', 'lookup', 'clean', 'report', 'raw', 'clean', 'report'],
  );
  t.deepEqual(g.nodes[3]!.config.inputs[2], { dep_type: 'QUERY', partition_ref: 'audit/1' }, 'QUERY inputs are listed');
  // every MATERIALIZE input comes before its user
  const position = new Map(g.nodes.map((n, i) => [n.config.outputs[0], i]));
  for (const [i, n] of g.nodes.entries()) {
    for (const input of n.config.inputs) {
      if (input.dep_type === 'MATERIALIZE') t.true(position.get(input.partition_ref)! < i);
    }
  }
});

test('analyze: config-program jobs in the closure, one spawn per job per level', async (t) => {
  const { root, graph, spawns } = await configWorkspace(t, 'camel');
  const resolver = new JobResolver(graph, root);
  const g = await resolver.analyze(['weekly/revenue/week=1', 'weekly/revenue/week=2']);
  t.deepEqual(await spawns(), [['weekly/revenue/week=1', 'weekly/revenue/week=2']]);
  t.is(g.nodes.length, 2 + 6 + 6);
  t.deepEqual(
    g.nodes.slice(0, 3).map((n) => n.config.outputs[0]),
    ['raw/orders/date=11', 'daily/revenue/date=11', 'raw/orders/date=12'],
  );
  t.is(g.nodes.at(-1)!.config.outputs[0], 'weekly/revenue/week=2');
  t.false(g.nodes.some((n) => n.config.outputs.includes('calendar/holidays')), 'the QUERY input is not followed');
  await resolver.analyze(['weekly/revenue/week=2']);
  t.is((await spawns()).length, 1);
});

test('analyze: a cycle is reported naming it', async (t) => {
  const graph = parseGraph(
    {
      jobs: [
        { label: 'a', outputs: ['a/x'], inputs: [{ partition_ref: 'b/y', dep_type: 'MATERIALIZE' }], exec: ['x'] },
        { label: 'b', outputs: ['b/y'], inputs: [{ partition_ref: 'a/x', dep_type: 'MATERIALIZE' }], exec: ['x'] },
        { label: 'top', outputs: ['top'], inputs: [{ partition_ref: 'a/x', dep_type: 'MATERIALIZE' }], exec: ['x'] },
        { label: 'self', outputs: ['self/(?<n>\\d)'], inputs: [{ partition_ref: 'self/${n}', dep_type: 'MATERIALIZE' }], exec: ['x'] },
      ],
    },
    'platform.json',
  );
  const resolver = new JobResolver(graph, '/nowhere');
  const e = await t.throwsAsync(resolver.analyze(['top']), { instanceOf: GraphError });
  t.is(e!.code, 'cycle');
  t.regex(e!.message, /Dependency cycle: a\/x -> b\/y -> a\/x \(jobs a -> b -> a\)/);
  t.deepEqual(e!.cycle, ['a/x', 'b/y', 'a/x']);
  const self = await t.throwsAsync(resolver.analyze(['self/1']), { instanceOf: GraphError });
  t.regex(self!.message, /self\/1 -> self\/1/);

  // a cycle only through a QUERY input is not a cycle
  const q = parseGraph(
    {
      jobs: [
        { label: 'a', outputs: ['a/x'], inputs: [{ partition_ref: 'b/y', dep_type: 'MATERIALIZE' }], exec: ['x'] },
        { label: 'b', outputs: ['b/y'], inputs: [{ partition_ref: 'a/x', dep_type: 'QUERY' }], exec: ['x'] },
      ],
    },
    'platform.json',
  );
  t.deepEqual((await new JobResolver(q, '/nowhere').analyze(['a/x'])).nodes.map((n) => n.job_label), ['b', 'a']);
});

test('analyze: an input no job produces names the ref that needs it', async (t) => {
  const graph = parseGraph(
    { jobs: [{ label: 'a', outputs: ['a/(?<d>\\d)'], inputs: [{ partition_ref: 'missing/${d}', dep_type: 'MATERIALIZE' }], exec: ['x'] }] },
    'platform.json',
  );
  const e = await t.throwsAsync(new JobResolver(graph, '/nowhere').analyze(['a/1']), { instanceOf: GraphError });
  t.is(e!.code, 'unknown_ref');
  t.is(e!.ref, 'missing/1');
  t.regex(e!.message, /No job produces ref "missing\/1".*MATERIALIZE input of "a\/1", job "a"/s);
});
