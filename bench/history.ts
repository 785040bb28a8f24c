/**
 * Issue 13's goals 4 and 5 through a real daemon (`platform serve` as a subprocess, HTTP from here):
 * - many waiting wants: N wants posted by 16 clients, each waiting on one long-running input (a backfill behind a
 *   slow upstream load): intake per slice of wants, read latency on the waiting daemon, restart after kill -9;
 * - a long history: a log of 1,000,000 events (250,000 wants, each queued, started and built: the events a daemon
 *   writes for them, appended straight to the event log), then the daemon on it: first start (a full replay),
 *   `GET /api/wants/:id` and a page of 100, restart after kill -9 (from the background snapshot, and at the worst moment:
 *   a snapshot's worth of events less one after it), resident memory;
 *   then `retention.events_keep` (a tenth of the events) applied by `POST /api/gc`: how long it takes, the event
 *   log's size on disk before and after, and a restart after kill -9 from the compaction base alone.
 */
import { cpSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { EventPayload } from '../lib/events/build-event.js';
import { EventLog } from '../lib/events/event-log.js';
import { deltaPathOf, readSnapshotHeader } from '../lib/state/snapshot-file.js';
import { DELTAS_AN_IMAGE, SNAPSHOT_EVERY_EVENTS } from '../lib/state/state-store.js';
import { kill, serve } from './serve-process.js';
import { get, postWant } from './http-client.js';
import { haveWrk, wrkLatency, wrkPostWants, type WrkLatency } from './wrk.js';

export interface WaitingFigures {
  /** How many were posted (wrk posts for a time, so a few more than asked). */
  wants: number;
  /** Who posted them: wrk where installed, as for goal 2's intake (so the two compare), else node's http client. */
  client: 'wrk' | 'node http';
  /** Wants/s in each slice of the run, a tenth of the wants each (flat means no step costs the waiting wants). */
  intakeBySlice: number[];
  read: Percentiles;
  /** The same by wrk (one connection), where installed. */
  readWrk: WrkLatency | undefined;
  /**
   * By wrk once the daemon settled (no snapshot being written, after `waitedMs`), with `/health` on it: what the
   * goal compares, the reads of a daemon otherwise idle and the floor of a request on it.
   */
  settled: { get: WrkLatency; health: WrkLatency; waitedMs: number } | undefined;
  restartMs: number;
}

export interface HistoryFigures {
  events: number;
  wants: number;
  firstStartMs: number;
  /** A start after an upgrade: the snapshot of another version, its records read (not the log replayed). */
  upgradeStartMs: number;
  /** The first requests after the restart, before any other: what a user right after it meets. */
  firstGets: Percentiles;
  get: Percentiles;
  page: Percentiles;
  /** `GET /health` the same way: the floor of a request on this machine (HTTP, the client, the loop). */
  health: Percentiles;
  /** The same three by wrk (one connection, a C client: no node client's cost or collections in them), where installed. */
  wrk: { get: WrkLatency; page: WrkLatency; health: WrkLatency } | undefined;
  restartMs: number;
  /**
   * Restart after kill -9 at the worst moment: just before the next image is due. The image as above; then the
   * deltas' share of an image's interval but one (`deltaEvents`, three quarters) written as a delta by a daemon
   * (`deltaMs` after it answered, `deltaMiB` on disk); then one event short of the next delta (`tailEvents`, a quarter)
   * appended after it. The start loads the image, sets the delta on it and replays the tail.
   */
  worstRestart: { deltaEvents: number; deltaMs: number; deltaMiB: number; tailEvents: number; ms: number };
  rssMiB: number;
  /** The longest the event loop was held while the first start wrote its snapshot in the background. */
  snapshotLoopMaxMs: number;
  compaction: CompactionFigures;
}

export interface CompactionFigures {
  keep: number;
  gcMs: number;
  belMiBBefore: number;
  belMiBAfter: number;
  baseMiB: number;
  /** Restart after kill -9 with only the compaction base (no snapshot.bin): the worst a compacted log starts. */
  restartMs: number;
}

/** Bytes of the files in a directory (LevelDB's is flat). */
export function dirMiB(dir: string): number {
  let bytes = 0;
  for (const name of readdirSync(dir)) bytes += statSync(join(dir, name)).size;
  return bytes / 1024 / 1024;
}

export interface Percentiles {
  p50: number;
  p99: number;
}

async function timedGets(url: string, paths: () => string, n: number): Promise<Percentiles> {
  const ms: number[] = [];
  for (let i = 0; i < n; i++) {
    const path = paths();
    const t0 = performance.now();
    await get(url, path);
    ms.push(performance.now() - t0);
  }
  ms.sort((a, b) => a - b);
  return { p50: ms[Math.floor(n * 0.5)]!, p99: ms[Math.min(n - 1, Math.floor(n * 0.99))]! };
}

export async function waitingBench(root: string, wants: number): Promise<WaitingFigures> {
  const dir = join(root, 'waiting');
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'platform.json'),
    JSON.stringify({
      jobs: [
        { label: 'upstream', outputs: ['upstream'], exec: ['sleep', '600'] },
        { label: 'down', outputs: ['down/(?<n>[\\d-]+)'], inputs: [{ partition_ref: 'upstream', dep_type: 'MATERIALIZE' }], exec: ['true'] },
      ],
    }),
  );
  let { url, child } = await serve(dir);
  const intakeBySlice: number[] = [];
  try {
    const client: WaitingFigures['client'] = haveWrk() ? 'wrk' : 'node http';
    const posted = client === 'wrk' ? wrkSlices(dir, url, wants, intakeBySlice) : await nodeSlices(url, wants, intakeBySlice);
    const last = await lastWant(url);
    // Every id up to the highest is a want (those posted or the ones they derived).
    const pick = () => `/api/wants/w-${1 + Math.floor(Math.random() * last)}`;
    const read = await timedGets(url, pick, 300);
    const seconds = wants >= 50_000 ? 4 : 1;
    const readWrk = haveWrk() ? wrkLatency(dir, url, `"/api/wants/w-" .. math.random(1, ${last})`, seconds) : undefined;
    let settled: WaitingFigures['settled'];
    if (haveWrk()) {
      const waitedMs = await snapshotsSettled(url);
      settled = { get: wrkLatency(dir, url, `"/api/wants/w-" .. math.random(1, ${last})`, seconds), health: wrkLatency(dir, url, '"/health"', seconds), waitedMs };
    }
    await kill(child, 'SIGKILL');
    const again = await serve(dir);
    ({ url, child } = again);
    return { wants: posted, client, intakeBySlice, read, readWrk, settled, restartMs: again.startedMs };
  } finally {
    // The long upstream run would outlive the daemon by design: stop it with its runs canceled (`stop --cancel-runs`).
    await kill(child, 'SIGUSR2').catch(() => undefined);
  }
}

