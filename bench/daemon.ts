/**
 * Issue 13's figures through a real daemon (`platform serve` as a subprocess, HTTP from here):
 * - DAG overhead: N trivial jobs (`true`; raw -> daily pairs) from one want, against GNU make -j2 on the same DAG;
 * - scheduling latency: want acknowledged -> job process started (the job writes its start time), on an idle daemon;
 * - want intake: wants acknowledged per second from 16 concurrent clients, with every run queued behind a busy
 *   executor (one slot, held by a long job), so intake is measured apart from spawning.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { kill, serve } from './serve-process.js';
import { get, postWant } from './http-client.js';
import { haveWrk, wrkPostWants } from './wrk.js';
import { breakdown, readDaemon, type Breakdown } from './daemon-breakdown.js';

export interface IntakeFigures {
  wants: number;
  clients: number;
  perSecond: number;
  client: 'wrk' | 'node http';
  breakdown: Breakdown;
}

export interface DaemonFigures {
  latency: { p50: number; p99: number; samples: number };
  /** `client`: wrk where installed, else node's http (which takes a share of the two cores). */
  intake: IntakeFigures;
  /** The same while every want's run starts and ends as they come. */
  intakeBuilding: IntakeFigures;
}

/**
 * Polls the want every `everyMs`. A poll costs the daemon CPU the build would otherwise have: every 5 ms took a
 * quarter more time for 400 jobs (3.1-3.4 s polling every 100 ms, 4.1-4.2 s every 5 ms, in one measurement), so the
 * DAG is polled every 25 ms (at most 25 ms late on seconds), the latency probe, which reads the job's own clock, often.
 */
async function until(url: string, wantId: string, status = 'successful', everyMs = 25): Promise<void> {
  for (;;) {
    const s = (JSON.parse(await get(url, `/api/wants/${wantId}`)) as { status: string }).status;
    if (s === status) return;
    if (['failed', 'canceled', 'upstream_failed'].includes(s)) throw new Error(`want ${wantId} ${s}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

export async function dag(root: string, jobs: number, withMake: boolean): Promise<{ jobs: number; platformMs: number; makeMs: number | undefined }> {
  const pairs = jobs / 2;
  const dir = join(root, `dag-${jobs}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'platform.json'),
    JSON.stringify({
      max_concurrent_job_runs: 2,
      jobs: [
        { label: 'raw', outputs: ['raw/(?<d>\\d+)'], exec: ['true'] },
        { label: 'daily', outputs: ['daily/(?<d>\\d+)'], inputs: [{ partition_ref: 'raw/${d}', dep_type: 'MATERIALIZE' }], exec: ['true'] },
      ],
    }),
  );
  const { url, child } = await serve(dir);
  let platformMs: number;
  try {
    const t0 = performance.now();
    const { want_id } = await postWant(url, { partitions: Array.from({ length: pairs }, (_, i) => `daily/${i}`) });
    // The want's view lists its partitions with their statuses (~0.5 us each on the daemon's loop, plus the JSON): a
    // poll every 25 ms of a 5,000-partition want took ~10% of the loop. Polled as often as its size allows: every
    // 25 ms up to 2,500 partitions, 100 ms at 10,000 jobs (half of that on average to see the end, of ~10 s).
    await until(url, want_id, 'successful', Math.min(100, Math.max(25, pairs / 50)));
    platformMs = performance.now() - t0;
  } finally {
    await kill(child, 'SIGTERM');
  }
  let makeMs: number | undefined;
  if (withMake) {
    const mdir = join(root, `make-${jobs}`);
    mkdirSync(mdir, { recursive: true });
    const lines = [`all: ${Array.from({ length: pairs }, (_, i) => `daily_${i}`).join(' ')}`, '', 'raw_%:', '\t@true', '', 'daily_%: raw_%', '\t@true', ''];
    lines.push('.PHONY: all', '');
    writeFileSync(join(mdir, 'Makefile'), lines.join('\n'));
    const t0 = performance.now();
    execFileSync('make', ['-s', '-j2'], { cwd: mdir });
    makeMs = performance.now() - t0;
  }
  return { jobs, platformMs, makeMs };
}

