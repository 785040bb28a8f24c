/**
 * The `platform` CLI as a user runs it: the real binary as a subprocess (`node bin/platform`), against a real
 * server started in this process on a temp workspace with real job processes, addressed with --server-url.
 */
import test, { type ExecutionContext } from 'ava';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Platform, parseGraph, startHttpServer, type RunningServer } from '../lib/index.js';
import { testSlots } from './helpers/test-slots.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(REPO, 'bin', 'platform');

const GRAPH = {
  max_concurrent_job_runs: 4,
  jobs: [
    {
      label: 'raw_orders',
      outputs: ['raw/orders/date=(?<date>\\d{4}-\\d{2}-\\d{2})'],
      exec: ['bash', '-c', 'mkdir -p out && echo "orders of $1" > "out/raw-$1" && echo "wrote raw $1"', 'raw'],
      args: ['${date}'],
    },
    {
      label: 'daily_revenue',
      outputs: ['daily/revenue/date=(?<date>\\d{4}-\\d{2}-\\d{2})'],
      inputs: [{ partition_ref: 'raw/orders/date=${date}', dep_type: 'MATERIALIZE' }],
      // Fails unless its input was built first: success proves the order.
      exec: ['bash', '-c', 'test -f "out/raw-$1" || exit 9; { cat "out/raw-$1"; echo revenue; } > "out/daily-$1"; echo "wrote daily $1"', 'daily'],
      args: ['${date}'],
    },
    {
      label: 'broken',
      outputs: ['broken/(?<name>[a-z0-9]+)'],
      exec: ['bash', '-c', 'echo "about to fail"; echo "disk on fire" >&2; exit 3'],
    },
    {
      label: 'needs_broken',
      outputs: ['report/(?<name>[a-z0-9]+)'],
      inputs: [{ partition_ref: 'broken/${name}', dep_type: 'MATERIALIZE' }],
      exec: ['bash', '-c', 'echo never'],
    },
    {
      // Its input is a ref no job makes: the input's run fails without running.
      label: 'orphan',
      outputs: ['orphan/(?<name>[a-z0-9]+)'],
      inputs: [{ partition_ref: 'nowhere/${name}', dep_type: 'MATERIALIZE' }],
      exec: ['true'],
    },
    {
      label: 'slow',
      outputs: ['slow/(?<name>[a-z0-9]+)'],
      exec: ['bash', '-c', 'echo started; exec sleep 30'],
    },
    {
      // Prints two lines, then waits for the test to create out/release-<name> before the last one.
      label: 'gated',
      outputs: ['gated/(?<name>[a-z0-9]+)'],
      exec: [
        'bash',
        '-c',
        'echo "line 1"; echo "line 2"; for i in $(seq 1 600); do test -f "out/release-$1" && break; sleep 0.05; done; echo "line 3"; echo "a warning" >&2',
        'gated',
      ],
      args: ['${name}'],
    },
    {
      label: 'chatty',
      outputs: ['chatty/(?<name>[a-z0-9]+)'],
      exec: ['bash', '-c', 'for i in 1 2 3 4 5; do echo "line $i"; sleep 0.1; done; echo "a warning" >&2'],
    },
  ],
};

interface Env {
  url: string;
  ws: string;
  server: RunningServer;
  platform: Platform;
}

async function openEnv(): Promise<Env> {
  const ws = realpathSync(mkdtempSync(join(tmpdir(), 'platform-cli-')));
  mkdirSync(join(ws, '.platform'), { recursive: true });
  const platform = await Platform.open(ws, { graph: parseGraph(GRAPH, 'test'), tickMs: 50 });
  const server = await startHttpServer(platform, { port: 0, log: () => {}, drainMs: 2_000 });
  return { url: server.url, ws, server, platform };
}

async function closeEnv(env: Env): Promise<void> {
  await env.server.close();
  rmSync(env.ws, { recursive: true, force: true });
}

/** A server of its own: the tests that count wants, runs or events, or stop the server, need one. */
async function startServer(t: ExecutionContext): Promise<Env> {
  const env = await openEnv();
  t.teardown(() => closeEnv(env));
  return env;
}

/** One server for the tests that only read the graph: they create nothing, so they cannot see each other. */
let readOnly: Env | undefined;
test.before(async () => {
  readOnly = await openEnv();
});
test.after.always(async () => {
  if (readOnly) await closeEnv(readOnly);
});
function graphServer(): Env {
  if (!readOnly) throw new Error('the shared read-only server did not start (see test.before)');
  return readOnly;
}

/**
 * Each test runs the CLI as node processes, one after another, and sometimes waits on a job. Four tests at a time
 * keep two cores busy through those waits; all 24 at once made the waits for live output time out (measured: five
 * failures in every run on a loaded 2-core machine, none with 2, 4 or 8 slots; 4 was the fastest).
 */
const slot = testSlots(4);

interface Result {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function childEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.FORCE_COLOR;
  delete env.NO_COLOR;
  return env;
}

