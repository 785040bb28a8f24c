/**
 * A daemon that replays a long log at its start (after an upgrade, or with its snapshot gone) is waited for as long as
 * it goes on, and shown: the CLI that started it says how far it got and does not give up at PLATFORM_START_TIMEOUT
 * while the replay moves; `platform status` says it is starting, not that no server runs; a command run while it
 * starts waits for it rather than start a second daemon; `platform stop` stops it there (its replay ended where it
 * is); news left by a daemon killed while it started misleads nobody; news that cannot be written does not stop a
 * start. The real CLI as a subprocess, the real daemon it starts (the bundle), real LevelDB logs written beforehand.
 * Serial, and no larger than they must be: a replay takes a core, and other files' tests that time their requests
 * share the machine.
 */
import test from 'ava';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { EventPayload } from '../lib/events/build-event.js';
import { EventLog } from '../lib/events/event-log.js';
import { readServerInfo } from '../lib/client/server-info.js';
import { readStartingInfo } from '../lib/client/server-starting.js';
import { wantEvents } from '../bench/history.js';
import { isPidAlive, killAtTeardown, makeWorkspace } from './helpers/jobs-fixture.js';

const BIN = join(fileURLToPath(new URL('../../', import.meta.url)), 'bin', 'platform');

function cli(dir: string, env: Record<string, string>, ...args: string[]) {
  const child = spawn(process.execPath, [BIN, '-C', dir, ...args], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1', ...env } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
  return Object.assign(done, { child });
}

async function longLog(dir: string, wants: number): Promise<void> {
  writeFileSync(join(dir, 'platform.json'), JSON.stringify({ jobs: [{ label: 'hist', outputs: ['hist/(?<n>\\d+)'], exec: ['true'] }] }));
  const log = await EventLog.open(join(dir, '.platform', 'bel'));
  for (let i = 1; i <= wants; i += 500) {
    const batch: EventPayload[] = [];
    for (let k = i; k < Math.min(wants + 1, i + 500); k++) batch.push(...wantEvents(k));
    await log.append(batch, Date.now(), { sync: false });
  }
  await log.close();
}

test.serial('a command run while a daemon replays (the CLI that started it interrupted) waits for it, not start a second one', async (t) => {
  t.timeout(240_000);
  const dir = makeWorkspace(t);
  const wants = 40_000; // 160,000 events
  await longLog(dir, wants);
  const env = { PLATFORM_START_TIMEOUT: '3s', PLATFORM_IDLE_TIMEOUT: '5m' };
  const first = cli(dir, env, 'want', 'list', '--json');
  killAtTeardown(t, () => [readServerInfo(dir)?.pid ?? 0, daemonPid]);
  let daemonPid = 0;
  for (let i = 0; i < 2000 && !daemonPid; i++) {
    daemonPid = readStartingInfo(dir)?.pid ?? 0;
    if (!daemonPid) await new Promise((r) => setTimeout(r, 20));
  }
  t.true(daemonPid > 0, 'the daemon said it was replaying');
  // The user presses Ctrl-C on the first command (the daemon is detached: it goes on replaying).
  first.child.kill('SIGINT');
  await first;
  const status = await cli(dir, {}, 'status');
  t.log(status.stdout.trim());
  const second = await cli(dir, env, 'want', 'list', '--json');
  t.is(second.code, 0, second.stderr);
  if (second.code === 0) t.is((JSON.parse(second.stdout) as { total: number }).total, wants);
  await cli(dir, {}, 'stop');
});

test('news naming a live pid that is no daemon (a pid reused) is cleared by the next daemon, and status does not say starting', async (t) => {
  t.timeout(60_000);
  const dir = makeWorkspace(t);
  writeFileSync(join(dir, 'platform.json'), JSON.stringify({ jobs: [] }));
  // A daemon killed mid-replay whose pid now belongs to another process.
  const other = spawn('sleep', ['60'], { stdio: 'ignore' });
  t.teardown(() => other.kill('SIGKILL'));
  const info = { pid: other.pid!, started_at: new Date().toISOString(), events_replayed: 10, events_to_replay: 1000, snapshot_unused: null };
  writeFileSync(join(dir, '.platform', 'server-starting.json'), JSON.stringify(info));
  const start = await cli(dir, { PLATFORM_IDLE_TIMEOUT: '5m' }, 'start');
  killAtTeardown(t, () => [readServerInfo(dir)?.pid ?? 0]);
  t.is(start.code, 0, start.stderr);
  t.false(existsSync(join(dir, '.platform', 'server-starting.json')), 'the daemon that opened the log cleared news that is not its own');
  t.is((await cli(dir, {}, 'stop')).code, 0);
  const status = await cli(dir, {}, 'status');
  t.regex(status.stdout, /^No server running for /, status.stdout);
});

test.serial('a start whose progress news cannot be written still starts (the news is advisory)', async (t) => {
  t.timeout(120_000);
  const dir = makeWorkspace(t);
  await longLog(dir, 5_000); // 20,000 events: its news is written as it begins
  // Something the daemon cannot rename its news onto (standing in for a full disk, ENOSPC).
  mkdirSync(join(dir, '.platform', 'server-starting.json', 'x'), { recursive: true });
  const start = await cli(dir, { PLATFORM_IDLE_TIMEOUT: '5m', PLATFORM_START_TIMEOUT: '60s' }, 'start');
  killAtTeardown(t, () => [readServerInfo(dir)?.pid ?? 0]);
  t.is(start.code, 0, start.stderr);
  await cli(dir, {}, 'stop');
});


test.serial('a start that replays a long log is waited for while it goes on, and said: by the CLI that started it, and by status', async (t) => {
  t.timeout(180_000);
  const dir = makeWorkspace(t);
  // 40,000 built wants (160,000 events), as a daemon writes them, and no snapshot: the next start replays them all.
  const wants = 40_000;
  await longLog(dir, wants);
  const events = wants * 4;

  // A start timeout shorter than the replay: the wait goes on as long as the replay moves. Not shorter than loading the
  // daemon's code takes on a busy machine (before its replay says how far it got): 1 s failed a CI run under load.
  const env = { PLATFORM_START_TIMEOUT: '3s', PLATFORM_IDLE_TIMEOUT: '5m' };
  const listing = cli(dir, env, 'want', 'list', '--json');
  // The daemon it starts, listening or still starting (it writes server.json only once it listens).
  killAtTeardown(t, () => [readServerInfo(dir)?.pid ?? readStartingInfo(dir)?.pid ?? 0]);
  // Meanwhile, status says it is starting and how far it got (it never starts one itself).
  let saidStarting = '';
  for (let i = 0; i < 600 && saidStarting === '' && readServerInfo(dir) === undefined; i++) {
    const st = await cli(dir, {}, 'status');
    if (/is starting, replaying its event log/.test(st.stdout)) saidStarting = st.stdout;
    else await new Promise((r) => setTimeout(r, 50));
  }
  const listed = await listing;
  t.is(listed.code, 0, listed.stderr);
  t.is((JSON.parse(listed.stdout) as { total: number }).total, wants);
  // Not a terminal here: its first line, then one every 10 s.
  t.regex(listed.stderr, /platform: the workspace server is starting, replaying its event log \(no snapshot used: there is none\): [\d,]+ of [\d,]+ events/);
  t.regex(listed.stderr, /platform: started the workspace server/);
  t.regex(saidStarting, new RegExp(`is starting, replaying its event log \\(no snapshot used: there is none\\): [\\d,]+ of ${events.toLocaleString('en-US')} events\\. Commands wait for it\\.`));
  const stop = await cli(dir, {}, 'stop');
  t.is(stop.code, 0, stop.stderr);
});

test('a daemon killed while it started leaves its news: status does not take it for a start, and the next daemon clears it', async (t) => {
  const dir = makeWorkspace(t);
  writeFileSync(join(dir, 'platform.json'), JSON.stringify({ jobs: [] }));
  // The pid of a process that has ended.
  const gone = spawn(process.execPath, ['-e', '0']);
  await new Promise((r) => gone.once('exit', r));
  const info = { pid: gone.pid!, started_at: new Date().toISOString(), events_replayed: 10, events_to_replay: 1000, snapshot_unused: null };
  writeFileSync(join(dir, '.platform', 'server-starting.json'), JSON.stringify(info));
  const status = await cli(dir, {}, 'status');
  t.is(status.code, 3);
  t.regex(status.stdout, /^No server running for /);
  const start = await cli(dir, { PLATFORM_IDLE_TIMEOUT: '5m' }, 'start');
  killAtTeardown(t, () => [readServerInfo(dir)?.pid ?? 0]);
  t.is(start.code, 0, start.stderr);
  t.false(existsSync(join(dir, '.platform', 'server-starting.json')), "the next daemon removed the dead one's news");
  t.is((await cli(dir, {}, 'stop')).code, 0);
});

test.serial('on a terminal, the replay is one line kept current, ended before the next line begins', async (t) => {
  // A terminal for the CLI: script(1) of util-linux gives it a pseudo-terminal.
  if (spawnSync('sh', ['-c', 'command -v script'], { stdio: 'ignore' }).status !== 0) return t.pass('script(1) is not installed here: no terminal to test on');
  const dir = makeWorkspace(t);
  await longLog(dir, 25_000);
  killAtTeardown(t, () => [readServerInfo(dir)?.pid ?? readStartingInfo(dir)?.pid ?? 0]);
  const command = [process.execPath, BIN, '-C', dir, 'want', 'list', '--limit', '1'].map((w) => `'${w}'`).join(' ');
  const r = spawnSync('script', ['-qc', command, '/dev/null'], { encoding: 'utf8', env: { ...process.env, PLATFORM_START_TIMEOUT: '10s', PLATFORM_IDLE_TIMEOUT: '5m' } });
  t.is(r.status, 0, r.stdout);
  // Each news rewrites the line (carriage return, erase); the last one ends with a newline before "started".
  t.regex(r.stdout, /\r\x1b\[Kplatform: the workspace server is starting, replaying its event log \(no snapshot used: there is none\): [\d,]+ of 100,000 events\r?\nplatform: started the workspace server/);
  t.is((await cli(dir, {}, 'stop')).code, 0);
});

/** The pid of the daemon once it says it replays (its news names events to replay); 0 if it never does. */
async function replayingPid(dir: string): Promise<number> {
  for (let i = 0; i < 2000; i++) {
    const news = readStartingInfo(dir);
    if (news && news.events_to_replay > 0) return news.pid;
    await new Promise((r) => setTimeout(r, 20));
  }
  return 0;
}

test.serial('stop stops a daemon that is starting (replaying a long log): it ends its replay where it is, and goes; --json too', async (t) => {
  t.timeout(180_000);
  const dir = makeWorkspace(t);
  await longLog(dir, 40_000); // 160,000 events, no snapshot: each start replays them all
  const env = { PLATFORM_START_TIMEOUT: '60s', PLATFORM_IDLE_TIMEOUT: '5m' };
  let daemonPid = 0;
  killAtTeardown(t, () => [readServerInfo(dir)?.pid ?? 0, daemonPid]);

  for (const json of [false, true]) {
    const starting = cli(dir, env, 'start');
    daemonPid = await replayingPid(dir);
    t.true(daemonPid > 0, 'the daemon said it was replaying');
    const stop = await cli(dir, {}, 'stop', ...(json ? ['--json'] : []));
    t.is(stop.code, 0, stop.stderr);
    if (json) {
      const said = JSON.parse(stop.stdout) as { stopped: boolean; pid: number; while_starting: boolean; starting: { events_to_replay: number } };
      t.like(said, { stopped: true, pid: daemonPid, while_starting: true });
      t.is(said.starting.events_to_replay, 160_000);
    } else {
      t.regex(stop.stdout, new RegExp(`^Stopped server \\(pid ${daemonPid}\\) while it was starting, replaying its event log \\(no snapshot used: there is none\\): [\\d,]+ of 160,000 events\\n$`));
    }
    // stop waited for it: gone when stop returns, and nothing of it left to say it runs or starts.
    t.false(isPidAlive(daemonPid), 'the daemon is gone when stop returns');
    t.is(readServerInfo(dir), undefined);
    t.false(existsSync(join(dir, '.platform', 'server-starting.json')));
    // It went from its replay, not after it: it never listened.
    const log = readFileSync(join(dir, '.platform', 'server.log'), 'utf8');
    t.regex(log, /platform: stopped by SIGTERM while starting, after [\d,]+ of 160,000 events of its replay/);
    t.notRegex(log, /Listening on/);
    // The command that started it says it was stopped and the command not carried out, not that it failed to start.
    const started = await starting;
    t.is(started.code, 75, 'EX_TEMPFAIL: run it again');
    t.regex(started.stderr, /was stopped while it started \(platform stop, or a signal\), so this command was not carried out; run it again/);
    const status = await cli(dir, {}, 'status');
    t.is(status.code, 3, status.stdout);
    t.regex(status.stdout, /^No server running for /);
  }
});

/** The pid of a `platform serve` of `dir` (by its command line), once one runs; 0 if none comes. */
async function servePid(dir: string): Promise<number> {
  for (let i = 0; i < 1000; i++) {
    for (const p of readdirSync('/proc')) {
      if (!/^\d+$/.test(p)) continue;
      try {
        const args = readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0');
        if (args.includes('serve') && args.includes(dir)) return Number(p);
      } catch {
        // Gone meanwhile.
      }
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  return 0;
}

test.serial('stop right after a command spawned the daemon (before it could say it starts) stops it, cleanly: it never listens', async (t) => {
  if (!existsSync('/proc/self/cmdline')) return t.pass('no /proc here to find the daemon by');
  const dir = makeWorkspace(t);
  writeFileSync(join(dir, 'platform.json'), JSON.stringify({ jobs: [{ label: 'a', outputs: ['a/(?<n>\\d+)'], exec: ['true'] }] }));
  // The daemon's node held 1.5 s before it runs any of platform's code: a slow machine's load, made certain.
  const hold = join(dir, 'hold.cjs');
  writeFileSync(hold, "if (process.argv.includes('serve')) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1500);\n");
  const starting = cli(dir, { NODE_OPTIONS: `--require ${hold}`, PLATFORM_IDLE_TIMEOUT: '5m', PLATFORM_START_TIMEOUT: '60s' }, 'start');
  let daemonPid = 0;
  killAtTeardown(t, () => [readServerInfo(dir)?.pid ?? 0, daemonPid]);
  daemonPid = await servePid(dir);
  t.true(daemonPid > 0, 'the daemon was spawned');
  const stop = await cli(dir, {}, 'stop', '--json');
  t.is(stop.code, 0, stop.stderr);
  t.like(JSON.parse(stop.stdout), { stopped: true, pid: daemonPid, while_starting: true });
  t.false(isPidAlive(daemonPid), 'the daemon is gone when stop returns');
  t.is(readServerInfo(dir), undefined);
  t.false(existsSync(join(dir, '.platform', 'server-starting.json')));
  // It went through its own shutdown (not killed by the signal mid-load), and never listened.
  const log = readFileSync(join(dir, '.platform', 'server.log'), 'utf8');
  t.regex(log, /platform: stopped by SIGTERM while starting, before it listened/);
  t.notRegex(log, /Listening on/);
  const started = await starting;
  t.is(started.code, 75, started.stderr);
  t.regex(started.stderr, /was stopped while it started \(platform stop, or a signal\), so this command was not carried out/);
});

test('a daemon that reads a large snapshot is said to: status names how far its read got', async (t) => {
  t.timeout(60_000);
  const dir = makeWorkspace(t);
  writeFileSync(join(dir, 'platform.json'), JSON.stringify({ jobs: [] }));
  // A start under way, as a daemon reading its snapshot writes it (a `serve` process of this pid).
  const fake = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)', 'serve'], { stdio: 'ignore' });
  t.teardown(() => fake.kill('SIGKILL'));
  const info = { pid: fake.pid!, started_at: new Date().toISOString(), events_replayed: 0, events_to_replay: 0, snapshot_unused: null, snapshot_bytes_read: 12_300_000, snapshot_bytes: 55_000_000 };
  writeFileSync(join(dir, '.platform', 'server-starting.json'), JSON.stringify(info));
  const status = await cli(dir, {}, 'status');
  t.regex(status.stdout, new RegExp(`\\(pid ${fake.pid}\\) is starting, reading its snapshot: 12\\.3 of 55\\.0 MB\\. Commands wait for it\\.`), status.stdout + status.stderr);
  const json = await cli(dir, {}, '--json', 'status');
  t.like((JSON.parse(json.stdout) as { starting: object }).starting, { snapshot_bytes_read: 12_300_000, snapshot_bytes: 55_000_000 });
  // Read whole, then decoded.
  writeFileSync(join(dir, '.platform', 'server-starting.json'), JSON.stringify({ ...info, snapshot_bytes_read: 55_000_000, snapshot_bytes_decoded: 20_100_000 }));
  t.regex((await cli(dir, {}, 'status')).stdout, /is starting, reading its snapshot \(55\.0 MB\): 20\.1 MB decoded\. Commands wait for it\./);
  // Of another version (after an upgrade): its records made into this version's, then the state's indexes built.
  const decoded = { ...info, snapshot_bytes_read: 55_000_000, snapshot_bytes_decoded: 55_000_000 };
  writeFileSync(join(dir, '.platform', 'server-starting.json'), JSON.stringify({ ...decoded, snapshot_records_read: 250_000, snapshot_records: 1_000_000 }));
  t.regex((await cli(dir, {}, 'status')).stdout, /is starting, reading its snapshot's records \(55\.0 MB\): 250,000 of 1,000,000\. Commands wait for it\./);
  writeFileSync(join(dir, '.platform', 'server-starting.json'), JSON.stringify({ ...decoded, snapshot_records_read: 1_000_000, snapshot_records: 1_000_000, snapshot_indexes_built: 7, snapshot_indexes: 15 }));
  t.regex((await cli(dir, {}, 'status')).stdout, /is starting, building its state from its snapshot's records \(55\.0 MB\): 7 of 15 steps\. Commands wait for it\./);
  const indexes = await cli(dir, {}, '--json', 'status');
  t.like((JSON.parse(indexes.stdout) as { starting: object }).starting, { snapshot_indexes_built: 7, snapshot_indexes: 15, snapshot_records: 1_000_000 });
});
