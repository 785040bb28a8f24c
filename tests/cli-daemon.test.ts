/**
 * The workspace daemon as users meet it, through the real binary as a subprocess: `init`, discovery and
 * auto-start from anywhere in a workspace, reuse, `status`, `stop`, stale server.json replaced, a live server
 * that does not answer waited for (never replaced), one server when clients race, SIGTERM on `serve`. No server
 * runs before a test; every daemon a test may have started (found by its command line, `serve ... -C
 * <workspace>`) is stopped in its teardown, and PLATFORM_IDLE_TIMEOUT=30s makes a leaked one die on its own
 * anyway. Two tests at a time (see `slot`): each starts several node processes, and machines are small; every
 * test has its own workspace and counts only the servers of that workspace, so they cannot see each other.
 */
import test, { type ExecutionContext } from 'ava';
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connectServer } from '../lib/client/server-connection.js';
import { isPidAlive } from '../lib/system/pid-liveness.js';
import { parseGraphText } from '../lib/graph/load-graph.js';
import { testSlots } from './helpers/test-slots.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(REPO, 'bin', 'platform');
const VERSION = (JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string }).version;
const ENV: NodeJS.ProcessEnv = { ...process.env, PLATFORM_IDLE_TIMEOUT: '30s', NO_COLOR: '1' };
delete ENV.PLATFORM_START_TIMEOUT;

/**
 * Two tests at a time: one test's processes mostly run one after another or wait (a probe timing out, a stopped
 * server), so a second test fills the other core (measured: 35-46 s against 60-65 s serial, on a loaded 2-core box).
 */
const slot = testSlots(2);

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the CLI; `stderr()` reads what it printed so far, `done` resolves when it exits. */
function runLive(cwd: string, args: string[], env: NodeJS.ProcessEnv = ENV): { stderr: () => string; done: Promise<Run> } {
  const child = spawn(process.execPath, [BIN, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<Run>((resolve, reject) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
  return { stderr: () => stderr, done };
}

function run(cwd: string, args: string[], env: NodeJS.ProcessEnv = ENV): Promise<Run> {
  return runLive(cwd, args, env).done;
}

/** A command that needs the server (and so auto-starts it). */
const PROBE = ['want', 'list', '--json'];

/** Live `platform serve` processes of this workspace, by command line: the ground truth for "how many servers". */
function serverPids(root: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let argv: string[];
    try {
      argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
    } catch {
      continue;
    }
    const pid = Number(entry);
    if (argv.includes('serve') && argv.includes(root) && argv.some((a) => a.endsWith('bin/platform')) && isPidAlive(pid)) pids.push(pid);
  }
  return pids;
}

async function killServers(root: string): Promise<void> {
  const pids = serverPids(root);
  for (const pid of pids) process.kill(pid, 'SIGTERM');
  const end = Date.now() + 5_000;
  while (pids.some(isPidAlive) && Date.now() < end) await sleep(20);
  for (const pid of pids.filter(isPidAlive)) process.kill(pid, 'SIGKILL');
}

/** A fresh temp dir (not a workspace yet), cleaned up with every server started in it. */
function tempDir(t: ExecutionContext): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'platform-daemon-')));
  t.teardown(async () => {
    await killServers(dir);
    rmSync(dir, { recursive: true, force: true });
  });
  return dir;
}

/**
 * One workspace made by the real `platform init` before the tests; each test gets a copy of it. init writes
 * nothing that names its directory, so a copy is what init would have made there, one node process cheaper.
 */
let template: string | undefined;
test.before(async (t) => {
  template = realpathSync(mkdtempSync(join(tmpdir(), 'platform-daemon-template-')));
  const r = await run(template, ['init']);
  t.is(r.code, 0, r.stderr);
});
test.after.always(() => {
  if (template) rmSync(template, { recursive: true, force: true });
});

async function workspace(t: ExecutionContext): Promise<string> {
  if (!template) throw new Error('the workspace template was not made (see test.before)');
  const root = tempDir(t);
  cpSync(template, root, { recursive: true });
  return root;
}

interface ServerJson {
  pid: number;
  port: number;
  started_at: string;
  workspace_root: string;
  version: string;
  token?: string;
}

/** The server.json as it is now; undefined while absent or half written (the fake server writes it in place). */
function serverJson(root: string): ServerJson | undefined {
  const path = join(root, '.platform', 'server.json');
  try {
    return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as ServerJson) : undefined;
  } catch {
    return undefined;
  }
}

function serverLog(root: string): string {
  const path = join(root, '.platform', 'server.log');
  return existsSync(path) ? readFileSync(path, 'utf8') : '';
}

const count = (text: string, re: RegExp): number => (text.match(new RegExp(re.source, 'g')) ?? []).length;