/** Starts the CLI; `done` resolves when it exits. */
function start(url: string | undefined, args: string[]): { child: ChildProcess; out: () => string; err: () => string; done: Promise<Result> } {
  const argv = url === undefined ? args : ['--server-url', url, ...args];
  const child = spawn(process.execPath, [BIN, ...argv], { cwd: REPO, env: childEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const done = new Promise<Result>((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
  return { child, out: () => stdout, err: () => stderr, done };
}

function cli(url: string | undefined, ...args: string[]): Promise<Result> {
  return start(url, args).done;
}

async function waitFor(what: string, cond: () => boolean | Promise<boolean>, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function api<T = any>(env: Env, method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
  const res = await fetch(`${env.url}${path}`, {
    method,
    headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as T };
}

async function wantStatus(env: Env, id: string): Promise<string> {
  return (await api<{ status: string }>(env, 'GET', `/api/wants/${id}`)).body.status;
}

function noAnsi(t: ExecutionContext, r: Result): void {
  t.false(/\x1b\[/.test(r.stdout + r.stderr), 'no colour or cursor codes when not on a terminal');
}

function noStack(t: ExecutionContext, r: Result): void {
  t.false(/\n\s+at [^\n]+:\d+:\d+/.test(r.stderr), `no stack trace in: ${r.stderr}`);
}

const DAY = '2026-01-05';
const RAW = `raw/orders/date=${DAY}`;
const DAILY = `daily/revenue/date=${DAY}`;

// ---------------------------------------------------------------- wants

test('want create sends every field and prints the want; --json prints the reply', slot(async (t) => {
  const env = await startServer(t);
  const r = await cli(
    env.url,
    'want', 'create', '--partition', RAW, '-p', 'raw/orders/date=2026-01-06',
    '--comment', 'for the board', '--ttl', '3650d', '--sla', '600', '--data-timestamp', '2026-01-05T00:00:00Z',
  );
  t.is(r.code, 0, r.stderr);
  t.regex(r.stdout, /^Created want w-1 \(\w+\)\./);
  t.regex(r.stdout, /│ want\s+│ w-1/);
  t.true(r.stdout.includes(RAW));
  t.true(r.stdout.includes('for the board'));
  noAnsi(t, r);
  const w = (await api(env, 'GET', '/api/wants/w-1')).body;
  t.deepEqual(w.partitions, [RAW, 'raw/orders/date=2026-01-06']);
  t.is(w.comment, 'for the board');
  t.is(w.ttl_seconds, 3650 * 86_400);
  t.is(w.sla_seconds, 600);
  t.is(w.data_timestamp, '2026-01-05T00:00:00.000Z');

  const absent = await cli(env.url, 'want', 'create', '-p', 'raw/orders/date=2026-01-07', '--rebuild', 'absent', '--priority', '3');
  t.is(absent.code, 0, absent.stderr);
  t.regex(absent.stdout, /│ rebuild\s+│ absent/);
  t.like((await api(env, 'GET', '/api/wants/w-2')).body, { rebuild: 'absent', priority: 3 });
  t.is((await cli(env.url, 'want', 'create', '-p', RAW, '--rebuild', 'sometimes')).code, 2);

  const j = await cli(env.url, '--json', 'want', 'create', '--partition', 'slow/a');
  t.is(j.code, 0, j.stderr);
  const reply = JSON.parse(j.stdout);
  t.is(reply.want_id, 'w-3');
  t.deepEqual(reply.want.partitions, ['slow/a']);
  t.is(reply.want.want_id, 'w-3');
}));

test('want create: usage errors exit 2, server refusals exit 1 with the server message', slot(async (t) => {
  const env = await startServer(t);
  const none = await cli(env.url, 'want', 'create');
  t.is(none.code, 2);
  t.regex(none.stderr, /at least one --partition/);
  const ttl = await cli(env.url, 'want', 'create', '-p', RAW, '--ttl', 'soon');
  t.is(ttl.code, 2);
  t.regex(ttl.stderr, /--ttl must be a duration like 90, 90s, 5m, 3h or 1d; got 'soon'/);
  const part = await cli(env.url, 'want', 'create', '-p', RAW, '--sla', '1500ms');
  t.is(part.code, 2);
  t.regex(part.stderr, /--sla counts whole seconds; got '1500ms'/);
  const ts = await cli(env.url, 'want', 'create', '-p', RAW, '--data-timestamp', 'yesterday');
  t.is(ts.code, 2);
  const unknown = await cli(env.url, 'want', 'create', '-p', 'nobody/makes/this');
  t.is(unknown.code, 1);
  t.regex(unknown.stderr, /^platform: .*nobody\/makes\/this/);
  noStack(t, unknown);
  t.is((await api(env, 'GET', '/api/wants')).body.total, 0);
}));

test('want list: a table, --json, --status, --limit and --offset', slot(async (t) => {
  const env = await startServer(t);
  for (const ref of ['slow/a', 'slow/b', 'slow/c']) t.is((await api(env, 'POST', '/api/wants', { partitions: [ref] })).status, 201);
  await api(env, 'DELETE', '/api/wants/w-2');

  const all = await cli(env.url, 'want', 'list');
  t.is(all.code, 0, all.stderr);
  const rows = all.stdout.split('\n').filter((l) => /^│ w-\d/.test(l));
  t.deepEqual(rows.map((l) => l.split('│')[1]!.trim()), ['w-1', 'w-2', 'w-3']);
  t.regex(rows[1]!, /│ canceled\s+│ slow\/b/);
  noAnsi(t, all);

  const canceled = await cli(env.url, 'want', 'list', '--status', 'canceled', '--json');
  const page = JSON.parse(canceled.stdout);
  t.deepEqual(page.data.map((w: { want_id: string }) => w.want_id), ['w-2']);
  t.is(page.total, 1);

  const paged = JSON.parse((await cli(env.url, '--json', 'want', 'list', '--limit', '1', '--offset', '1')).stdout);
  t.deepEqual(paged.data.map((w: { want_id: string }) => w.want_id), ['w-2']);
  t.is(paged.total, 3);
  const pagedTable = await cli(env.url, 'want', 'list', '--limit', '2');
  t.regex(pagedTable.stdout, /showing 1-2 of 3 wants/);
  const newest = JSON.parse((await cli(env.url, '--json', 'want', 'list', '--order', 'desc', '--limit', '2')).stdout);
  t.deepEqual(newest.data.map((w: { want_id: string }) => w.want_id), ['w-3', 'w-2'], '--order desc: newest first');
  t.is((await cli(env.url, 'want', 'list', '--order', 'sideways')).code, 2);
  // Under --json a usage error is JSON too, without the help text after it.
  const badJson = await cli(env.url, '--json', 'want', 'list', '--order', 'sideways');
  t.is(badJson.code, 2);
  t.like(JSON.parse(badJson.stderr), { exit_code: 2 });
  t.regex(JSON.parse(badJson.stderr).error, /--order must be one of asc, desc/);

  t.notRegex(all.stdout, /Priority|Due/, 'no columns for what no want on the page has');
  t.is((await api(env, 'POST', '/api/wants', { partitions: ['slow/d'], priority: 5, sla_seconds: 3600 })).status, 201);
  const withPriority = await cli(env.url, 'want', 'list');
  t.regex(withPriority.stdout, /│ Priority │ Due/);
  t.regex(withPriority.stdout.split('\n').find((l) => /^│ w-4/.test(l)) ?? '', /│ 5\s+│ \d{4}-\d\d-\d\d \d\d:\d\d/);

  // A status no want has is the command line's mistake (exit 2), checked before the server is asked.
  const bad = await cli(env.url, 'want', 'list', '--status', 'sideways');
  t.is(bad.code, 2);
  t.regex(bad.stderr, /--status must be one of idle, building/);
  t.is((await cli(env.url, 'want', 'list', '--limit', '0')).code, 2);
}));

test('want get: a table or JSON; an unknown id exits 1 with the server message and no stack', slot(async (t) => {
  const env = await startServer(t);
  await api(env, 'POST', '/api/wants', { partitions: ['slow/a'], comment: 'hello' });
  const r = await cli(env.url, 'want', 'get', 'w-1');
  t.is(r.code, 0, r.stderr);
  t.regex(r.stdout, /│ want\s+│ w-1/);
  t.regex(r.stdout, /│ partitions\s+│ slow\/a\s+building/);
  t.regex(r.stdout, /│ comment\s+│ hello/);
  const j = JSON.parse((await cli(env.url, 'want', 'get', 'w-1', '--json')).stdout);
  t.deepEqual(j, (await api(env, 'GET', '/api/wants/w-1')).body);

  const missing = await cli(env.url, 'want', 'get', 'w-99');
  t.is(missing.code, 1);
  t.is(missing.stderr, "platform: No want with id 'w-99'. List them: platform want list (GET /api/wants).\n");
  t.is(missing.stdout, '');
  // A script asked for JSON: the refusal is JSON too, with the status that tells a 404 from a 409.
  for (const args of [['--json', 'want', 'get', 'w-99'], ['want', 'get', 'w-99', '--json']]) {
    const jsonMissing = await cli(env.url, ...args);
    t.is(jsonMissing.code, 1);
    t.is(jsonMissing.stdout, '');
    t.deepEqual(JSON.parse(jsonMissing.stderr), { error: "No want with id 'w-99'. List them: platform want list (GET /api/wants).", status: 404, want_id: 'w-99', exit_code: 1 });
  }
  const conflict = await cli(env.url, '--json', 'backfills', 'cancel', 'bf-404');
  t.is(JSON.parse(conflict.stderr).status, 404);
  const usage = await cli(env.url, 'want', 'get');
  t.is(usage.code, 2);
  t.regex(usage.stderr, /missing required argument/);
}));

test('want cancel cancels and kills its run; canceling a successful want is refused', slot(async (t) => {
  const env = await startServer(t);
  await api(env, 'POST', '/api/wants', { partitions: ['slow/a'] });
  await waitFor('the slow run to start', async () => (await api(env, 'GET', '/api/job_runs/r-1')).body.status === 'running');
  const r = await cli(env.url, 'want', 'cancel', 'w-1');
  t.is(r.code, 0, r.stderr);
  t.regex(r.stdout, /^Want w-1 is canceled\./);
  t.is(await wantStatus(env, 'w-1'), 'canceled');
  await waitFor('the run to be canceled', async () => (await api(env, 'GET', '/api/job_runs/r-1')).body.status === 'canceled');
  const again = JSON.parse((await cli(env.url, 'want', 'cancel', 'w-1', '--json')).stdout);
  t.is(again.status, 'canceled');

  const built = await cli(env.url, 'build', RAW);
  t.is(built.code, 0, built.stderr);
  const refused = await cli(env.url, 'want', 'cancel', 'w-2');
  t.is(refused.code, 1);
  t.regex(refused.stderr, /^platform: Want 'w-2' is already successful/);
  const missing = await cli(env.url, 'want', 'cancel', 'w-404');
  t.is(missing.code, 1);
  t.regex(missing.stderr, /No want with id 'w-404'/);
}));

// ---------------------------------------------------------------- build

test('build waits until the want is built by real jobs, in dependency order, and exits 0', slot(async (t) => {
  const env = await startServer(t);
  const r = await cli(env.url, 'build', DAILY, 'daily/revenue/date=2026-01-06', '--comment', 'nightly');
  t.is(r.code, 0, r.stderr);
  // The jobs really ran in the workspace, raw before daily.
  t.is(readFileSync(join(env.ws, 'out', `daily-${DAY}`), 'utf8'), `orders of ${DAY}\nrevenue\n`);
  t.true(existsSync(join(env.ws, 'out', 'daily-2026-01-06')));
  t.is(await wantStatus(env, 'w-1'), 'successful');
  t.is((await api(env, 'GET', '/api/wants/w-1')).body.comment, 'nightly');
  noAnsi(t, r);

  const lines = r.stdout.split('\n');
  t.regex(lines[0]!, /^\[\d+\.\ds\] want w-1 created for daily\/revenue\/date=2026-01-05, daily\/revenue\/date=2026-01-06/);
  // One plain line per job run state change.
  const changes = lines.filter((l) => /^\[\d+\.\ds\] r-\d+ /.test(l)).map((l) => l.replace(/^\[[^\]]+\] /, ''));
  const runs = (await api(env, 'GET', '/api/job_runs')).body.data as Array<{ job_run_id: string; job_label: string }>;
  t.is(runs.length, 4);
  for (const run of runs) {
    t.deepEqual(
      changes.filter((c) => c.startsWith(`${run.job_run_id} `)),
      [`${run.job_run_id} ${run.job_label} queued`, `${run.job_run_id} ${run.job_label} running`, `${run.job_run_id} ${run.job_label} succeeded`],
    );
  }
  const rawDone = changes.findIndex((c) => c.includes('raw_orders succeeded'));
  const dailyRunning = changes.findIndex((c) => c.includes('daily_revenue running'));
  t.true(rawDone >= 0 && dailyRunning > rawDone);
  // The summary table names every run, then the verdict.
  for (const run of runs) t.regex(r.stdout, new RegExp(`│ ${run.job_run_id}\\s+│ ${run.job_label}\\s+│ succeeded`));
  t.regex(r.stdout, /✓ want w-1 successful in \d+\.\ds \(4 job runs\)\.\n$/);
}));

test('build of partitions that are already live returns at once; --json gives the want and its runs', slot(async (t) => {
  const env = await startServer(t);
  const first = await cli(env.url, '--json', 'build', RAW);
  t.is(first.code, 0, first.stderr);
  const doc = JSON.parse(first.stdout);
  t.is(doc.want_id, 'w-1');
  t.is(doc.status, 'successful');
  t.deepEqual(doc.job_runs.map((r: { job_run_id: string; status: string }) => [r.job_run_id, r.status]), [['r-1', 'succeeded']]);

  const again = await cli(env.url, 'build', RAW);
  t.is(again.code, 0, again.stderr);
  t.regex(again.stdout, /want w-2 successful .*nothing to build/);
  t.is((await api(env, 'GET', '/api/job_runs')).body.total, 1);
}));

test('a failing build exits 1 naming the failed job run and how to read its logs', slot(async (t) => {
  const env = await startServer(t);
  const r = await cli(env.url, 'build', 'broken/x');
  t.is(r.code, 1);
  t.regex(r.stdout, /\] r-1 broken failed \(exited with code 3\)/);
  t.regex(r.stdout, /│ r-1\s+│ broken\s+│ failed/);
  t.regex(r.stderr, /^platform: want w-1 failed after \d+\.\ds\./);
  t.regex(r.stderr, /job run r-1 \(broken\) failed: exited with code 3/);
  t.regex(r.stderr, /platform logs r-1/);
  noStack(t, r);
  // And what the message points at works.
  const logs = await cli(env.url, 'logs', 'r-1', '--stderr');
  t.is(logs.stdout, 'disk on fire\n');
}));

test('a build whose input fails is upstream_failed and names the run of the derived want', slot(async (t) => {
  const env = await startServer(t);
  const r = await cli(env.url, 'build', 'report/q1');
  t.is(r.code, 1);
  t.regex(r.stderr, /^platform: want w-1 upstream_failed/);
  const failed = (await api(env, 'GET', '/api/job_runs?status=failed')).body.data as Array<{ job_run_id: string; job_label: string }>;
  t.is(failed.length, 1);
  t.is(failed[0]!.job_label, 'broken');
  t.true(r.stderr.includes(`job run ${failed[0]!.job_run_id} (broken) failed`));
  t.true(r.stderr.includes(`platform logs ${failed[0]!.job_run_id}`));
}));

test('a build whose input no job makes says why, and sends nobody to the logs of a run that never ran', slot(async (t) => {
  const env = await startServer(t);
  const r = await cli(env.url, 'build', 'orphan/x');
  t.is(r.code, 1);
  t.regex(r.stderr, /job run r-\d+ \(\S+\) failed: .*nowhere\/x/);
  t.notRegex(r.stderr, /platform logs/, r.stderr);
  noStack(t, r);
  // Where a failed partition is looked at, its last run says why.
  const got = await cli(env.url, 'partitions', 'get', 'nowhere/x');
  t.is(got.code, 0, got.stderr);
  t.regex(got.stdout, /Its last run r-\d+ \(\S+\) failed: .*nowhere\/x.*More: platform job-runs get r-\d+\./);
  const both = await cli(env.url, 'build', '--stale', '--force', 'orphan/y');
  t.is(both.code, 2);
  t.regex(both.stderr, /'--stale' cannot be used with option '--force'/);
}));

test('build --detach prints the want id and returns while the want builds', slot(async (t) => {
  const env = await startServer(t);
  const r = await cli(env.url, 'build', '--detach', 'slow/a');
  t.is(r.code, 0, r.stderr);
  t.is(r.stdout, 'w-1\n');
  t.is(await wantStatus(env, 'w-1'), 'building');
}));

test('Ctrl-C leaves the want building and says so; --cancel-on-interrupt cancels it', slot(async (t) => {
  const env = await startServer(t);
  const b = start(env.url, ['build', 'slow/a']);
  await waitFor('the run to be reported running', () => /r-1 slow running/.test(b.out()));
  b.child.kill('SIGINT');
  const r = await b.done;
  t.is(r.code, 130);
  t.regex(r.stderr, /want w-1 keeps building; `platform want cancel w-1` to stop it/);
  t.is(await wantStatus(env, 'w-1'), 'building');
  t.is((await api(env, 'GET', '/api/job_runs/r-1')).body.status, 'running');

  const c = start(env.url, ['build', '--cancel-on-interrupt', 'slow/b']);
  await waitFor('the second run to be reported running', () => /slow running/.test(c.out()));
  c.child.kill('SIGINT');
  const rc = await c.done;
  t.is(rc.code, 130);
  t.regex(rc.stderr, /want w-2 is canceled/);
  t.is(await wantStatus(env, 'w-2'), 'canceled');
  t.is(await wantStatus(env, 'w-1'), 'building');
}));

test('want wait follows a want that is building like build does, until it ends; exit 0 when successful', slot(async (t) => {
  const env = await startServer(t);
  t.is((await api(env, 'POST', '/api/wants', { partitions: ['gated/w'] })).status, 201);
  await waitFor('the run to start', async () => (await api(env, 'GET', '/api/job_runs/r-1')).body.status === 'running');
  const w = start(env.url, ['want', 'wait', 'w-1']);
  await waitFor('the wait to show the running run', () => /\] r-1 gated running/.test(w.out()));
  t.is(w.child.exitCode, null, 'still waiting');
  mkdirSync(join(env.ws, 'out'), { recursive: true });
  writeFileSync(join(env.ws, 'out', 'release-w'), '');
  const r = await w.done;
  t.is(r.code, 0, r.stderr);
  noAnsi(t, r);
  const lines = r.stdout.split('\n');
  // A heading without a time: the history under it goes back to the want's creation (the time of now ran backwards).
  t.regex(lines[0]!, /^want w-1 for gated\/w is building; waiting for it$/);
  t.regex(r.stdout, /\] r-1 gated succeeded/);
  t.regex(r.stdout, /│ r-1\s+│ gated\s+│ succeeded/);
  t.regex(r.stdout, /✓ want w-1 successful in \S+ \(1 job run\)\.\n$/);

  // A want that is over already: its summary at once, same exit code; --json like build's.
  const again = await cli(env.url, 'want', 'wait', 'w-1');
  t.is(again.code, 0, again.stderr);
  t.regex(again.stdout, /want w-1 for gated\/w is successful\n/);
  t.regex(again.stdout, /│ r-1\s+│ gated\s+│ succeeded/);
  const json = JSON.parse((await cli(env.url, '--json', 'want', 'wait', 'w-1')).stdout);
  t.is(json.status, 'successful');
  t.deepEqual(json.job_runs.map((run: { job_run_id: string }) => run.job_run_id), ['r-1']);
}));

test('want wait exits 1 for a want that fails, naming the failed run of a derived want; an unknown want is an error', slot(async (t) => {
  const env = await startServer(t);
  const detached = await cli(env.url, 'build', '--detach', 'report/w');
  t.is(detached.code, 0, detached.stderr);
  t.is(detached.stdout, 'w-1\n');
  const r = await cli(env.url, 'want', 'wait', 'w-1');
  t.is(r.code, 1);
  t.regex(r.stderr, /^platform: want w-1 upstream_failed after /);
  const failed = (await api(env, 'GET', '/api/job_runs?status=failed')).body.data as Array<{ job_run_id: string }>;
  t.is(failed.length, 1);
  t.true(r.stderr.includes(`job run ${failed[0]!.job_run_id} (broken) failed`), r.stderr);
  t.true(r.stderr.includes(`platform logs ${failed[0]!.job_run_id}`));
  noStack(t, r);

  const missing = await cli(env.url, 'want', 'wait', 'w-99');
  t.is(missing.code, 1);
  t.is(missing.stderr, "platform: No want with id 'w-99'. List them: platform want list (GET /api/wants).\n");
  t.is((await cli(env.url, 'want', 'wait')).code, 2);
}));

test('build says so and exits 75 (try again), not 1 (failed), when the server shuts down under it', slot(async (t) => {
  const env = await startServer(t);
  const b = start(env.url, ['build', 'slow/a']);
  await waitFor('the run to be reported running', () => /r-1 slow running/.test(b.out()));
  await env.server.close();
  const r = await b.done;
  t.is(r.code, 75);
  t.regex(r.stderr, /^platform: the server ended the event stream before want w-1 finished/);
  t.regex(r.stderr, /'platform want wait w-1' resumes waiting/);
  noStack(t, r);
}));

test('events --follow says so and exits 75 (try again) when the server shuts down under it, naming the last event it printed and how to resume', slot(async (t) => {
  const env = await startServer(t);
  t.is((await api(env, 'POST', '/api/wants', { partitions: ['slow/e'] })).status, 201);
  await waitFor('the run to start', async () => (await api(env, 'GET', '/api/job_runs/r-1')).body.status === 'running');
  const latest = (await api(env, 'GET', '/api/events?limit=1')).body.latest_id as number;
  const f = start(env.url, ['events', '--follow']);
  await waitFor('the backlog', () => f.out().includes(`#${latest} `));
  await env.server.close();
  const r = await f.done;
  t.is(r.code, 75, r.stderr);
  const printed = [...r.stdout.matchAll(/^#(\d+) /gm)].map((m) => Number(m[1])).at(-1);
  t.is(printed, latest, 'the last event printed is the latest there was');
  t.regex(r.stderr, new RegExp(`^platform: the server ended the event stream after event ${latest}, the last printed \\(it shut down\\?\\)`));
  t.regex(r.stderr, new RegExp(`'platform events --follow --offset ${latest}' resumes after it`));
  noStack(t, r);
  // Nothing printed yet (following from the latest), under --json: the id it followed after, and the same exit code.
  const again = await startServer(t);
  t.is((await api(again, 'POST', '/api/wants', { partitions: ['raw/orders/date=2026-02-01'] })).status, 201);
  await waitFor('the want to succeed', async () => (await wantStatus(again, 'w-1')) === 'successful');
  const last = (await api(again, 'GET', '/api/events?limit=1')).body.latest_id as number;
  const j = start(again.url, ['--json', 'events', '--follow', '--offset', String(last)]);
  await waitFor('the stream to open', async () => /^platform_sse_clients 1$/m.test(await (await fetch(`${again.url}/metrics`)).text()));
  await again.server.close();
  const jr = await j.done;
  t.is(jr.code, 75, jr.stderr);
  t.is(jr.stdout, '');
  const error = JSON.parse(jr.stderr.trim().split('\n').at(-1)!) as { error: string; exit_code: number };
  t.is(error.exit_code, 75);
  t.regex(error.error, new RegExp(`^the server ended the event stream before any event after ${last} came \\(it shut down\\?\\)[^]*'platform events --follow --offset ${last}' resumes`));
}));

test('logs -f says so and exits 75 (try again) when the server shuts down under it, naming how to read the log', slot(async (t) => {
  const env = await startServer(t);
  await api(env, 'POST', '/api/wants', { partitions: ['gated/c'] });
  await waitFor('the run to start', async () => (await api(env, 'GET', '/api/job_runs/r-1')).status === 200);
  const f = start(env.url, ['logs', '-f', 'r-1']);
  await waitFor('the first lines', () => f.out().includes('line 2\n'));
  await env.server.close();
  const r = await f.done;
  t.is(r.code, 75);
  t.regex(r.stderr, /^platform: the server ended the log stream of r-1 before the run ended/);
  t.regex(r.stderr, /'platform logs -f r-1' follows it again/);
  noStack(t, r);
}));

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

// script(1) gives the CLI a pseudo-terminal, as a user's shell would.
test('on a terminal, build redraws a live progress block in place, then the summary', slot(async (t) => {
  const script = spawnSync('script', ['--version'], { stdio: 'ignore' });
  if (script.status !== 0) {
    return t.fail(`script(1) is needed to run the CLI on a pseudo-terminal and did not run (${script.error?.message ?? `exit ${script.status}`}); install util-linux (Debian: bsdutils).`);
  }
  const env = await startServer(t);
  const command = [process.execPath, BIN, '--server-url', env.url, 'build', 'gated/t'].map(quote).join(' ');
  const child = spawn('script', ['-qfec', command, '/dev/null'], { cwd: REPO, env: { ...childEnv(), TERM: 'xterm' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let raw = '';
  child.stdout!.on('data', (c: Buffer) => (raw += c.toString()));
  const done = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const plain = () => raw.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');
  await waitFor('the live block with the running job', () => /▸ gated r-1 \d+\.\ds\s+gated\/t/.test(plain()));
  t.regex(plain(), /w-1 building \d+\.\ds\s+\[-+\] 0\/1 job runs ended/);
  t.regex(plain(), /queued 0 · running 1 · succeeded 0 · failed 0/);
  mkdirSync(join(env.ws, 'out'), { recursive: true });
  writeFileSync(join(env.ws, 'out', 'release-t'), '');
  t.is(await done, 0, raw);
  t.true(raw.includes('\x1b[?25l'), 'hides the cursor while drawing');
  t.true(raw.includes('\x1b[?25h'), 'shows it again');
  t.true(raw.includes('\x1b[J'), 'redraws in place');
  t.regex(raw, /\x1b\[3\dm/, 'in colour');
  const text = plain();
  t.regex(text, /✓ \[\d+\.\ds\] r-1 gated succeeded/);
  t.regex(text, /│ r-1\s+│ gated\s+│ succeeded/);
  t.regex(text, /✓ want w-1 successful in \d+\.\ds \(1 job run\)\./);
  // Nothing of the live block is left after the summary.
  t.false(text.slice(text.indexOf('┌')).includes('▸'));
}));

// ---------------------------------------------------------------- logs

test('logs prints stdout or stderr of a run; an unknown run is an error', slot(async (t) => {
  const env = await startServer(t);
  t.is((await cli(env.url, 'build', 'chatty/a')).code, 0);
  const out = await cli(env.url, 'logs', 'r-1');
  t.is(out.code, 0, out.stderr);
  t.is(out.stdout, 'line 1\nline 2\nline 3\nline 4\nline 5\n');
  const err = await cli(env.url, 'logs', 'r-1', '--stderr');
  t.is(err.stdout, 'a warning\n');
  const tail = await cli(env.url, 'logs', 'r-1', '--tail', '2');
  t.is(tail.code, 0, tail.stderr);
  t.is(tail.stdout, 'line 4\nline 5\n');
  t.is((await cli(env.url, 'logs', 'r-1', '-n', '99')).stdout, 'line 1\nline 2\nline 3\nline 4\nline 5\n');
  // With -f, -n is where the follow starts: the last lines, then the end (this run is over).
  const both = await cli(env.url, 'logs', 'r-1', '-n', '2', '-f');
  t.is(both.code, 0, both.stderr);
  t.is(both.stdout, 'line 4\nline 5\n');
  t.regex(both.stderr, /job run r-1 succeeded/);
  t.is((await cli(env.url, 'logs', 'r-1', '--tail', 'some')).code, 2);
  const missing = await cli(env.url, 'logs', 'r-77');
  t.is(missing.code, 1);
  t.is(missing.stderr, "platform: No job run with id 'r-77'. List them: platform job-runs list (GET /api/job_runs).\n");
}));

test('logs -f streams a running job line by line and ends when the run ends', slot(async (t) => {
  const env = await startServer(t);
  await api(env, 'POST', '/api/wants', { partitions: ['gated/b'] });
  await waitFor('the run to start', async () => (await api(env, 'GET', '/api/job_runs/r-1')).status === 200);
  const f = start(env.url, ['logs', '-f', 'r-1']);
  // Output arrives while the job still runs (it waits for the release file).
  await waitFor('the first lines', () => f.out().includes('line 2\n'));
  t.is((await api(env, 'GET', '/api/job_runs/r-1')).body.status, 'running');
  t.is(f.out(), 'line 1\nline 2\n');
  t.is(f.child.exitCode, null, 'still following');
  mkdirSync(join(env.ws, 'out'), { recursive: true });
  writeFileSync(join(env.ws, 'out', 'release-b'), '');
  const r = await f.done;
  t.is(r.code, 0, r.stderr);
  t.is(r.stdout, 'line 1\nline 2\nline 3\n');
  t.regex(r.stderr, /job run r-1 succeeded/);
  t.is((await api(env, 'GET', '/api/job_runs/r-1')).body.status, 'succeeded');
  const stderrFollow = await cli(env.url, 'logs', '--follow', '--stderr', 'r-1');
  t.is(stderrFollow.stdout, 'a warning\n');
  // --json: the text in an object; following, JSON lines ending with the run's end.
  t.deepEqual(JSON.parse((await cli(env.url, '--json', 'logs', 'r-1')).stdout), { job_run_id: 'r-1', stream: 'stdout', text: 'line 1\nline 2\nline 3\n' });
  const followed = (await cli(env.url, '--json', 'logs', '-f', 'r-1')).stdout.trim().split('\n').map((l) => JSON.parse(l) as { line?: string; end?: { status: string } });
  t.deepEqual(followed.slice(0, 3), [{ line: 'line 1' }, { line: 'line 2' }, { line: 'line 3' }]);
  t.is(followed[3]?.end?.status, 'succeeded');
}));

test('logs -f goes on after a dropped stream with Last-Event-ID: no line twice, none lost', slot(async (t) => {
  // A stand-in daemon whose first stream drops after two lines (as a proxy's cut would) and whose second resumes.
  const asked: Array<{ url: string | undefined; lastEventId: string | undefined }> = [];
  const stub = createServer((req, res) => {
    asked.push({ url: req.url, lastEventId: req.headers['last-event-id'] as string | undefined });
    res.writeHead(200, { 'Content-Type': 'text/event-stream' });
    if (asked.length === 1) res.end('event: log\nid: 4\ndata: one\n\nevent: log\nid: 8\ndata: two\n\n');
    else res.end('event: log\nid: 14\ndata: three\n\nevent: end\ndata: {"status":"succeeded","exit_code":0}\n\n');
  });
  await new Promise<void>((resolve) => stub.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => stub.close(() => resolve())));
  const r = await cli(`http://127.0.0.1:${(stub.address() as AddressInfo).port}`, 'logs', '-f', '-n', '2', 'r-1');
  t.is(r.code, 0, r.stderr);
  t.is(r.stdout, 'one\ntwo\nthree\n');
  // The tail is where the first stream starts; the second goes on after the last line seen.
  t.deepEqual(asked, [
    { url: '/api/job_runs/r-1/logs/stdout?follow=true&tail=2', lastEventId: undefined },
    { url: '/api/job_runs/r-1/logs/stdout?follow=true', lastEventId: '8' },
  ]);
}));

// ---------------------------------------------------------------- partitions, job runs

test('partitions list and job-runs list/get, with filters, as tables and JSON', slot(async (t) => {
  const env = await startServer(t);
  t.is((await cli(env.url, 'build', DAILY)).code, 0);
  t.is((await cli(env.url, 'build', 'broken/z')).code, 1);

  const parts = await cli(env.url, 'partitions', 'list');
  t.is(parts.code, 0, parts.stderr);
  const refs = parts.stdout.split('\n').filter((l) => l.startsWith('│ ') && !l.startsWith('│ Partition')).map((l) => l.split('│')[1]!.trim());
  t.deepEqual(refs, ['broken/z', DAILY, RAW]);
  const live = JSON.parse((await cli(env.url, 'partitions', 'list', '--status', 'live', '--json')).stdout);
  t.deepEqual(live.data.map((p: { partition_ref: string }) => p.partition_ref), [DAILY, RAW]);
  const daily = JSON.parse((await cli(env.url, '--json', 'partitions', 'list', '--prefix', 'daily/')).stdout);
  t.deepEqual(daily.data.map((p: { partition_ref: string }) => p.partition_ref), [DAILY]);
  t.is(daily.total, 1);
  const failedParts = await cli(env.url, 'partitions', 'list', '--status', 'failed');
  t.regex(failedParts.stdout, /│ broken\/z\s+│ failed\s+│ r-3/);

  const runs = await cli(env.url, 'job-runs', 'list');
  t.is(runs.code, 0, runs.stderr);
  t.regex(runs.stdout, /│ r-1\s+│ raw_orders\s+│ succeeded/);
  t.regex(runs.stdout, /│ r-2\s+│ daily_revenue\s+│ succeeded/);
  t.regex(runs.stdout, /│ r-3\s+│ broken\s+│ failed .*exited with code 3/);
  const failed = JSON.parse((await cli(env.url, 'job-runs', 'list', '--status', 'failed', '--json')).stdout);
  t.deepEqual(failed.data.map((r: { job_run_id: string }) => r.job_run_id), ['r-3']);
  const none = await cli(env.url, 'job-runs', 'list', '--status', 'canceled');
  t.is(none.stdout, 'no job runs\n');
  // One want's runs: the daily want got its own run; the raw one it derived, the other.
  const dailyRun = JSON.parse((await cli(env.url, 'job-runs', 'get', 'r-2', '--json')).stdout) as { want_ids: string[] };
  const ofWant = JSON.parse((await cli(env.url, 'job-runs', 'list', '--want', dailyRun.want_ids[0]!, '--json')).stdout);
  t.deepEqual(ofWant.data.map((r: { job_run_id: string }) => r.job_run_id), ['r-2']);
  const noWant = await cli(env.url, 'job-runs', 'list', '--want', 'w-404');
  t.is(noWant.code, 1);
  t.regex(noWant.stderr, /No want with id 'w-404'/);
  // An empty id is an error, not every run.
  const emptyWant = await cli(env.url, 'job-runs', 'list', '--want', '');
  t.is(emptyWant.code, 1);
  t.regex(emptyWant.stderr, /--want needs a want's id/);

  const one = await cli(env.url, 'job-runs', 'get', 'r-2');
  t.is(one.code, 0, one.stderr);
  t.regex(one.stdout, /│ job\s+│ daily_revenue/);
  t.regex(one.stdout, /│ inputs\s+│ raw\/orders\/date=2026-01-05 \(MATERIALIZE\)/);
  t.regex(one.stdout, /│ args\s+│ 2026-01-05/);
  t.regex(one.stdout, /│ exit code\s+│ 0/);
  const oneJson = JSON.parse((await cli(env.url, 'job-runs', 'get', 'r-3', '--json')).stdout);
  t.deepEqual(oneJson, (await api(env, 'GET', '/api/job_runs/r-3')).body);
  const missing = await cli(env.url, 'job-runs', 'get', 'r-99');
  t.is(missing.code, 1);
  t.is(missing.stderr, "platform: No job run with id 'r-99'. List them: platform job-runs list (GET /api/job_runs).\n");
}));

// ---------------------------------------------------------------- events

test('events lists the log as a table or JSON, from an offset, up to a limit', slot(async (t) => {
  const env = await startServer(t);
  t.is((await cli(env.url, 'build', RAW)).code, 0);
  const page = (await api(env, 'GET', '/api/events')).body;
  t.is(page.data.length, 4);

  const r = await cli(env.url, 'events');
  t.is(r.code, 0, r.stderr);
  const rows = r.stdout.split('\n').filter((l) => /^│ \d/.test(l));
  t.deepEqual(
    rows.map((l) => l.split('│')[3]!.trim()),
    ['want_created', 'job_run_queued', 'job_run_started', 'job_run_succeeded'],
  );
  t.regex(rows[0]!, /w-1 \(user\): raw\/orders\/date=2026-01-05/);
  t.regex(rows[1]!, /r-1 raw_orders for w-1/);

  const json = JSON.parse((await cli(env.url, 'events', '--json', '--offset', '1', '--limit', '2')).stdout);
  t.deepEqual(json.data.map((e: { event_id: number }) => e.event_id), [2, 3]);
  t.is(json.latest_id, 4);
  const tail = await cli(env.url, 'events', '--offset', '1', '--limit', '2');
  t.regex(tail.stdout, /more events after 3 \(latest id 4\): --offset 3/);
}));

test('events --follow prints events as they happen until it is stopped', slot(async (t) => {
  const env = await startServer(t);
  t.is((await api(env, 'POST', '/api/wants', { partitions: ['slow/a'] })).status, 201);
  const f = start(env.url, ['events', '--follow']);
  // The backlog first, then a live event caused after it started.
  await waitFor('the backlog', () => f.out().includes('job_run_started'));
  await api(env, 'DELETE', '/api/wants/w-1');
  await waitFor('the live events', () => f.out().includes('job_run_canceled'));
  f.child.kill('SIGTERM');
  const r = await f.done;
  const lines = r.stdout.trim().split('\n');
  t.regex(lines[0]!, /^#1 \S+ \S+ want_created w-1 \(user\): slow\/a$/);
  t.regex(r.stdout, /#\d+ .* want_canceled w-1: canceled by request/);
  t.regex(r.stdout, /#\d+ .* job_run_canceled r-1: want w-1 canceled/);
  // Ids come in order, none twice.
  const ids = lines.map((l) => Number(/^#(\d+)/.exec(l)![1]));
  t.deepEqual(ids, [...ids].sort((a, b) => a - b));
  t.is(new Set(ids).size, ids.length);

  // --json: one event per line, resuming after --offset.
  const j = start(env.url, ['events', '--follow', '--json', '--offset', '2']);
  await waitFor('json lines', () => j.out().split('\n').filter(Boolean).length >= 2);
  j.child.kill('SIGTERM');
  const first = JSON.parse((await j.done).stdout.split('\n')[0]!);
  t.is(first.event_id, 3);

  // An --offset past the latest event is refused in the words typed, at once (it would wait, then skip events).
  const latest = (await api(env, 'GET', '/api/events?limit=1')).body.latest_id as number;
  const past = await cli(env.url, 'events', '--follow', '--offset', String(latest + 100));
  t.is(past.code, 1);
  t.is(past.stderr, `platform: --offset ${latest + 100} is past the latest event (${latest}): give an id of at most ${latest}, or none to follow from the last 20 events.\n`);
}));

// ---------------------------------------------------------------- graph

test('graph analyze prints the job graph as a tree, a table or JSON', slot(async (t) => {
  const env = graphServer();
  const tree = await cli(env.url, 'graph', 'analyze', DAILY);
  t.is(tree.code, 0, tree.stderr);
  t.deepEqual(tree.stdout.split('\n').slice(0, 2), [`${DAILY}  ← daily_revenue`, `└── ${RAW}  ← raw_orders`]);
  t.regex(tree.stdout, /2 jobs in the graph of 1 ref, built or not/);
  const table = await cli(env.url, 'graph', 'analyze', '--table', DAILY);
  t.regex(table.stdout, /│ daily_revenue\s+│ daily\/revenue\/date=2026-01-05\s+│ raw\/orders\/date=2026-01-05 \(MATERIALIZE\)/);
  const json = JSON.parse((await cli(env.url, 'graph', 'analyze', DAILY, '--json')).stdout);
  t.deepEqual(json.graph.outputs, [DAILY]);
  t.deepEqual(json.graph.nodes.map((n: { jobLabel: string }) => n.jobLabel).sort(), ['daily_revenue', 'raw_orders']);
  // A brace pattern, as build takes it: the refs it names.
  const pattern = JSON.parse((await cli(env.url, 'graph', 'analyze', 'daily/revenue/date=2026-01-{05..06}', '--json')).stdout);
  t.deepEqual(pattern.graph.outputs, ['daily/revenue/date=2026-01-05', 'daily/revenue/date=2026-01-06']);
  const malformed = await cli(env.url, 'graph', 'configs', 'daily/revenue/date={1..');
  t.is(malformed.code, 2, malformed.stderr);
  const unknown = await cli(env.url, 'graph', 'analyze', 'no/such/ref');
  t.is(unknown.code, 1);
  t.regex(unknown.stderr, /^platform: .*no\/such\/ref/);
  noStack(t, unknown);
}));

test('graph configs prints the job configurations', slot(async (t) => {
  const env = graphServer();
  const r = await cli(env.url, 'graph', 'configs', DAILY, 'raw/orders/date=2026-01-07');
  t.is(r.code, 0, r.stderr);
  t.regex(r.stdout, /│ daily\/revenue\/date=2026-01-05\s+│ raw\/orders\/date=2026-01-05 \(MATERIALIZE\)\s+│ 2026-01-05/);
  t.regex(r.stdout, /│ raw\/orders\/date=2026-01-07\s+│\s+│ 2026-01-07/);
  const json = JSON.parse((await cli(env.url, '--json', 'graph', 'configs', DAILY)).stdout);
  t.deepEqual(json.configs[0].outputs, [DAILY]);
  t.deepEqual(json.configs[0].inputs, [{ depType: 'MATERIALIZE', partitionRef: RAW }]);
}));

test('stop --timeout takes a duration; anything else is a usage error (exit 2), not a silent default', slot(async (t) => {
  for (const bad of ['abc', '0', '10x', '5 minutes']) {
    const r = await cli(undefined, 'stop', '--timeout', bad);
    t.is(r.code, 2, `--timeout '${bad}': ${r.stderr}`);
    t.regex(r.stderr, /--timeout must be (a duration like 90, 90s, 5m, 3h or 1d|more than zero)/);
  }
}));

// ---------------------------------------------------------------- no server

test('no server at the URL: a clear message, exit 1, no stack trace', slot(async (t) => {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  const url = `http://127.0.0.1:${port}`;
  for (const args of [['want', 'list'], ['build', RAW], ['events', '--follow'], ['logs', '-f', 'r-1']]) {
    const r = await cli(url, ...args);
    t.is(r.code, 1, args.join(' '));
    t.is(r.stderr, `platform: No server at ${url}: nothing is listening there (connection refused). Start the daemon with 'platform serve', or check --server-url.\n`);
    noStack(t, r);
  }
  // What is no URL, and a workspace directory that does not exist, are said as such.
  const notUrl = await cli('notaurl', 'want', 'list');
  t.is(notUrl.code, 2);
  t.regex(notUrl.stderr, /--server-url must be an http\(s\) URL such as http:\/\/127\.0\.0\.1:8080; got 'notaurl'/);
  const missing = join(tmpdir(), `platform-missing-${process.pid}`);
  const noDir = await cli(undefined, '-C', missing, 'want', 'list');
  t.is(noDir.code, 1);
  t.is(noDir.stderr, `platform: No directory ${missing}: check the path given to -C (--workspace).\n`);
  // A file is no workspace: it was taken as its directory, whose workspace (here the test's own) answered instead.
  const file = join(tmpdir(), `platform-file-${process.pid}`);
  writeFileSync(file, '');
  const aFile = await cli(undefined, '-C', file, 'want', 'list');
  rmSync(file, { force: true });
  t.is(aFile.code, 1);
  t.is(aFile.stderr, `platform: Not a directory: ${file}: check the path given to -C (--workspace).\n`);
}));
