/**
 * One workspace, one open platform: a second open in the same process is refused before LevelDB is asked (whose own
 * refusal dropped the first open's lock), so another process stays locked out and nothing acknowledged is lost.
 */
import test from 'ava';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { Platform, type PlatformOptions } from '../lib/platform.js';
import type { GraphDefinition } from '../lib/graph/graph-definition.js';
import { parseGraph } from '../lib/graph/parse-graph.js';
import { makeWorkspace, openPlatform } from './helpers/jobs-fixture.js';

const run = promisify(execFile);
const PLATFORM = fileURLToPath(new URL('../lib/platform.js', import.meta.url));
const graph = { jobs: [{ label: 'a', outputs: ['a/(?<n>\\w+)'], exec: ['true'] }] };

test('a second open of a workspace in one process is refused, and the first keeps another process out', async (t) => {
  const dir = makeWorkspace(t, { 'platform.json': JSON.stringify(graph) });
  const first = await openPlatform(t, dir, graph);
  const again = await t.throwsAsync(Platform.open(dir));
  t.regex(again!.message, /already open in this process/);
  // Another process: still refused, the first open's lock held.
  const script = `import(${JSON.stringify(PLATFORM)}).then(({ Platform }) => Platform.open(${JSON.stringify(dir)})).then(() => console.log('opened'), (e) => console.log('refused: ' + e.message))`;
  const { stdout } = await run(process.execPath, ['-e', script], { timeout: 20_000 });
  // Said as what it is and what to do, not LevelDB's "IO error: lock .../LOCK: Resource temporarily unavailable".
  t.regex(stdout, /^refused: the event log at .* is held by another process .*platform stop/, stdout);
  const w = await first.createWant({ partitions: ['a/x'], comment: '', data_timestamp: 0, ttl_seconds: 0, sla_seconds: 0 });
  t.true(w.ok);
  await first.close();
  // Closed, it can be opened again here.
  const reopened = await Platform.open(dir);
  t.true(reopened.state().wants.size >= 1);
  await reopened.close();
});

test('an open of a path that is no directory is refused, not made a new empty workspace', async (t) => {
  const dir = makeWorkspace(t);
  const missing = `${dir}/no-such-workspace`;
  const err = await t.throwsAsync(Platform.open(missing));
  t.regex(err!.message, /no directory at .*no-such-workspace/);
  t.false(existsSync(missing), 'nothing made');
});

test('an open of a directory that is no workspace (no .platform/, no platform.json, no graph given) is refused, and makes nothing', async (t) => {
  // makeWorkspace's own marker is removed: a directory as a mistyped or parent path would be.
  const dir = makeWorkspace(t);
  rmSync(join(dir, '.platform'), { recursive: true });
  const sub = join(dir, 'src');
  mkdirSync(sub);
  for (const path of [dir, sub]) {
    // One opened after all is closed again, so the failure reads as one rather than as a hang.
    const err = await Platform.open(path).then(async (opened) => (await opened.close(), new Error(`${path} was opened`)), (e: Error) => e);
    t.is(
      err.message,
      `${path} is not a platform workspace: it has neither a .platform/ directory nor platform.json, and nothing was made there. ` +
        `Run 'platform init ${path}' to make it one, or pass PlatformOptions.graph to open it with a graph of your own ` +
        '(opened as it is, it would become a workspace, which every platform command run below it takes for its own)',
    );
    t.false(existsSync(join(path, '.platform')), `nothing made in ${path}`);
  }
  // Its graph given, a directory becomes a workspace as asked; platform.json alone says it is meant as one.
  const given = await Platform.open(sub, { graph: parseGraph(graph, 'test') });
  await given.close();
  t.true(existsSync(join(sub, '.platform')));
  writeFileSync(join(dir, 'platform.json'), JSON.stringify(graph));
  const withFile = await Platform.open(dir);
  t.is(withFile.resolver.graph.jobs.length, 1);
  await withFile.close();
});

test('state$ never emits the same state twice in a row; graph$ completes on close', async (t) => {
  const dir = makeWorkspace(t, { 'platform.json': JSON.stringify(graph) });
  const platform = await openPlatform(t, dir, graph);
  const states: unknown[] = [];
  const sub = platform.state$.subscribe((s) => states.push(s));
  let graphDone = false;
  platform.graph$.subscribe({ complete: () => (graphDone = true) });
  const w = await platform.createWant({ partitions: ['a/y'], comment: '', data_timestamp: 0, ttl_seconds: 0, sla_seconds: 0 });
  if (!w.ok) return t.fail(w.error);
  await new Promise<void>((resolve) => platform.state$.subscribe((s) => s.wants.get(w.want_id)?.status === 'successful' && resolve()));
  sub.unsubscribe();
  t.true(states.length > 1);
  t.true(states.every((s, i) => i === 0 || s !== states[i - 1]), 'no state repeated');
  await platform.close();
  t.true(graphDone);
});

// A JavaScript embedder hands platform.json's content as it reads it; the resolver failed deep inside with "Cannot
// read properties of undefined (reading 'map')".
test("PlatformOptions.graph given as platform.json's content is parsed at open; a bad one is refused with parseGraph's message", async (t) => {
  const dir = makeWorkspace(t);
  const platform = await Platform.open(dir, { graph: graph as unknown as GraphDefinition, tickMs: 50 });
  t.teardown(() => platform.close());
  const w = await platform.createWant({ partitions: ['a/z'], comment: '', data_timestamp: 0, ttl_seconds: 0, sla_seconds: 0 });
  if (!w.ok) return t.fail(w.error);
  await new Promise<void>((resolve) => platform.state$.subscribe((s) => s.wants.get(w.want_id)?.status === 'successful' && resolve()));
  await platform.close();

  const bad = { jobs: [{ label: 'a', outputs: ['a/(?<n>'], exec: ['true'] }] } as unknown as GraphDefinition;
  const err = await t.throwsAsync(Platform.open(makeWorkspace(t), { graph: bad }));
  t.regex(err!.message, /^PlatformOptions\.graph: jobs\[0\]\.outputs\[0\] \(job "a"\): .* is not a valid regular expression/);
});

