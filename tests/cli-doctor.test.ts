/**
 * `platform doctor` on real workspaces (a real LevelDB written by the real platform, the real CLI as a subprocess):
 * nothing wrong on a healthy one; an event that does not decode and a truncated LevelDB table are found and named,
 * and a daemon refuses to start on such a log with words that name it and `platform doctor`.
 */
import test from 'ava';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, realpathSync, rmSync, statSync, truncateSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ClassicLevel } from 'classic-level';
import { EventLog, eventKey } from '../lib/events/event-log.js';
import { parseGraph } from '../lib/graph/parse-graph.js';
import { Platform } from '../lib/platform.js';
import { StateStore } from '../lib/state/state-store.js';
import { waitForWant } from './helpers/jobs-fixture.js';

const BIN = join(fileURLToPath(new URL('../../', import.meta.url)), 'bin', 'platform');
const GRAPH = { jobs: [{ label: 'ok', outputs: ['ok/(?<n>\\d+)'], exec: ['true'] }] };

interface Report {
  ok: boolean;
  checks: Array<{ check: string; status: string; detail: string; fix?: string }>;
}

function cli(ws: string, args: string[]) {
  return spawnSync(process.execPath, [BIN, '-C', ws, ...args], { encoding: 'utf8', env: { ...process.env, PLATFORM_IDLE_TIMEOUT: '5s' } });
}

function doctor(ws: string): { code: number | null; report: Report } {
  const r = cli(ws, ['--json', 'doctor']);
  return { code: r.status, report: JSON.parse(r.stdout) as Report };
}

const check = (report: Report, name: string) => report.checks.find((c) => c.check === name)!;

/** A workspace whose log holds two built wants, written by the platform itself. */
async function workspace(t: import('ava').ExecutionContext): Promise<string> {
  const ws = realpathSync(mkdtempSync(join(tmpdir(), 'platform-doctor-')));
  t.teardown(() => rmSync(ws, { recursive: true, force: true }));
  mkdirSync(join(ws, '.platform'), { mode: 0o700 });
  writeFileSync(join(ws, 'platform.json'), JSON.stringify(GRAPH));
  const platform = await Platform.open(ws, { graph: parseGraph(GRAPH, 'test') });
  for (const ref of ['ok/1', 'ok/2']) {
    const r = await platform.createWant({ partitions: [ref], comment: '', data_timestamp: 0, ttl_seconds: 0, sla_seconds: 0 });
    if (!r.ok) throw new Error(r.error);
    // 30 s, not the default 10: the file's other tests, run at once, block this process with spawnSync (a CLI each,
    // seconds on a loaded machine), and no platform of it steps meanwhile; the wait's clock runs on (a run of `true`
    // was still 'running' after 10 s in a full suite beside two busy loops).
    await waitForWant(platform, r.want_id, ['successful'], 30_000);
  }
  await platform.close();
  return ws;
}

test('a healthy workspace: every check ok, exit 0; the table says nothing is wrong', async (t) => {
  const ws = await workspace(t);
  const { code, report } = doctor(ws);
  t.is(code, 0);
  t.true(report.ok);
  t.deepEqual(report.checks.filter((c) => c.status === 'error'), []);
  t.regex(check(report, 'event log').detail, /^\d+ events, each decoded, ids dense from 1$/);
  t.is(check(report, 'permissions').status, 'ok');
  t.is(check(report, 'disk').status, 'ok');
  // npm run build compiled the launcher wherever a C compiler is (CI machines have one: node-gyp needs it).
  t.regex(check(report, 'run launcher').detail, /^native \(.*platform-launcher\)/);
  t.is(check(report, 'compile cache').status, 'ok');
  t.regex(check(report, 'compile cache').detail, /daemon\.cjs\.\S+\.v8cache \([\d.]+ MiB\): the daemon starts from it|^none yet in /);
  const text = cli(ws, ['doctor']);
  t.is(text.status, 0);
  t.regex(text.stdout, /Nothing is wrong\./);
});

