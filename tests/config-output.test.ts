/**
 * A config program's large output is read off the event loop (lib/graph/config-output.ts): on a worker thread, its
 * configs handed back in slices. The same configs and the same errors as when it is read on the loop; the loop turns
 * meanwhile; a worker that cannot start leaves the reading to the loop; the bundle carries the worker beside the code
 * that starts it, and a daemon run from the bundle answers for a large output. Serial: the tests count where outputs
 * were read (a count of the process), and a read on the loop would hold the others' timers.
 */
import test from 'ava';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { OFF_THREAD_BYTES, configOutputReads, parseConfigOutput, readConfigOutput } from '../lib/graph/config-output.js';
import { runConfigProgram, type ConfigProgramOptions } from '../lib/graph/config-program.js';
import { GraphError } from '../lib/graph/graph-error.js';
import type { JobDefinition } from '../lib/graph/graph-definition.js';
import { PLATFORM_SERVICE } from '../lib/proto/schema.js';
import { REPO_ROOT, makeWorkspace, runCli } from './helpers/server-fixture.js';

const BUNDLE = join(REPO_ROOT, 'dist', 'lib', 'bundle');
const ON_LOOP: ConfigProgramOptions = { offThreadBytes: Number.POSITIVE_INFINITY };

const refOf = (i: number) => `big/p=${i}`;

/** A JobConfigResponse for refs 0..n-1 of ~`inputs` inputs each (~95 bytes an input); refs 0 and 1 share a config. */
function response(n: number, inputs: number, edit: (configs: Array<Record<string, unknown>>) => void = () => {}): string {
  const configs: Array<Record<string, unknown>> = [];
  for (let i = 0; i < n; i++) {
    if (i === 1) continue;
    configs.push({
      outputs: i === 0 ? [refOf(0), refOf(1)] : [refOf(i)],
      inputs: Array.from({ length: inputs }, (_, k) => ({ partition_ref: `raw/some/longish/source/table/date=2026-01-05/part=${i}-${k}`, dep_type: k % 2 ? 'QUERY' : 'MATERIALIZE' })),
      args: [refOf(i), '--flag'],
      env: { REF: refOf(i), ACCENT: 'é€😀' },
    });
  }
  edit(configs);
  return JSON.stringify({ configs });
}

/** A job whose config program prints `file` (with the refs as its arguments, unused). */
function catJob(file: string): JobDefinition {
  return { label: 'big', outputs: [], config: ['bash', '-c', 'cat "$0"', file] } as unknown as JobDefinition;
}

const refs = (n: number) => Array.from({ length: n }, (_, i) => refOf(i));

/** The output as a pipe gives it: chunks of 64 KiB. */
function chunked(text: string): Buffer[] {
  const all = Buffer.from(text);
  const out: Buffer[] = [];
  for (let i = 0; i < all.length; i += 65536) out.push(Buffer.from(all.subarray(i, i + 65536)));
  return out;
}

test.serial('a large output (~3 MB) is read on a worker: the same configs as read on the loop, a shared config shared', async (t) => {
  const dir = await makeWorkspace(t);
  const file = join(dir, 'configs.json');
  writeFileSync(file, response(500, 60));
  t.true(readFileSync(file).length > 2 * OFF_THREAD_BYTES);
  const before = configOutputReads.onWorker;
  const off = await runConfigProgram(catJob(file), refs(500), dir);
  t.is(configOutputReads.onWorker, before + 1, 'read on the worker');
  const on = await runConfigProgram(catJob(file), refs(500), dir, ON_LOOP);
  t.is(off.size, 500);
  t.deepEqual([...off.keys()], [...on.keys()]);
  t.deepEqual(off.get(refOf(7)), on.get(refOf(7)));
  t.deepEqual([...off.values()], [...on.values()]);
  t.is(off.get(refOf(0)), off.get(refOf(1)), 'one config object for the refs of a multi-output config');
  t.is(off.get(refOf(499))!.env.ACCENT, 'é€😀', 'UTF-8 across chunk boundaries');
  t.is(off.get(refOf(3))!.inputs[1]!.dep_type, 'QUERY');
});

test.serial('a large output that is not JSON, or not a valid JobConfigResponse, fails with the same error as on the loop', async (t) => {
  const dir = await makeWorkspace(t);
  const cases = [
    { name: 'cut short', text: `${response(500, 60).slice(0, -5000)} garbage`, mention: /did not print a JobConfigResponse as JSON on stdout \(.+\)\.\n {2}command: bash -c .*\n {2}refs: .*\n {2}stdout began with: "\{\\"configs\\":\[\{\\"outputs/ },
    {
      name: 'a bad dep_type deep inside',
      text: response(500, 60, (c) => ((c[400]!.inputs as Array<Record<string, unknown>>)[3]!.dep_type = 'SOMETIMES')),
      mention: /printed a JobConfigResponse that is not valid: configs\[400\]\.inputs\[3\]\.dep_type: unknown enum value: "SOMETIMES" \(expected "QUERY" \(0\) or "MATERIALIZE" \(1\)\)/,
    },
    { name: 'an unknown field', text: response(500, 60, (c) => (c[250]!.outptus = [])), mention: /configs\[250\]: unknown field: "outptus" \(expected one of outputs, inputs, args, env\)/ },
  ];
  for (const c of cases) {
    const file = join(dir, 'configs.json');
    writeFileSync(file, c.text);
    const before = configOutputReads.onWorker;
    const off = await t.throwsAsync(runConfigProgram(catJob(file), refs(500), dir), { instanceOf: GraphError }, c.name);
    t.is(configOutputReads.onWorker, before + 1, `${c.name}: read on the worker`);
    const on = await t.throwsAsync(runConfigProgram(catJob(file), refs(500), dir, ON_LOOP), { instanceOf: GraphError }, c.name);
    t.is(off!.code, 'config_failed');
    t.is(off!.message, on!.message, c.name);
    t.deepEqual(off!.jobs, ['big']);
    t.regex(off!.message, c.mention, c.name);
  }
});