async function statusJson(t: ExecutionContext, cwd: string): Promise<{ running: boolean; pid: number; port: number; workspace_root: string; version: string; counts: Record<string, number> }> {
  const r = await run(cwd, ['status', '--json']);
  t.is(r.code, 0, `${r.stdout}\n${r.stderr}`);
  return JSON.parse(r.stdout);
}

test('init creates .platform/ with a .gitignore of * and a valid starter platform.json, and is idempotent', slot(async (t) => {
  const root = tempDir(t);
  const first = await run(root, ['init']);
  t.is(first.code, 0, first.stderr);
  t.regex(first.stdout, /Initialized platform workspace/);
  t.regex(first.stdout, /created\s+platform\.json/);
  t.regex(first.stdout, /Next: platform build /, 'made where the command runs: nothing to enter');
  t.is(readFileSync(join(root, '.platform', '.gitignore'), 'utf8'), '*\n');
  const graphText = readFileSync(join(root, 'platform.json'), 'utf8');
  const graph = parseGraphText(graphText, 'platform.json');
  t.true(graph.jobs.length >= 1);

  // Nothing is overwritten: the user's graph stays.
  writeFileSync(join(root, 'platform.json'), '{"jobs": []}\n');
  const again = await run(root, ['init', '--json']);
  t.is(again.code, 0, again.stderr);
  const result = JSON.parse(again.stdout) as { created: string[]; existing: string[] };
  t.deepEqual(result.created, []);
  t.deepEqual(result.existing.sort(), ['.platform/', '.platform/.gitignore', 'platform.json'].sort());
  t.is(readFileSync(join(root, 'platform.json'), 'utf8'), '{"jobs": []}\n');
  const human = await run(root, ['init']);
  t.regex(human.stdout, /Already a platform workspace/);

  // init <dir> and -C work too, and start no server.
  const other = join(root, 'other');
  const made = await run(root, ['init', 'other']);
  t.is(made.code, 0);
  t.regex(made.stdout, /Next: cd other && platform build /, 'a workspace made elsewhere is entered before its first build');
  t.true(existsSync(join(other, '.platform', '.gitignore')));
  // A workspace made deeper, its parents with it, says which one it shadows.
  const deep = await run(root, ['init', 'a/b/c']);
  t.is(deep.code, 0, deep.stderr);
  t.regex(deep.stdout, new RegExp(`inside the workspace ${root.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
  t.deepEqual(serverPids(root), []);
  t.deepEqual(serverPids(other), []);
}));

test('outside any workspace a command fails and suggests platform init', slot(async (t) => {
  const dir = tempDir(t);
  for (const args of [PROBE, ['status'], ['stop']]) {
    const r = await run(dir, args);
    t.is(r.code, 1, `${args.join(' ')}: ${r.stdout}`);
    t.regex(r.stderr, /No platform workspace/);
    t.regex(r.stderr, /platform init/);
  }
  t.false(existsSync(join(dir, '.platform')));
}));

test('status never starts a server: exit 3 and running false when none runs', slot(async (t) => {
  const root = await workspace(t);
  const r = await run(root, ['status']);
  t.is(r.code, 3);
  t.regex(r.stdout, /No server running/);
  const j = await run(root, ['status', '--json']);
  t.is(j.code, 3);
  t.is((JSON.parse(j.stdout) as { running: boolean }).running, false);
  await sleep(300);
  t.is(serverJson(root), undefined);
  t.deepEqual(serverPids(root), []);
}));

test('a command from a subdirectory auto-starts the server, server.json is right, the next command reuses it, stop ends it', slot(async (t) => {
  const root = await workspace(t);
  const sub = join(root, 'a', 'b');
  mkdirSync(sub, { recursive: true });
  const before = Date.now();

  const first = await run(sub, PROBE);
  t.is(first.code, 0, first.stderr);
  t.regex(first.stderr + first.stdout, /pid \d+|"pid"/);
  const info = serverJson(root);
  if (!info) return t.fail('no server.json after an auto-start');
  t.true(isPidAlive(info.pid));
  t.true(Number.isInteger(info.port) && info.port > 0);
  t.is(info.workspace_root, root);
  t.is(info.version, VERSION);
  const started = Date.parse(info.started_at);
  t.true(started >= before - 1000 && started <= Date.now(), info.started_at);
  t.deepEqual(serverPids(root), [info.pid]);
  const health = await fetch(`http://127.0.0.1:${info.port}/health`);
  t.is(await health.text(), 'OK');

  // Reuse: the same pid answers the next commands, from the root and from the subdirectory.
  const again = await run(root, PROBE);
  t.is(again.code, 0, again.stderr);
  const st = await statusJson(t, sub);
  t.true(st.running);
  t.is(st.pid, info.pid);
  t.is(st.port, info.port);
  t.is(st.workspace_root, root);
  t.is(st.version, VERSION);
  t.deepEqual(Object.keys(st.counts).sort(), ['job_runs', 'partitions', 'queued_commands', 'running_job_runs', 'wants']);
  t.is(serverJson(root)?.pid, info.pid);
  t.is(count(serverLog(root), /Listening on/), 1);

  const human = await run(sub, ['status']);
  t.is(human.code, 0);
  t.regex(human.stdout, new RegExp(`pid\\s+${info.pid}`));
  t.regex(human.stdout, /uptime/);

  const stop = await run(sub, ['stop']);
  t.is(stop.code, 0, stop.stderr);
  t.is(stop.stdout.trim(), `Stopped server (pid ${info.pid})`);
  t.false(isPidAlive(info.pid));
  t.false(existsSync(join(root, '.platform', 'server.json')));
  t.regex(serverLog(root), /Shutdown complete/);

  const again2 = await run(sub, ['stop']);
  t.is(again2.code, 0);
  t.regex(again2.stdout, /No server running/);
  t.is((await run(sub, ['status'])).code, 3);
}));

test('-C points at the workspace from outside it', slot(async (t) => {
  const root = await workspace(t);
  const elsewhere = tempDir(t);
  const r = await run(elsewhere, ['-C', root, 'start', '--json']);
  t.is(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout) as { started: boolean; pid: number; workspace_root: string };
  t.true(out.started);
  t.is(out.workspace_root, root);
  t.is(serverJson(root)?.pid, out.pid);
  const again = JSON.parse((await run(elsewhere, ['start', '--json', '-C', root])).stdout) as { started: boolean; pid: number };
  t.false(again.started);
  t.is(again.pid, out.pid);
  t.is((await run(elsewhere, ['-C', join(root, '.platform'), 'stop'])).stdout.trim(), `Stopped server (pid ${out.pid})`);
}));

test('a stale server.json with a dead pid is replaced', slot(async (t) => {
  const root = await workspace(t);
  writeFileSync(
    join(root, '.platform', 'server.json'),
    JSON.stringify({ pid: 999999, port: 1, started_at: new Date().toISOString(), workspace_root: root, version: VERSION }),
  );
  const st = await run(root, ['status']);
  t.is(st.code, 3);
  t.regex(st.stdout, /stale.*999999/);

  const r = await run(root, PROBE);
  t.is(r.code, 0, r.stderr);
  const info = serverJson(root);
  t.truthy(info);
  t.not(info?.pid, 999999);
  t.true(isPidAlive(info!.pid));
  t.deepEqual(serverPids(root), [info!.pid]);
}));

test('a server.json of another workspace is replaced, and its live pid is left alone', slot(async (t) => {
  const root = await workspace(t);
  // The pid is alive (this test process) but server.json says it serves another workspace: never signalled.
  writeFileSync(
    join(root, '.platform', 'server.json'),
    JSON.stringify({ pid: process.pid, port: 1, started_at: new Date().toISOString(), workspace_root: '/elsewhere', version: VERSION }),
  );
  const r = await run(root, PROBE);
  t.is(r.code, 0, r.stderr);
  const info = serverJson(root);
  t.not(info?.pid, process.pid);
  t.is(info?.workspace_root, root);
  t.deepEqual(serverPids(root), [info!.pid]);

  // A port that now answers for another workspace (server.json names a live server of workspace B) is not trusted either.
  const other = await workspace(t);
  t.is((await run(other, PROBE)).code, 0);
  const otherInfo = serverJson(other)!;
  await run(root, ['stop']);
  writeFileSync(join(root, '.platform', 'server.json'), JSON.stringify({ ...otherInfo, workspace_root: root }));
  const r2 = await run(root, ['start', '--json']);
  t.is(r2.code, 0, r2.stderr);
  const mine = serverJson(root)!;
  t.not(mine.pid, otherInfo.pid);
  t.true(isPidAlive(otherInfo.pid), "the other workspace's server is left running");
  t.deepEqual(serverPids(root), [mine.pid]);
}));

const FAKE_OLD_SERVER = `
import http from 'node:http';
import fs from 'node:fs';
const root = process.argv[2];
const file = root + '/.platform/server.json';
const srv = http.createServer((req, res) => {
  if (req.url === '/health') return res.end('OK');
  if (req.url === '/api/status') {
    res.setHeader('content-type', 'application/json');
    return res.end(JSON.stringify({ pid: process.pid, port: srv.address().port, started_at: new Date().toISOString(),
      uptime_seconds: 1, workspace_root: root, version: '0.0.1-old',
      counts: { wants: 0, job_runs: 0, partitions: 0, running_job_runs: 0, queued_commands: 0 } }));
  }
  res.statusCode = 404;
  res.end();
});
srv.listen(0, '127.0.0.1', () => {
  fs.writeFileSync(file, JSON.stringify({ pid: process.pid, port: srv.address().port,
    started_at: new Date().toISOString(), workspace_root: root, version: '0.0.1-old' }));
});
process.on('SIGTERM', () => { fs.rmSync(file, { force: true }); process.exit(0); });
`;

test('a workspace moved while its daemon runs: the next command stops that daemon (its jobs would run under the old path) and starts one; stop stops it', slot(async (t) => {
  if (!template) throw new Error('the workspace template was not made (see test.before)');
  const parent = tempDir(t);
  const [a, b, c] = ['a', 'b', 'c'].map((n) => join(parent, n)) as [string, string, string];
  for (const dir of [a, b, c]) t.teardown(() => killServers(dir));
  cpSync(template, a, { recursive: true });
  const first = await run(a, PROBE);
  t.is(first.code, 0, first.stderr);
  const old = serverJson(a)!;
  renameSync(a, b);

  const r = await run(b, PROBE);
  t.is(r.code, 0, r.stderr);
  t.true(r.stderr.includes(`stopping the workspace server pid ${old.pid}: it serves this workspace under the path it had when it started, ${a} (moved since)`), r.stderr);
  t.false(isPidAlive(old.pid), 'the daemon of the old path is stopped, not left holding the log');
  const now = serverJson(b)!;
  t.is(now.workspace_root, b);
  t.not(now.pid, old.pid);

  renameSync(b, c);
  const stop = await run(c, ['stop']);
  t.is(stop.code, 0, stop.stderr);
  t.regex(stop.stdout, new RegExp(`Stopped server \\(pid ${now.pid}\\)`));
  t.false(isPidAlive(now.pid));
  t.is(serverJson(c), undefined);
}));

test('a copy put at the path a workspace was moved from does not talk to the moved one\'s daemon: that daemon is stopped, the copy gets its own', slot(async (t) => {
  if (!template) throw new Error('the workspace template was not made (see test.before)');
  const parent = tempDir(t);
  const [a, moved] = [join(parent, 'a'), join(parent, 'a-old')];
  for (const dir of [a, moved]) t.teardown(() => killServers(dir));
  cpSync(template, a, { recursive: true });
  const first = await run(a, PROBE);
  t.is(first.code, 0, first.stderr);
  const old = serverJson(a)!;
  renameSync(a, moved);
  cpSync(moved, a, { recursive: true }); // server.json and all, as cp -a copies it
  const r = await run(a, PROBE);
  t.is(r.code, 0, r.stderr);
  t.true(r.stderr.includes(`stopping the workspace server pid ${old.pid}: it serves the .platform directory that was at this path when it started, moved away since`), r.stderr);
  t.false(isPidAlive(old.pid));
  const now = serverJson(a)!;
  t.not(now.pid, old.pid);
  t.is(now.workspace_root, a);
}));

test('a workspace reached through a link is served under its real path: the daemon is still found once the link is gone', slot(async (t) => {
  if (!template) throw new Error('the workspace template was not made (see test.before)');
  const parent = tempDir(t);
  const a = join(parent, 'a');
  t.teardown(() => killServers(a));
  cpSync(template, a, { recursive: true });
  const link = join(parent, 'link');
  symlinkSync(a, link);
  const r = await run(parent, ['-C', link, ...PROBE]);
  t.is(r.code, 0, r.stderr);
  const info = serverJson(a)!;
  t.is(info.workspace_root, a);
  rmSync(link);
  const s = await run(a, ['status', '--json']);
  t.is(s.code, 0, s.stderr);
  t.is((JSON.parse(s.stdout) as { pid: number }).pid, info.pid, 'the same daemon, found');
}));

test('stop --server-url signals only a platform serve of this machine: a server that names another pid is refused, and that pid lives', slot(async (t) => {
  const root = await workspace(t);
  // Any process of the user's (an editor, say) and a server that claims to be it: a tunnel to another machine's
  // daemon names a pid of that machine, which here is someone else.
  const bystander = spawn('sleep', ['60'], { stdio: 'ignore' });
  t.teardown(() => void bystander.kill('SIGKILL'));
  const liar = createServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ pid: bystander.pid, port: 1, started_at: new Date().toISOString(), uptime_seconds: 1, workspace_root: root, version: VERSION,
      counts: { wants: 0, job_runs: 0, partitions: 0, running_job_runs: 0, queued_commands: 0 } }));
  });
  await new Promise<void>((r) => liar.listen(0, '127.0.0.1', () => r()));
  t.teardown(() => new Promise<void>((done) => liar.close(() => done())));
  const { port } = liar.address() as { port: number };
  const r = await run(tempDir(t), ['--server-url', `http://127.0.0.1:${port}`, 'stop', '--timeout', '2s']);
  t.is(r.code, 1, r.stdout);
  t.regex(r.stderr, new RegExp(`says it is pid ${bystander.pid}, .*no such platform serve runs on this machine.*nothing was signalled`));
  await sleep(200);
  t.true(isPidAlive(bystander.pid!), 'the pid the server named was not signalled');
}));