test("the run launcher is the running daemon's (its environment chose it), in doctor and in status, not the one doctor's own environment would pick", async (t) => {
  const ws = await workspace(t);
  // A daemon started with the shell launcher; doctor and status run without PLATFORM_LAUNCHER.
  const start = spawnSync(process.execPath, [BIN, '-C', ws, 'start'], { encoding: 'utf8', env: { ...process.env, PLATFORM_LAUNCHER: 'shell', PLATFORM_IDLE_TIMEOUT: '60s' } });
  t.is(start.status, 0, start.stderr);
  t.teardown(() => void cli(ws, ['stop']));
  const { report } = doctor(ws);
  const launcher = check(report, 'run launcher');
  t.is(launcher.status, 'warn', launcher.detail);
  t.regex(launcher.detail, /^the running daemon's: shell: so each run costs about 1\.5 ms more/);
  t.regex(launcher.fix ?? '', /without PLATFORM_LAUNCHER/);
  const status = cli(ws, ['--json', 'status']);
  t.is(status.status, 0, status.stderr);
  t.is((JSON.parse(status.stdout) as { executor: { launcher: string | null } }).executor.launcher, 'shell');
  t.regex(cli(ws, ['status']).stdout, /executor +local \(this machine, shell launcher \(each run ~1\.5 ms slower/);
  // Started again as a user's would be (no PLATFORM_LAUNCHER): native, where npm run build compiled it.
  t.is(cli(ws, ['stop']).status, 0);
  t.is(cli(ws, ['start']).status, 0);
  t.is((JSON.parse(cli(ws, ['--json', 'status']).stdout) as { executor: { launcher: string | null } }).executor.launcher, 'native');
  t.regex(check(doctor(ws).report, 'run launcher').detail, /^the running daemon's: native \(/);
});

test('a snapshot the embedded API wrote is one the CLI reads: its bundle vouches for the same state code', async (t) => {
  const ws = await workspace(t);
  const log = await EventLog.open(join(ws, '.platform', 'bel'));
  const store = await StateStore.open(log);
  t.true(await store.saveSnapshot(join(ws, '.platform', 'snapshot.bin'), 0));
  store.close();
  await log.close();
  const { code, report } = doctor(ws);
  t.is(code, 0);
  // A bundle that hashed its own files (not the state code's) would find the snapshot written by another version.
  t.is(check(report, 'snapshot').status, 'ok');
  t.regex(check(report, 'snapshot').detail, /^at event \d+;/);
});

test('an event that does not decode: doctor names it and the fix, exit 1; the daemon will not start on it', async (t) => {
  const ws = await workspace(t);
  const db = new ClassicLevel<Uint8Array, Uint8Array>(join(ws, '.platform', 'bel'), { keyEncoding: 'view', valueEncoding: 'view' });
  await db.open();
  await db.put(eventKey(2), new Uint8Array([0xff, 0xff, 0xff, 0xff, 0x0f, 0x01]));
  await db.close();
  const { code, report } = doctor(ws);
  t.is(code, 1);
  t.false(report.ok);
  const log = check(report, 'event log');
  t.is(log.status, 'error');
  t.regex(log.detail, /\.platform\/bel is damaged: cannot decode event 2: /);
  t.regex(log.fix ?? '', /restore \.platform\/bel from a backup/);
  const serve = cli(ws, ['serve', '--port', '0']);
  t.is(serve.status, 1);
  t.regex(serve.stderr, /the event log at .*\.platform\/bel cannot be read \(.+\); run `platform doctor`/);
});

test('a truncated LevelDB table: doctor names the file, exit 1', async (t) => {
  const ws = await workspace(t);
  // Reopening moves the write-ahead log into a table file (.ldb).
  const log = await EventLog.open(join(ws, '.platform', 'bel'));
  await log.close();
  const dir = join(ws, '.platform', 'bel');
  const tables = readdirSync(dir).filter((f) => f.endsWith('.ldb'));
  t.true(tables.length > 0, `a table file in ${readdirSync(dir).join(', ')}`);
  const table = tables.sort((a, b) => statSync(join(dir, b)).size - statSync(join(dir, a)).size)[0]!;
  truncateSync(join(dir, table), 100);
  const { code, report } = doctor(ws);
  t.is(code, 1);
  t.is(check(report, 'event log').status, 'error');
  t.true(check(report, 'event log').detail.includes(table), check(report, 'event log').detail);
});

test('doctor says where the daemon\'s compile cache is, that there is none yet, or that its directory may not hold one', (t) => {
  const ws = realpathSync(mkdtempSync(join(tmpdir(), 'platform-doctor-cc-')));
  t.teardown(() => rmSync(ws, { recursive: true, force: true }));
  mkdirSync(join(ws, '.platform'), { mode: 0o700 });
  writeFileSync(join(ws, 'platform.json'), JSON.stringify(GRAPH));
  const cache = join(ws, 'cache');
  mkdirSync(cache, { mode: 0o700 });
  const ask = (env: NodeJS.ProcessEnv) => {
    const r = spawnSync(process.execPath, [BIN, '-C', ws, '--json', 'doctor'], { encoding: 'utf8', env: { ...process.env, ...env } });
    return check(JSON.parse(r.stdout) as Report, 'compile cache');
  };
  t.like(ask({ PLATFORM_COMPILE_CACHE: cache }), { status: 'ok', detail: `none yet in ${cache}: the next daemon that runs 5 s writes it` });
  t.like(ask({ PLATFORM_COMPILE_CACHE: cache, PLATFORM_DISABLE_COMPILE_CACHE: '1' }), { status: 'ok', detail: 'off (PLATFORM_DISABLE_COMPILE_CACHE)' });
  chmodSync(cache, 0o777);
  const open = ask({ PLATFORM_COMPILE_CACHE: cache });
  t.is(open.status, 'warn');
  t.regex(open.detail, /is writable by all/);
  t.regex(open.fix ?? '', /chmod o-w/);
});

test('platform.json missing in a workspace with a history is an error saying to put it back, as the daemon refusing to start says; without a history, write one', async (t) => {
  const ws = await workspace(t);
  const log = await EventLog.open(join(ws, '.platform', 'bel'));
  const n = log.latestId();
  await log.close();
  t.true(n > 0);
  rmSync(join(ws, 'platform.json'));
  const { code, report } = doctor(ws);
  t.is(code, 1);
  t.false(report.ok);
  const graph = check(report, 'platform.json');
  t.is(graph.status, 'error');
  t.is(
    graph.detail,
    `${join(ws, 'platform.json')} is missing, and this workspace's event log holds ${n} events of the jobs it defined: started on no jobs, its active wants would fail. No daemon starts until it is back.`,
  );
  t.is(graph.fix, 'Put platform.json back (from version control, or a backup); a graph with no jobs is {"jobs": []}.');
  const text = cli(ws, ['doctor']);
  t.is(text.status, 1);
  t.notRegex(text.stdout, /Nothing is wrong|platform init/);
  // The daemon refuses with the same words and the same advice.
  const start = cli(ws, ['start']);
  t.not(start.status, 0);
  t.true(start.stderr.includes(`${graph.detail.replace(/ No daemon starts until it is back\.$/, '')} ${graph.fix}`), start.stderr);

  // A workspace with no history: a starter is the advice, a warning.
  const fresh = realpathSync(mkdtempSync(join(tmpdir(), 'platform-doctor-')));
  t.teardown(() => rmSync(fresh, { recursive: true, force: true }));
  mkdirSync(join(fresh, '.platform'), { mode: 0o700 });
  const empty = check(doctor(fresh).report, 'platform.json');
  t.is(empty.status, 'warn');
  t.is(empty.fix, 'write one (platform init makes a starter)');
});

test("doctor's snapshot line says when one is written, by the store's thresholds: not 'the next start writes one' of a short log", async (t) => {
  const ws = await workspace(t);
  const { report } = doctor(ws);
  const snapshot = check(report, 'snapshot');
  t.is(snapshot.status, 'ok');
  const events = /^\d+/.exec(check(report, 'event log').detail)![0];
  t.is(
    snapshot.detail,
    `none: the next start replays the log's ${events} events (a start writes one only after replaying 10,000 or more); ` +
      'a clean stop (platform stop) writes one once 1,000 or more events came since the last, a running daemon once 10,000 or more came and the log rests',
  );
  t.notRegex(snapshot.detail, /then writes one/);
});

test("a partition's value in exec, where it is not filled in, is a warning naming the job and saying to pass it in args", async (t) => {
  const ws = realpathSync(mkdtempSync(join(tmpdir(), 'platform-doctor-')));
  t.teardown(() => rmSync(ws, { recursive: true, force: true }));
  mkdirSync(join(ws, '.platform'), { mode: 0o700 });
  const jobs = [
    { label: 'e', outputs: ['e/(?<date>[0-9-]+)'], exec: ['sh', '-c', 'echo hi > out/${date}.txt'] },
    // A shell variable of its own, not a group of its outputs: fine.
    { label: 'h', outputs: ['h/(?<n>\\d+)'], exec: ['sh', '-c', 'echo ${HOME}'] },
  ];
  writeFileSync(join(ws, 'platform.json'), JSON.stringify({ jobs }));
  const { report } = doctor(ws);
  const graph = check(report, 'platform.json');
  t.is(graph.status, 'warn', JSON.stringify(graph));
  t.is(
    graph.detail,
    'job e: its exec holds ${date}, which is not filled in there (exec is not a template; a shell reads it as its own variable, empty); pass it in args (["${date}"], then "$1" in a shell) or env',
  );
  t.regex(graph.fix ?? '', /args or env/);
});