/**
 * The wall clock (what the job's `date` reads) to a microsecond, anchored now: `performance.timeOrigin` is the wall
 * clock when this process started, and a wall clock slewed or stepped since (NTP, a VM's clock) made acks land after
 * the starts they caused (negative latencies, seen on a VM). The anchor is the instant Date.now() ticks over, found by
 * a spin of at most a millisecond.
 */
function wallClock(): { now: () => number } {
  const first = Date.now();
  let tick = first;
  while (tick === first) tick = Date.now();
  const anchor = tick - performance.now();
  return { now: () => anchor + performance.now() };
}

async function latency(root: string, samples: number): Promise<{ p50: number; p99: number; samples: number }> {
  const dir = join(root, 'latency');
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'platform.json'),
    JSON.stringify({ jobs: [{ label: 'stamp', outputs: ['stamp/(?<n>\\d+)'], args: ['${n}'], exec: ['sh', '-c', 'date +%s%N > "t-$0"'] }] }),
  );
  const { url, child } = await serve(dir);
  const ms: number[] = [];
  try {
    for (let i = 0; i < samples; i++) {
      const wall = wallClock();
      const { want_id } = await postWant(url, { partitions: [`stamp/${i}`] });
      const acked = wall.now();
      await until(url, want_id, 'successful', 5);
      const started = Number(readFileSync(join(dir, `t-${i}`), 'utf8').trim());
      ms.push(started / 1e6 - acked);
    }
  } finally {
    await kill(child, 'SIGTERM');
  }
  ms.sort((a, b) => a - b);
  return { p50: ms[Math.floor(samples * 0.5)]!, p99: ms[Math.min(samples - 1, Math.floor(samples * 0.99))]!, samples };
}

/**
 * `building`: every want's run starts as it comes (two at a time, `true`), so intake shares the daemon with spawning
 * and recording runs; otherwise each run queues behind a busy executor and intake is measured alone.
 */
async function intake(root: string, wants: number, clients: number, building = false): Promise<IntakeFigures> {
  const dir = join(root, building ? 'intake-building' : 'intake');
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'platform.json'),
    JSON.stringify({
      max_concurrent_job_runs: building ? 2 : 1,
      jobs: [
        { label: 'busy', outputs: ['busy'], exec: ['sleep', '600'] },
        { label: 'q', outputs: ['q/(?<n>[\\d-]+)'], exec: ['true'] },
      ],
    }),
  );
  const { url, child } = await serve(dir);
  try {
    if (!building) await postWant(url, { partitions: ['busy'] });
    const before = await readDaemon(url, child.pid!);
    if (haveWrk()) {
      const { perSecond, sent } = wrkIntake(dir, url, wants, clients);
      return { wants, clients, perSecond, client: 'wrk', breakdown: breakdown(before, await readDaemon(url, child.pid!), sent) };
    }
    let next = 0;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: clients }, async () => {
        while (next < wants) await postWant(url, { partitions: [`q/${next++}`] });
      }),
    );
    const s = (performance.now() - t0) / 1000;
    return { wants, clients, perSecond: wants / s, client: 'node http', breakdown: breakdown(before, await readDaemon(url, child.pid!), wants) };
  } finally {
    // The busy run (`sleep 600`) would outlive the daemon by design: stopped with its runs canceled (`stop --cancel-runs`).
    await kill(child, 'SIGUSR2');
  }
}

/**
 * Each of `clients` connections posts wants for distinct partitions, back to back, for as long as `wants` take at
 * ~1,500/s (at least 3 s); any answer but 201 fails the bench.
 */
function wrkIntake(dir: string, url: string, wants: number, clients: number): { perSecond: number; sent: number } {
  return wrkPostWants(dir, url, 'q/', { connections: clients, seconds: Math.max(3, Math.ceil(wants / 1500)) });
}

export async function daemonBench(root: string, quick: boolean): Promise<DaemonFigures> {
  return {
    latency: await latency(root, quick ? 30 : 100),
    intake: await intake(root, quick ? 2000 : 10_000, 16),
    intakeBuilding: await intake(root, quick ? 2000 : 10_000, 16, true),
  };
}