test("this workspace's server of another version is stopped (SIGTERM) and replaced", slot(async (t) => {
  const root = await workspace(t);
  const script = join(root, 'fake-old-server.mjs');
  writeFileSync(script, FAKE_OLD_SERVER);
  const fake: ChildProcess = spawn(process.execPath, [script, root], { stdio: 'ignore' });
  t.teardown(() => void fake.kill('SIGKILL'));
  const exited = new Promise<number | null>((r) => fake.once('exit', (code) => r(code)));
  while (!serverJson(root)) await sleep(20);
  t.is(serverJson(root)?.pid, fake.pid);

  const r = await run(root, PROBE);
  t.is(r.code, 0, r.stderr);
  t.regex(r.stderr, /stopping the workspace server pid \d+: .*version 0\.0\.1-old/);
  t.is(await exited, 0, 'the old server got SIGTERM and shut down cleanly');
  const info = serverJson(root)!;
  t.not(info.pid, fake.pid);
  t.is(info.version, VERSION);
  t.deepEqual(serverPids(root), [info.pid]);
}));

test('a server that is alive but does not answer is waited for, never replaced: the same pid serves the command afterwards', slot(async (t) => {
  const root = await workspace(t);
  t.is((await run(root, ['start'])).code, 0);
  const info = serverJson(root)!;
  // Stopped, the server holds its port and its event log but answers nothing: as one stalled, or shutting down.
  process.kill(info.pid, 'SIGSTOP');
  t.teardown(() => {
    try {
      process.kill(info.pid, 'SIGCONT');
    } catch {
      // gone
    }
  });

  const st = await run(root, ['status']);
  t.is(st.code, 3);
  t.regex(st.stdout, new RegExp(`\\(pid ${info.pid}\\) does not answer`));
  t.deepEqual(serverJson(root), info);

  // Silent for the whole wait: a clear error; server.json stays and no second server starts.
  const err = await t.throwsAsync(connectServer({ workspace: root, unresponsiveWaitMs: 1_000, onWaiting: () => {} }));
  t.regex(err.message, new RegExp(`server pid ${info.pid} of this workspace does not answer`));
  t.true(err.message.includes(join(root, '.platform', 'server.log')), err.message);
  t.true(err.message.includes(`'platform stop' or 'kill ${info.pid}'`), err.message);
  t.deepEqual(serverJson(root), info);
  t.deepEqual(serverPids(root), [info.pid]);

  // A command waits for it; the server resumes within the wait and serves the command.
  const pending = runLive(root, PROBE);
  const end = Date.now() + 20_000;
  while (!pending.stderr().includes('does not answer') && Date.now() < end) await sleep(50);
  t.regex(pending.stderr(), new RegExp(`the workspace server \\(pid ${info.pid}\\) does not answer .*waiting up to 40 s`));
  t.deepEqual(serverJson(root), info, 'server.json is left alone while waiting');
  process.kill(info.pid, 'SIGCONT');
  const r = await pending.done;
  t.is(r.code, 0, r.stderr);
  t.notRegex(r.stderr, /started the workspace server/);
  t.deepEqual(serverJson(root), info);
  t.deepEqual(serverPids(root), [info.pid]);
  t.is((await statusJson(t, root)).pid, info.pid);
  const log = serverLog(root);
  t.is(count(log, /starting the server/), 1, log);
  t.is(count(log, /Listening on/), 1, log);
}));