// A GraphDefinition built by hand (TypeScript accepts any that has its fields) was taken as checked: max_concurrent_job_runs
// 0 opened a platform whose wants never ran one job, a bad output pattern threw JavaScript's own SyntaxError, and a
// schedule written as in platform.json failed at open with "cannot encode event 2: ... timezone: missing".
test("PlatformOptions.graph built by hand is checked as platform.json is; parseGraph's own result is taken as it is", async (t) => {
  const job = { label: 'a', outputs: ['a/(?<n>[\\w-]+)'], inputs: [], args: [], env: {}, exec: ['true'], retries: 0, timeout_seconds: 0, max_concurrency: 0 };
  const cases: Array<[unknown, RegExp]> = [
    [{ max_concurrent_job_runs: 0, jobs: [job], schedules: [] }, /^PlatformOptions\.graph: max_concurrent_job_runs: must be a positive integer \(got 0\)/],
    [{ max_concurrent_job_runs: 2, jobs: [{ ...job, outputs: ['a/(?<n>'] }], schedules: [] }, /^PlatformOptions\.graph: jobs\[0\]\.outputs\[0\] \(job "a"\): .* is not a valid regular expression/],
    [{ max_concurrent_job_runs: 2, jobs: [job, job], schedules: [] }, /^PlatformOptions\.graph: jobs\[1\]\.label: duplicate label "a"/],
  ];
  for (const [given, message] of cases) {
    const err = await t.throwsAsync(Platform.open(makeWorkspace(t), { graph: given as GraphDefinition }));
    t.regex(err!.message, message, JSON.stringify(given));
  }
  // A schedule as platform.json spells it, beside jobs spelled out: parsed, not refused for a field only parsing adds.
  const written = { max_concurrent_job_runs: 2, jobs: [job], schedules: [{ name: 's', cron: '0 3 * * *', partitions: ['a/${date}'] }] };
  const opened = await Platform.open(makeWorkspace(t), { graph: written as unknown as GraphDefinition });
  t.like(opened.resolver.graph.schedules[0], { name: 's', timezone: 'UTC', offset_ms: 0 });
  await opened.close();
  // parseGraph's result, with what it adds (a config job's empty inputs, a schedule's offset_ms), is taken unchanged.
  const parsed = parseGraph(
    {
      max_concurrent_job_runs: 3,
      jobs: [
        { label: 'cfg', outputs: ['c/(?<n>\\w+)'], exec: ['true'], config: ['/bin/echo'] },
        { label: 'b', outputs: ['b/(?<n>\\w+)'], inputs: [{ partition_ref: 'a/${n}', dep_type: 'MATERIALIZE' }], exec: ['true'], args: ['${n}'], env: { N: 'one' }, batch: { max_partitions: 5, max_wait_ms: 0 }, version: 'v1' },
        job,
      ],
      schedules: [{ name: 'daily', cron: '0 3 * * *', timezone: 'Europe/Paris', partitions: ['a/${date}'], offset: '-1d', catchup: 0 }],
      retention: { job_logs_days: 3, events_keep: 1000 },
    },
    'test',
  );
  const platform = await Platform.open(makeWorkspace(t), { graph: parsed });
  t.is(platform.resolver.graph, parsed);
  await platform.close();
});

test('options that make no sense are refused at open, saying which and what they take; the workspace is untouched', async (t) => {
  const dir = makeWorkspace(t);
  const err = await t.throwsAsync(Platform.open(dir, { executor: 'in_process' as 'in-process' }));
  t.regex(err!.message, /^PlatformOptions\.executor must be 'in-process', 'supervised' or a function .*, got "in_process"/);
  // tickMs 0 spun the event loop for ever; a queue of 0 refused every command as "full".
  const cases: Array<[PlatformOptions, RegExp]> = [
    [{ tickMs: 0 }, /^PlatformOptions\.tickMs must be a number of milliseconds from 1 to 2147483647 \(default 500\), got 0$/],
    [{ tickMs: -5 }, /tickMs .* got -5$/],
    [{ tickMs: Number.NaN }, /tickMs .* got NaN$/],
    // Past setTimeout's ceiling node sets an interval to 1 ms: the orchestrator ticked a thousand times a second.
    [{ tickMs: 2 ** 31 }, /^PlatformOptions\.tickMs must be a number of milliseconds from 1 to 2147483647 \(default 500\), got 2147483648$/],
    [{ queueCapacity: 0 }, /^PlatformOptions\.queueCapacity must be a whole number of at least 1 \(default 100\), got 0$/],
    [{ snapshotEveryEvents: -1 }, /^PlatformOptions\.snapshotEveryEvents must be a whole number of at least 0/],
  ];
  // A JavaScript caller's null failed with "Cannot destructure property 'tickMs' of 'options' as it is null".
  const nullRefused = await t.throwsAsync(Platform.open(dir, null as unknown as PlatformOptions));
  t.regex(nullRefused!.message, /^Platform\.open takes an options object as its second argument \(or none\), got null$/);
  for (const [options, message] of cases) {
    const refused = await t.throwsAsync(Platform.open(dir, options));
    t.true(refused instanceof RangeError, JSON.stringify(options));
    t.regex(refused!.message, message, JSON.stringify(options));
  }
  const platform = await Platform.open(dir);
  await platform.close();
  t.pass();
});