/**
 * How long a daemon takes to answer on a copy of the workspace `dir` (no daemon on it) whose snapshot was written by
 * another version of platform, as after an upgrade; throws unless its start says it read the snapshot's records.
 */
async function startAfterUpgrade(dir: string, copy: string): Promise<number> {
  cpSync(dir, copy, { recursive: true });
  const snapshot = join(copy, '.platform', 'snapshot.bin');
  const data = readFileSync(snapshot);
  const eol = data.indexOf(0x0a);
  const header = JSON.parse(data.subarray(0, eol).toString('utf8')) as Record<string, unknown>;
  writeFileSync(snapshot, Buffer.concat([Buffer.from(JSON.stringify({ ...header, version: 'before-the-upgrade' })), data.subarray(eol)]));
  const upgraded = await serve(copy);
  try {
    const { start } = (await (await fetch(`${upgraded.url}/api/status`)).json()) as { start: { snapshot_other_version?: boolean; events_replayed: number } };
    if (start.snapshot_other_version !== true) throw new Error(`the start after an upgrade did not read the snapshot's records: ${JSON.stringify(start)}`);
    return upgraded.startedMs;
  } finally {
    await kill(upgraded.child, 'SIGKILL');
    rmSync(copy, { recursive: true, force: true });
  }
}