test('concurrent commands that all need the server leave exactly one server', slot(async (t) => {
  const root = await workspace(t);
  const sub = join(root, 'sub');
  mkdirSync(sub);
  const runs = await Promise.all([
    run(root, ['start', '--json']),
    run(sub, ['start', '--json']),
    run(root, ['start', '--json']),
    run(root, PROBE),
    run(sub, PROBE),
    run(root, PROBE),
  ]);
  for (const r of runs) t.is(r.code, 0, r.stderr);
  const starts = runs.slice(0, 3).map((r) => JSON.parse(r.stdout) as { pid: number; started: boolean });
  const info = serverJson(root)!;
  t.deepEqual(
    starts.map((s) => s.pid),
    [info.pid, info.pid, info.pid],
  );
  t.true(starts.filter((s) => s.started).length <= 1);
  t.deepEqual(serverPids(root), [info.pid]);
  const log = serverLog(root);
  t.is(count(log, /starting the server/), 1, log);
  t.is(count(log, /Listening on/), 1, log);
  t.false(existsSync(join(root, '.platform', 'daemon.lock')), 'the lock is released');
}));

test('the temps of server.json and server-starting.json a killed daemon left are removed by the next start; a live writer\'s is left', slot(async (t) => {
  const root = await workspace(t);
  // What a daemon SIGKILLed between its write and its rename leaves: `<file>.<its pid>.tmp`. Its pid is a real
  // process's that has exited; the live writer is this test's process, as a daemon caught mid-write would be.
  const dead = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  const deadPid = await new Promise<number>((resolve) => dead.once('exit', () => resolve(dead.pid!)));
  t.false(isPidAlive(deadPid));
  const dir = join(root, '.platform');
  const deadTemps = [`server.json.${deadPid}.tmp`, `server-starting.json.${deadPid}.tmp`];
  const liveTemps = [`server.json.${process.pid}.tmp`, `server-starting.json.${process.pid}.tmp`];
  // A minute and more ago (a fresh one may be a writer's in another pid namespace, where its pid looks dead here).
  const fresh = `server.json.${deadPid + 1_000_000}.tmp`;
  for (const name of [...deadTemps, ...liveTemps, fresh]) writeFileSync(join(dir, name), '{"pid": 1, "half written');
  const old = new Date(Date.now() - 120_000);
  for (const name of [...deadTemps, ...liveTemps]) utimesSync(join(dir, name), old, old);

  const r = await run(root, PROBE);
  t.is(r.code, 0, r.stderr);
  t.true(isPidAlive(serverJson(root)!.pid), 'the start went on');
  const left = readdirSync(dir).filter((n) => n.endsWith('.tmp'));
  t.deepEqual(left.sort(), [...liveTemps, fresh].sort(), 'the dead writer\'s stale temps are gone; the live writer\'s, and a fresh one, are left');
  for (const name of liveTemps) t.is(readFileSync(join(dir, name), 'utf8'), '{"pid": 1, "half written', `${name} untouched`);
}));