test.serial('the loop turns while a ~20 MB output is read: timers fire throughout, where reading it on the loop lets none', async (t) => {
  const text = response(3300, 60);
  t.true(text.length > 18_000_000);
  /** Reads the output while a chain of timers counts the turns of the loop; the longest wait between two is logged. */
  const readCounting = async (offThreadBytes: number) => {
    let timers = 0;
    let immediates = 0;
    let stop = false;
    let last = performance.now();
    let longest = 0;
    const tick = () => {
      const now = performance.now();
      longest = Math.max(longest, now - last);
      last = now;
      timers++;
      if (!stop) setTimeout(tick, 1);
    };
    setTimeout(tick, 1);
    setImmediate(() => immediates++);
    const started = performance.now();
    const output = await parseConfigOutput(chunked(text), Buffer.byteLength(text), { offThreadBytes });
    const took = performance.now() - started;
    const seen = { timers, immediates };
    stop = true;
    return { output, took, longest, ...seen };
  };
  const off = await readCounting(OFF_THREAD_BYTES);
  const on = await readCounting(Number.POSITIVE_INFINITY);
  t.log(`worker: ${off.took.toFixed(0)} ms, ${off.timers} timers, longest gap ${off.longest.toFixed(0)} ms; on the loop: ${on.took.toFixed(0)} ms, ${on.timers} timers`);
  t.true(off.output.ok && on.output.ok);
  t.true(JSON.stringify(off.output) === JSON.stringify(on.output), 'the same configs');
  // Read on the loop, the read is one piece: nothing else runs before it ends. On the worker, the loop goes on.
  t.is(on.timers, 0);
  t.is(on.immediates, 0);
  t.is(off.immediates, 1, 'an immediate queued with the read ran before it ended');
  t.true(off.timers >= 5, `${off.timers} timers fired during the read`);
});

test.serial('a worker that cannot start leaves the output to the loop: it is read all the same', async (t) => {
  const text = response(200, 60, (c) => ((c[10]!.inputs as Array<Record<string, unknown>>)[0]!.partition_ref = ''));
  const before = configOutputReads.workerFailures;
  const output = await parseConfigOutput(chunked(text), Buffer.byteLength(text), { offThreadBytes: 1, workerUrl: new URL('file:///nonexistent/config-output-worker.js') });
  t.is(configOutputReads.workerFailures, before + 1);
  t.deepEqual(output, readConfigOutput(text));
  t.false(output.ok);
  t.regex(output.ok ? '' : output.reason, /configs\[10\]\.inputs\[0\]\.partition_ref must be a non-empty string/);
});

test.serial('the bundle carries the worker beside the code that starts it, and the bundled worker answers', async (t) => {
  const worker = join(BUNDLE, 'config-output-worker.js');
  t.true(existsSync(worker), 'npm run build bundles the worker');
  // The daemon's file and the chunk of the ES bundle that start it name it beside themselves.
  const starters = readdirSync(BUNDLE).filter((f) => /\.c?js$/.test(f) && readFileSync(join(BUNDLE, f), 'utf8').includes('"./config-output-worker.js"'));
  t.true(starters.includes('daemon.cjs'), starters.join(', '));
  t.true(starters.some((f) => f.startsWith('chunk-')), starters.join(', '));
  const text = response(300, 60);
  const before = configOutputReads.onWorker;
  const output = await parseConfigOutput(chunked(text), Buffer.byteLength(text), { workerUrl: pathToFileURL(worker) });
  t.is(configOutputReads.onWorker, before + 1);
  t.deepEqual(output, readConfigOutput(text));
});

test.serial('a daemon run from the bundle answers GetJobConfigs for a config program that prints ~2.5 MB', async (t) => {
  t.timeout(60_000);
  const dir = await makeWorkspace(t);
  writeFileSync(join(dir, 'configs.json'), response(400, 60));
  writeFileSync(
    join(dir, 'platform.json'),
    JSON.stringify({ jobs: [{ label: 'big', outputs: ['big/p=(?<n>\\d+)'], config: ['bash', '-c', 'cat configs.json'], exec: ['true'] }] }),
  );
  mkdirSync(join(dir, '.platform'));
  const daemon = runCli(t, ['serve', '--port', '0', '-C', dir], dir, { PLATFORM_IDLE_TIMEOUT: '30s' });
  const [, url] = await daemon.waitForStdout(/Listening on (http:\/\/\S+)/, 20_000);
  const res = await fetch(`${url}/${PLATFORM_SERVICE}/GetJobConfigs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ outputRefs: refs(400) }),
  });
  const body = (await res.json()) as { configs?: Array<{ outputs: string[]; inputs: unknown[] }> };
  t.is(res.status, 200, JSON.stringify(body).slice(0, 500));
  t.is(body.configs!.length, 399, 'one config for refs 0 and 1');
  t.deepEqual(body.configs!.find((c) => c.outputs.includes(refOf(0)))!.outputs, [refOf(0), refOf(1)]);
  t.is(body.configs!.find((c) => c.outputs.includes(refOf(123)))!.inputs.length, 60);
  daemon.child.kill('SIGTERM');
  await daemon.exited;
});
