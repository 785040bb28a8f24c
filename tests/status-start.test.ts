/**
 * Where a daemon's state came from at start, as `GET /api/status` and `platform status` (table and --json) say it:
 * a real `platform serve` (the bundle) on a temp workspace, on its fresh log, after a clean stop (`platform stop`),
 * after kill -9 with events past the snapshot, and with its snapshot gone. Answers are held to the OpenAPI document.
 */
import test, { type ExecutionContext } from 'ava';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ServerStatus, StateStart } from '../lib/api/server-status.js';
import { SNAPSHOT_MIN_NEW_EVENTS } from '../lib/state/state-store.js';
import { checkedResponse } from './helpers/contract.js';
import { makeWorkspace, poll } from './helpers/jobs-fixture.js';
import { serveSubprocess } from './helpers/serve-subprocess.js';

const BIN = join(fileURLToPath(new URL('../../', import.meta.url)), 'bin', 'platform');

// Schedules that tick once a year: a pause or a resume is one event each, and nothing else is recorded meanwhile.
const SCHEDULES = Array.from({ length: 8 }, (_, i) => `s${i}`);
const GRAPH = {
  jobs: [{ label: 'ok', outputs: ['ok/(?<n>.+)'], exec: ['true'] }],
  schedules: SCHEDULES.map((name) => ({ name, cron: '0 0 1 1 *', partitions: [`ok/${name}-\${year}`] })),
};