test('a lock left by a dead client does not block the start', slot(async (t) => {
  const root = await workspace(t);
  writeFileSync(join(root, '.platform', 'daemon.lock'), JSON.stringify({ pid: 999999, token: 'dead', created_at: new Date().toISOString() }));
  const r = await run(root, PROBE);
  t.is(r.code, 0, r.stderr);
  t.is(serverPids(root).length, 1);
  t.false(existsSync(join(root, '.platform', 'daemon.lock')));
}));

test('a server that cannot start gives a clear error pointing at server.log', slot(async (t) => {
  const root = await workspace(t);
  writeFileSync(join(root, 'platform.json'), '{"jobs": [ {"label": "x"} ]}');
  const r = await run(root, PROBE);
  t.is(r.code, 1);
  t.regex(r.stderr, /exited with code 1 before it was ready/);
  t.regex(r.stderr, /server\.log/);
  t.regex(r.stderr, /jobs\[0\]/, 'the last lines of the log name the problem');
  t.is(serverJson(root), undefined);
  t.false(existsSync(join(root, '.platform', 'daemon.lock')));
}));

test('the starter graph builds through the auto-started server, which only its owner gets into', slot(async (t) => {
  const root = await workspace(t);
  const r = await run(root, ['start', '--json']);
  t.is(r.code, 0, r.stderr);
  const { port } = JSON.parse(r.stdout) as { port: number };
  const base = `http://127.0.0.1:${port}`;
  // Only the owner reads the token: .platform/ is 0700, server.json 0600.
  t.is(statSync(join(root, '.platform')).mode & 0o777, 0o700);
  t.is(statSync(join(root, '.platform', 'server.json')).mode & 0o777, 0o600);
  const token = serverJson(root)?.token ?? '';
  t.true(token.length >= 32, 'server.json holds a token');
  const want = JSON.stringify({ partitions: ['loud_greeting/date=2026-01-05'] });
  const without = await fetch(`${base}/api/wants`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: want });
  t.is(without.status, 401, 'no token, no entry');
  t.regex(((await without.json()) as { error: string }).error, /requires its token.*Authorization: Bearer/);
  t.is((await fetch(`${base}/api/wants`, { headers: { authorization: 'Bearer not-the-token' } })).status, 401);
  t.is((await fetch(`${base}/health`)).status, 200, '/health needs no token');
  const auth = { authorization: `Bearer ${token}` };
  const foreign = await fetch(`${base}/api/wants`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json', origin: 'https://evil.example' }, body: want });
  t.is(foreign.status, 403, 'a write from another origin is refused, token or not');
  const res = await fetch(`${base}/api/wants`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: want });
  t.is(res.status, 201);
  const { want_id } = (await res.json()) as { want_id: string };
  let status = '';
  for (let i = 0; i < 800 && !['successful', 'failed', 'upstream_failed'].includes(status); i++) {
    await sleep(25);
    status = ((await (await fetch(`${base}/api/wants/${want_id}`, { headers: auth })).json()) as { status: string }).status;
  }
  t.is(status, 'successful');
  t.is(readFileSync(join(root, 'data', 'greeting', '2026-01-05.txt'), 'utf8').trim(), 'hello, world of 2026-01-05');
  t.is(readFileSync(join(root, 'data', 'loud_greeting', '2026-01-05.txt'), 'utf8').trim(), 'HELLO, WORLD OF 2026-01-05');
  const st = await statusJson(t, root);
  t.true(st.counts.wants >= 1);
  t.is(st.counts.partitions, 2);
  t.is(st.counts.job_runs, 2);
  t.is(st.counts.running_job_runs, 0);
}));