/** Waits (at most 5 minutes) until the daemon has written no snapshot for a second (its /metrics); how long it waited. */
async function snapshotsSettled(url: string): Promise<number> {
  const t0 = performance.now();
  let quietSince: number | undefined;
  while (performance.now() - t0 < 300_000) {
    const writing = /^platform_snapshot_writing (\S+)$/m.exec(await get(url, '/metrics'))?.[1];
    const now = performance.now();
    if (writing !== '0') quietSince = undefined;
    else if (quietSince === undefined) quietSince = now;
    else if (now - quietSince >= 1_000) return now - t0;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the waiting daemon was still writing snapshots after 5 minutes');
}

/**
 * 16 connections of wrk post wants for distinct partitions, in slices of about a tenth of `wants` (timed at 5,000
 * wants/s: wrk runs for a duration, not a count) until `wants` were accepted; each slice's rate is pushed on `rates`.
 * Returns how many were posted.
 */
function wrkSlices(dir: string, url: string, wants: number, rates: number[]): number {
  const seconds = Math.max(1, Math.round(wants / 10 / 5000));
  let sent = 0;
  for (let slice = 0; sent < wants; slice++) {
    const { perSecond, sent: n } = wrkPostWants(dir, url, `down/${slice}-`, { connections: 16, seconds });
    rates.push(perSecond);
    sent += n;
  }
  return sent;
}

/** 16 node clients post `wants` wants; the rate of each tenth is pushed on `rates`. Returns how many were posted. */
async function nodeSlices(url: string, wants: number, rates: number[]): Promise<number> {
  const slice = Math.max(1, Math.floor(wants / 10));
  let next = 0;
  let done = 0;
  let mark = 0;
  let t0 = performance.now();
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < wants) {
        const n = next++;
        await postWant(url, { partitions: [`down/${n}`] });
        if (++done - mark >= slice) {
          const t = performance.now();
          rates.push(((done - mark) / (t - t0)) * 1000);
          mark = done;
          t0 = t;
        }
      }
    }),
  );
  return wants;
}

/** How many wants the daemon made: the number of the last (want ids are w-1, w-2, ...). */
async function lastWant(url: string): Promise<number> {
  const total = (JSON.parse(await get(url, '/api/wants?limit=1')) as { total: number }).total;
  if (!(total > 0)) throw new Error(`the daemon lists ${total} wants after the intake`);
  return total;
}

/** The events a daemon writes for one-partition wants built by a one-output job: created, queued, started, built. */
export function wantEvents(i: number, ref = `hist/${i}`): EventPayload[] {
  const want_id = `w-${i}`;
  const job_run_id = `r-${i}`;
  return [
    {
      type: 'want_created',
      want_created: {
        want_id, partitions: [ref], comment: '', data_timestamp: 0, ttl_seconds: 0, sla_seconds: 0, source: 'user', parent_want_id: '',
        root_want_id: want_id, rebuild: 'missing', priority: 0, backfill_id: '', max_concurrent_job_runs: 0, pattern: '', schedule_tick: 0,
      },
    },
    {
      type: 'job_run_queued',
      job_run_queued: {
        job_run_id, job_label: 'hist', config: { outputs: [ref], inputs: [], args: [], env: {} }, want_ids: [want_id], attempt: 1,
        exec: ['true'], timeout_seconds: 0, input_builds: [], job_fingerprint: '', output_inputs: [], retry_of: '',
      },
    },
    { type: 'job_run_started', job_run_started: { job_run_id, pid: 1, worker: 'local', started_at: 0 } },
    { type: 'job_run_succeeded', job_run_succeeded: { job_run_id, builds: [{ partition_ref: ref, build_id: `b-${i}` }], ended_at: 0 } },
  ];
}