async function json<T>(url: string, init?: RequestInit): Promise<T> {
  const res = await checkedResponse(init?.method ?? 'GET', url, await fetch(url, init));
  if (!res.ok) throw new Error(`${init?.method ?? 'GET'} ${url}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

const latestId = async (url: string) => (await json<{ latest_id: number }>(`${url}/api/events?limit=1`)).latest_id;

/** `rounds` pauses and resumes of every schedule: 2 × rounds × 8 events, one a request. */
async function toggle(url: string, rounds: number): Promise<void> {
  const post = (path: string) => json(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  await Promise.all(
    SCHEDULES.map(async (name) => {
      for (let i = 0; i < rounds; i++) {
        await post(`/api/schedules/${name}/pause`);
        await post(`/api/schedules/${name}/resume`);
      }
    }),
  );
}

/** The real CLI on the workspace (it finds the daemon by its server.json), to its end. */
function cli(t: ExecutionContext, dir: string, ...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [BIN, '-C', dir, ...args], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  t.teardown(() => void (child.exitCode === null && child.kill('SIGKILL')));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

/** What the API, `platform status --json` and the table say of the start; they must agree. */
async function startSaid(t: ExecutionContext, dir: string, url: string): Promise<{ start: StateStart; line: string }> {
  const { start } = await json<ServerStatus>(`${url}/api/status`);
  const asJson = await cli(t, dir, '--json', 'status');
  t.is(asJson.code, 0, asJson.stderr);
  t.deepEqual((JSON.parse(asJson.stdout) as ServerStatus).start, start);
  const table = await cli(t, dir, 'status');
  t.is(table.code, 0, table.stderr);
  const line = /^ {2}state {6}(.*)$/m.exec(table.stdout)?.[1] ?? `no state line in:\n${table.stdout}`;
  t.true(Number.isInteger(start.duration_ms) && start.duration_ms >= 0);
  t.true(line.endsWith(` in ${start.duration_ms} ms`) || (start.duration_ms >= 1000 && / in \d+\.\d s$/.test(line)), line);
  return { start, line };
}

test('status says where the state came from: the log when fresh, the snapshot after a clean stop, the snapshot and the events after it after kill -9', async (t) => {
  t.timeout(120_000);
  const dir = makeWorkspace(t);
  writeFileSync(join(dir, 'platform.json'), JSON.stringify(GRAPH));
  const snapshot = join(dir, '.platform', 'snapshot.bin');

  // A fresh workspace: nothing to read but an empty log.
  const first = await serveSubprocess(t, dir);
  const fresh = await startSaid(t, dir, first.url);
  t.like(fresh.start, { source: 'log', at_event: 0, events_replayed: 0, snapshot_unused: 'missing' });
  t.regex(fresh.line, /^0 events of the log replayed \(no snapshot used: there is none\), in /);

  // Enough events for a clean stop to write a snapshot, then `platform stop`.
  await toggle(first.url, Math.ceil(SNAPSHOT_MIN_NEW_EVENTS / (2 * SCHEDULES.length)));
  const beforeStop = await latestId(first.url);
  t.true(beforeStop >= SNAPSHOT_MIN_NEW_EVENTS);
  const stop = await cli(t, dir, 'stop');
  t.is(stop.code, 0, stop.stderr);
  t.true(existsSync(snapshot), 'a clean stop wrote the snapshot');

  // Started after the clean stop: the snapshot holds every event, none is replayed.
  const second = await serveSubprocess(t, dir);
  const clean = await startSaid(t, dir, second.url);
  t.deepEqual({ ...clean.start, duration_ms: 0 }, { source: 'snapshot', at_event: beforeStop, events_replayed: 0, duration_ms: 0, snapshot_unused: null, snapshot_delta: null, snapshot_other_version: false });
  t.regex(clean.line, new RegExp(`^from the snapshot at event ${beforeStop.toLocaleString('en-US')}, then 0 events of the log replayed, in `));

  // Events past the snapshot, then kill -9: the next start reads the same snapshot and replays exactly those.
  await toggle(second.url, 1);
  const beforeKill = await latestId(second.url);
  t.is(beforeKill - beforeStop, 2 * SCHEDULES.length);
  await second.kill9();
  const third = await serveSubprocess(t, dir);
  const crashed = await startSaid(t, dir, third.url);
  t.deepEqual(
    { ...crashed.start, duration_ms: 0 },
    { source: 'snapshot', at_event: beforeStop, events_replayed: beforeKill - beforeStop, duration_ms: 0, snapshot_unused: null, snapshot_delta: null, snapshot_other_version: false },
  );
  t.regex(crashed.line, new RegExp(`^from the snapshot at event ${beforeStop.toLocaleString('en-US')}, then ${beforeKill - beforeStop} events of the log replayed, in `));
  // /metrics says the same.
  const metrics = await (await fetch(`${third.url}/metrics`)).text();
  t.regex(metrics, /^platform_start_state_source\{source="snapshot"\} 1$/m);
  t.regex(metrics, new RegExp(`^platform_start_events_replayed ${beforeKill - beforeStop}$`, 'm'));
  t.regex(metrics, /^platform_start_state_duration_seconds \d+(\.\d+)?(e-\d+)?$/m);
  const beforeLast = await latestId(third.url);
  await third.kill9();

  // The snapshot cut short (a disk that filled, a copy interrupted): the whole log is replayed, and status says why.
  truncateSync(snapshot, Math.floor(statSync(snapshot).size / 2));
  const fourth = await serveSubprocess(t, dir);
  const damaged = await startSaid(t, dir, fourth.url);
  t.like(damaged.start, { source: 'log', at_event: 0, events_replayed: beforeLast });
  t.is(damaged.start.snapshot_unused, 'cut short');
  t.true(damaged.line.includes(`(no snapshot used: ${damaged.start.snapshot_unused}), in `), damaged.line);
  await fourth.kill9();

  // The snapshot gone: none to use.
  rmSync(snapshot, { force: true });
  const fifth = await serveSubprocess(t, dir);
  const replayed = await startSaid(t, dir, fifth.url);
  t.like(replayed.start, { source: 'log', at_event: 0, events_replayed: beforeLast, snapshot_unused: 'missing' });
  await fifth.kill9();
});

test('status says when the state came from the snapshot and its delta, and why a delta was not used', async (t) => {
  t.timeout(120_000);
  const dir = makeWorkspace(t);
  writeFileSync(join(dir, 'platform.json'), JSON.stringify(GRAPH));
  const delta = join(dir, '.platform', 'snapshot-delta.bin');
  const rounds = Math.ceil(SNAPSHOT_MIN_NEW_EVENTS / (2 * SCHEDULES.length));

  // The first clean stop writes an image; the next, started from it, writes only what changed since: a delta.
  const first = await serveSubprocess(t, dir);
  await toggle(first.url, rounds);
  const imageAt = await latestId(first.url);
  t.is((await cli(t, dir, 'stop')).code, 0);
  t.false(existsSync(delta), 'no delta without an image to be of');
  const second = await serveSubprocess(t, dir);
  await toggle(second.url, rounds);
  const deltaAt = await latestId(second.url);
  t.is((await cli(t, dir, 'stop')).code, 0);
  t.true(existsSync(delta), 'the second clean stop wrote a delta');

  const third = await serveSubprocess(t, dir);
  const both = await startSaid(t, dir, third.url);
  t.deepEqual(
    { ...both.start, duration_ms: 0 },
    { source: 'snapshot', at_event: deltaAt, events_replayed: 0, duration_ms: 0, snapshot_unused: null, snapshot_delta: { image_at_event: imageAt, at_event: deltaAt, unused: null }, snapshot_other_version: false },
  );
  const n = (id: number) => id.toLocaleString('en-US');
  t.regex(both.line, new RegExp(`^from the snapshot \\(at event ${n(imageAt)}\\) and its delta at event ${n(deltaAt)}, then 0 events of the log replayed, in `));
  await third.kill9();

  // The delta changed in place: not trusted; the image and the events after it are read instead.
  const bytes = readFileSync(delta);
  bytes[bytes.length - 40] ^= 0xff;
  writeFileSync(delta, bytes);
  const fourth = await serveSubprocess(t, dir);
  const damaged = await startSaid(t, dir, fourth.url);
  t.like(damaged.start, { source: 'snapshot', at_event: imageAt, events_replayed: deltaAt - imageAt, snapshot_unused: null });
  t.deepEqual(damaged.start.snapshot_delta, { image_at_event: imageAt, at_event: null, unused: 'damaged' });
  t.regex(damaged.line, new RegExp(`^from the snapshot \\(its delta not used: damaged\\) at event ${n(imageAt)}, then ${n(deltaAt - imageAt)} events of the log replayed`));
  await fourth.kill9();
});

test('after an upgrade (a snapshot of another version), its records are read and every index built again: status says so, the state reads the same, and an image of this version is written at once', async (t) => {
  t.timeout(120_000);
  const dir = makeWorkspace(t);
  writeFileSync(join(dir, 'platform.json'), JSON.stringify(GRAPH));
  const snapshot = join(dir, '.platform', 'snapshot.bin');
  const first = await serveSubprocess(t, dir);
  const post = (body: unknown) => json<{ want_id: string }>(`${first.url}/api/wants`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const wants = await Promise.all(['a', 'b', 'c'].map((n) => post({ partitions: [`ok/${n}`] })));
  for (const w of wants) {
    t.true(await poll(async () => (await json<{ status: string }>(`${first.url}/api/wants/${w.want_id}`)).status === 'successful', 20_000), w.want_id);
  }
  await toggle(first.url, Math.ceil(SNAPSHOT_MIN_NEW_EVENTS / (2 * SCHEDULES.length)));
  const reads = ['/api/wants?limit=100', '/api/partitions?limit=100', '/api/job_runs?limit=100', '/api/schedules'];
  const before = await Promise.all(reads.map((path) => json<unknown>(`${first.url}${path}`)));
  const beforeStop = await latestId(first.url);
  t.is((await cli(t, dir, 'stop')).code, 0);

  // As the version before an upgrade wrote it: its header names another version (the records below are untouched).
  const data = readFileSync(snapshot);
  const eol = data.indexOf(0x0a);
  const header = JSON.parse(data.subarray(0, eol).toString('utf8')) as { version: string; records_format?: number };
  t.is(typeof header.records_format, 'number', 'an image says the format of its records');
  writeFileSync(snapshot, Buffer.concat([Buffer.from(JSON.stringify({ ...header, version: 'a-platform-before-the-upgrade' })), data.subarray(eol)]));
  // The doctor says what a start will make of it.
  const doctor = await cli(t, dir, '--json', 'doctor');
  const finding = (JSON.parse(doctor.stdout) as { checks: Array<{ check: string; status: string; detail: string }> }).checks.find((c) => c.check === 'snapshot');
  t.is(finding?.status, 'ok', doctor.stdout);
  t.regex(finding?.detail ?? '', /written by another version of platform: a start reads its records and builds every index again/);

  const second = await serveSubprocess(t, dir);
  const upgraded = await startSaid(t, dir, second.url);
  t.deepEqual(
    { ...upgraded.start, duration_ms: 0 },
    { source: 'snapshot', at_event: beforeStop, events_replayed: 0, duration_ms: 0, snapshot_unused: null, snapshot_delta: null, snapshot_other_version: true },
  );
  t.regex(upgraded.line, new RegExp(`^from the snapshot's records \\(written by another version of platform\\) at event ${beforeStop.toLocaleString('en-US')}, then 0 events of the log replayed, in `));
  t.deepEqual(await Promise.all(reads.map((path) => json<unknown>(`${second.url}${path}`))), before);
  // Its own image follows at once, so the next start (a kill -9 here) reads an image again.
  const versionOnDisk = () => (JSON.parse(readFileSync(snapshot).subarray(0, readFileSync(snapshot).indexOf(0x0a)).toString('utf8')) as { version: string }).version;
  t.true(await poll(() => versionOnDisk() !== 'a-platform-before-the-upgrade', 20_000), 'an image of this version was written');
  await second.kill9();
  const third = await serveSubprocess(t, dir);
  const after = await startSaid(t, dir, third.url);
  t.like(after.start, { source: 'snapshot', at_event: beforeStop, events_replayed: 0, snapshot_other_version: false });
  await third.kill9();
});