test('--server-url naming the workspace daemon sends its token; elsewhere the 401 says --server-url sent none and what to do', slot(async (t) => {
  const root = await workspace(t);
  const r = await run(root, ['start', '--json']);
  t.is(r.code, 0, r.stderr);
  const { port } = JSON.parse(r.stdout) as { port: number };
  // In the workspace (or with -C), its own daemon's URL is talked to as the discovered daemon is: with its token.
  for (const url of [`http://127.0.0.1:${port}`, `http://localhost:${port}/`]) {
    const inside = await run(root, ['--server-url', url, 'want', 'list', '--json']);
    t.is(inside.code, 0, inside.stderr);
    t.is((JSON.parse(inside.stdout) as { total: number }).total, 0);
  }
  const outside = tempDir(t);
  const withC = await run(outside, ['-C', root, '--server-url', `http://127.0.0.1:${port}`, 'want', 'list', '--json']);
  t.is(withC.code, 0, withC.stderr);
  const status = await run(root, ['--server-url', `http://127.0.0.1:${port}`, 'status', '--json']);
  t.is(status.code, 0, status.stderr);
  t.is((JSON.parse(status.stdout) as { port: number }).port, port);
  // Outside any workspace there is no token to send: the refusal says so, and how to get in, not that the CLI sent it.
  const bare = await run(outside, ['--server-url', `http://127.0.0.1:${port}`, 'want', 'list']);
  t.is(bare.code, 1);
  t.regex(bare.stderr, /requires its token, and --server-url sent none: .*-C <workspace>/);
  t.notRegex(bare.stderr, /The platform CLI sends it for you/);
  const json = await run(outside, ['--server-url', `http://127.0.0.1:${port}`, '--json', 'want', 'list']);
  t.is(json.code, 1);
  const body = JSON.parse(json.stderr.trim().split('\n').at(-1) ?? '') as { status: number; error: string };
  t.is(body.status, 401);
  t.regex(body.error, /--server-url sent none/);
  // status and stop said "No server answers at <url>" (and stop exited 0, "nothing to stop") of a server that answers.
  for (const args of [['status'], ['stop']]) {
    const r = await run(outside, ['--server-url', `http://127.0.0.1:${port}`, ...args]);
    t.is(r.code, 1, `${args[0]}: ${r.stdout}${r.stderr}`);
    t.regex(r.stderr, /requires its token, and --server-url sent none/);
    t.notRegex(r.stdout, /No server answers/);
  }
  t.true(isPidAlive(serverJson(root)?.pid ?? 0), 'not stopped without its token');
  const stop = await run(outside, ['-C', root, '--server-url', `http://127.0.0.1:${port}`, 'stop']);
  t.is(stop.code, 0, stop.stderr);
  t.regex(stop.stdout, /Stopped server/);
}));