export async function historyBench(root: string, wants: number): Promise<HistoryFigures> {
  const dir = join(root, 'history');
  mkdirSync(dir, { recursive: true });
  const jobs = [{ label: 'hist', outputs: ['hist/(?<n>\\d+)'], exec: ['true'] }];
  writeFileSync(join(dir, 'platform.json'), JSON.stringify({ jobs }));
  const events = await appendWants(dir, 1, wants);
  let { url, child, startedMs: firstStartMs } = await serve(dir);
  try {
    // The first start found no snapshot: it replayed everything and now writes one in the background. How long
    // that held the loop (what a request or a step waited at worst): the daemon's loop-delay monitor, which each
    // scrape of /metrics starts again (the snapshot began as the daemon opened: what it held before this first
    // scrape, while the server started, is not in the figure).
    await loopHeldMaxMs(url);
    const snapshot = join(dir, '.platform', 'snapshot.bin');
    await snapshotReaches(snapshot, events);
    const snapshotLoopMaxMs = await loopHeldMaxMs(url);
    await kill(child, 'SIGKILL');
    const again = await serve(dir);
    ({ url, child } = again);
    const oneWant = () => `/api/wants/w-${1 + Math.floor(Math.random() * wants)}`;
    const aPage = () => `/api/wants?limit=100&offset=${Math.floor(Math.random() * (wants - 100))}`;
    const firstGets = await timedGets(url, oneWant, 200);
    // Then steady reads, each kind warmed up first (JIT), and the floor of any request in the same minute.
    await timedGets(url, aPage, 100);
    const get = await timedGets(url, oneWant, 2000);
    const page = await timedGets(url, aPage, 500);
    const health = await timedGets(url, () => '/health', 2000);
    const seconds = wants >= 50_000 ? 4 : 1;
    const wrk = haveWrk()
      ? {
          get: wrkLatency(dir, url, `"/api/wants/w-" .. math.random(1, ${wants})`, seconds),
          page: wrkLatency(dir, url, `"/api/wants?limit=100&offset=" .. math.random(0, ${wants - 100})`, seconds),
          health: wrkLatency(dir, url, '"/health"', seconds),
        }
      : undefined;
    const rssMiB = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

    // The worst moment for a kill -9: the next image is due at SNAPSHOT_EVERY_EVENTS after the last, and a delta of
    // what changed since is written every DELTAS_AN_IMAGE-th of that (state-store.ts). So the state at worst is the
    // image, a delta of three quarters of an interval, and a quarter less one event after it. The delta is written by
    // a daemon that replays those three quarters (appended while none ran: a start that replays that many writes
    // one at once); the quarter is appended while none runs, each event replayed by the timed start. On a copy of the
    // workspace, so the figures after it are of the million events alone.
    await kill(child, 'SIGKILL');
    const worstDir = join(root, 'history-worst');
    cpSync(dir, worstDir, { recursive: true });
    const quarter = Math.floor(SNAPSHOT_EVERY_EVENTS / DELTAS_AN_IMAGE / 4);
    const deltaAt = await appendWants(worstDir, wants + 1, wants + (DELTAS_AN_IMAGE - 1) * quarter);
    const writer = await serve(worstDir);
    const answered = performance.now();
    const delta = deltaPathOf(join(worstDir, '.platform', 'snapshot.bin'));
    await snapshotReaches(delta, deltaAt);
    const deltaMs = performance.now() - answered;
    await kill(writer.child, 'SIGKILL');
    const deltaMiB = statSync(delta).size / 1024 / 1024;
    const tailEvents = (await appendWants(worstDir, wants + (DELTAS_AN_IMAGE - 1) * quarter + 1, wants + DELTAS_AN_IMAGE * quarter - 1)) - deltaAt;
    const worst = await serve(worstDir);
    const worstStart = (await (await fetch(`${worst.url}/api/status`)).json()) as { start: { snapshot_delta: { at_event: number | null } | null } };
    await kill(worst.child, 'SIGKILL');
    rmSync(worstDir, { recursive: true, force: true });
    // Else the figure would be of a replay from the image, not of what it is said to be.
    if (worstStart.start.snapshot_delta?.at_event !== deltaAt) throw new Error(`the worst-moment start did not use the delta at ${deltaAt}: ${JSON.stringify(worstStart.start)}`);
    const worstRestart = { deltaEvents: deltaAt - events, deltaMs, deltaMiB, tailEvents, ms: worst.startedMs };

    // After an upgrade that changed the state code: the snapshot is of another version, its records are read and every
    // index built again (image-records.ts). On a copy whose image's header names another version.
    const upgradeStartMs = await startAfterUpgrade(dir, join(root, 'history-upgrade'));

    // Retention: a tenth of the events kept, applied at once by gc (the daemon would within the hour).
    const keep = Math.floor(events / 10);
    writeFileSync(join(dir, 'platform.json'), JSON.stringify({ retention: { events_keep: keep }, jobs }));
    const bel = join(dir, '.platform', 'bel');
    const belMiBBefore = dirMiB(bel);
    ({ url, child } = await serve(dir));
    const t0 = performance.now();
    const gc = await fetch(`${url}/api/gc`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    if (!gc.ok) throw new Error(`POST /api/gc answered ${gc.status}: ${await gc.text()}`);
    const gcMs = performance.now() - t0;
    const belMiBAfter = dirMiB(bel);
    const baseMiB = statSync(join(dir, '.platform', 'compacted.bin')).size / 1024 / 1024;
    await kill(child, 'SIGKILL');
    rmSync(snapshot, { force: true });
    const compacted = await serve(dir);
    ({ url, child } = compacted);
    const compaction = { keep, gcMs, belMiBBefore, belMiBAfter, baseMiB, restartMs: compacted.startedMs };
    return { events, wants, firstStartMs, upgradeStartMs, firstGets, get, page, health, wrk, restartMs: again.startedMs, worstRestart, rssMiB, snapshotLoopMaxMs, compaction };
  } finally {
    await kill(child, 'SIGTERM').catch(() => undefined);
  }
}

/** Resolves once the daemon wrote a snapshot holding event `id`; a daemon that writes none in 5 minutes fails the bench. */
async function snapshotReaches(path: string, id: number): Promise<void> {
  for (let i = 0; ; i++) {
    // Else the restart timed next would be a replay, not what it is said to measure.
    if (i === 6000) throw new Error(`platform serve wrote no snapshot of the ${id} events in 5 minutes`);
    // The header alone: reading the whole file (130 MB here) every 50 ms took a core from the daemon it times.
    const header = await readSnapshotHeader(path);
    if (header && header.last_event_id >= id) return;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Appends the events of wants `from..to` (`wantEvents`) straight to the workspace's log, a millisecond a batch ending
 * about now and never before the log's last event; resolves with its last id.
 */
export async function appendWants(dir: string, from: number, to: number): Promise<number> {
  const log = await EventLog.open(join(dir, '.platform', 'bel'));
  try {
    const last = log.latestId() > 0 ? ((await log.get(log.latestId()))?.timestamp ?? 0) : 0;
    const t = Math.max(Date.now() - (to - from), last + 1);
    for (let i = from; i <= to; i += 500) {
      const batch: EventPayload[] = [];
      for (let k = i; k < Math.min(to + 1, i + 500); k++) batch.push(...wantEvents(k));
      await log.append(batch, t + (i - from), { sync: false });
    }
    return log.latestId();
  } finally {
    await log.close();
  }
}

/**
 * The longest the daemon's event loop was held since the last scrape of /metrics (prom-client's loop-delay monitor,
 * 10 ms resolution, started again by each scrape).
 */
async function loopHeldMaxMs(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const m = /^nodejs_eventloop_lag_max_seconds (\S+)$/m.exec(text);
  if (!m) throw new Error('/metrics has no nodejs_eventloop_lag_max_seconds');
  return Number(m[1]) * 1000;
}