test('status and stop --server-url at a server that is no platform daemon say so and exit 1, not "no server answers"', slot(async (t) => {
  const outside = tempDir(t);
  const other = createServer((_req, res) => res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>not here</h1>'));
  await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => other.close(() => resolve())));
  const url = `http://127.0.0.1:${(other.address() as { port: number }).port}`;
  for (const args of [['status'], ['stop'], ['--json', 'stop']]) {
    const r = await run(outside, ['--server-url', url, ...args]);
    t.is(r.code, 1, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
    t.regex(r.stderr, new RegExp(`The server at ${url} is not a platform daemon \\(GET ${url}/api/status answered 404\\); check --server-url`));
    t.notRegex(r.stdout, /No server answers|nothing to stop/);
  }
}));

test('--server-url sends the token only to 127.0.0.1: localhost is talked to there, [::1] (where anyone may listen on the port) gets none', slot(async (t) => {
  const root = await workspace(t);
  const r = await run(root, ['start', '--json']);
  t.is(r.code, 0, r.stderr);
  const { port } = JSON.parse(r.stdout) as { port: number };
  // Another local user's server on ::1 at the daemon's port number: it must never see the token.
  const heard: Array<string | undefined> = [];
  const impostor = createServer((req, res) => {
    heard.push(req.headers.authorization);
    res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"token required"}');
  });
  const listening = await new Promise<boolean>((resolve) => {
    impostor.once('error', () => resolve(false));
    impostor.listen(port, '::1', () => resolve(true));
  });
  if (!listening) {
    t.log('IPv6 loopback (::1) is not available here: only the 127.0.0.1 half of this test ran');
  } else {
    t.teardown(() => new Promise<void>((done) => impostor.close(() => done())));
  }
  const viaLocalhost = await run(root, ['--server-url', `http://localhost:${port}`, 'want', 'list', '--json']);
  t.is(viaLocalhost.code, 0, viaLocalhost.stderr);
  if (listening) {
    const viaV6 = await run(root, ['--server-url', `http://[::1]:${port}`, 'want', 'list']);
    t.is(viaV6.code, 1);
    t.regex(viaV6.stderr, /--server-url sent none/);
    t.true(heard.length > 0, 'the [::1] server was asked');
    t.deepEqual(heard.filter((h) => h !== undefined), [], 'and never given the token');
  }
}));

test("'platform start' with --server-url naming the workspace's daemon reads its status with the token, as status and stop do", slot(async (t) => {
  const root = await workspace(t);
  const r = await run(root, ['start', '--json']);
  t.is(r.code, 0, r.stderr);
  const { port, pid } = JSON.parse(r.stdout) as { port: number; pid: number };
  for (const url of [`http://127.0.0.1:${port}`, `http://localhost:${port}`]) {
    const again = await run(root, ['--server-url', url, 'start', '--json']);
    t.is(again.code, 0, `${url}: ${again.stderr}`);
    const body = JSON.parse(again.stdout) as { started: boolean; pid: number; port: number };
    t.false(body.started);
    t.is(body.pid, pid);
    t.is(body.port, port);
  }
  const text = await run(root, ['--server-url', `http://127.0.0.1:${port}`, 'start']);
  t.is(text.code, 0, text.stderr);
  t.regex(text.stdout, /^Server already running \(pid \d+, port \d+\)/);
  // Outside the workspace there is no token to send: the refusal says what to do, as the other commands' does.
  const outside = await run(tempDir(t), ['--server-url', `http://127.0.0.1:${port}`, 'start']);
  t.is(outside.code, 1);
  t.regex(outside.stderr, /requires its token, and --server-url sent none: .*-C <workspace>/);
}));

test('serve removes server.json on SIGTERM and exits 0', slot(async (t) => {
  const root = await workspace(t);
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '-C', root], { cwd: root, env: ENV, stdio: ['ignore', 'pipe', 'pipe'] });
  t.teardown(() => void child.kill('SIGKILL'));
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const end = Date.now() + 15_000;
  while (!serverJson(root) && Date.now() < end) await sleep(20);
  const info = serverJson(root);
  t.truthy(child.pid);
  t.is(info?.pid, child.pid);
  t.is(info?.workspace_root, root);
  // A client finds and trusts a server started by hand, too.
  const st = await statusJson(t, root);
  t.is(st.pid, child.pid!);

  child.kill('SIGTERM');
  t.is(await exited, 0);
  t.false(existsSync(join(root, '.platform', 'server.json')));
  t.regex(out, /Shutdown complete/);
}));


test('two concurrent builds from a subdirectory auto-start one server and exit 0 once the partitions exist', slot(async (t) => {
  const root = await workspace(t);
  const sub = join(root, 'nested', 'dir');
  mkdirSync(sub, { recursive: true });
  const [a, b] = await Promise.all([
    run(sub, ['build', 'loud_greeting/date=2026-02-01']),
    run(root, ['build', 'greeting/date=2026-02-01', 'greeting/date=2026-02-02']),
  ]);
  t.is(a.code, 0, `${a.stdout}\n${a.stderr}`);
  t.is(b.code, 0, `${b.stdout}\n${b.stderr}`);
  t.is(readFileSync(join(root, 'data', 'loud_greeting', '2026-02-01.txt'), 'utf8').trim(), 'HELLO, WORLD OF 2026-02-01');
  t.true(existsSync(join(root, 'data', 'greeting', '2026-02-02.txt')));
  const info = serverJson(root)!;
  t.deepEqual(serverPids(root), [info.pid]);
  t.is(count(serverLog(root), /Listening on/), 1);
}));
