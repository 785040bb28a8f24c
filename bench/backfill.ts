/**
 * A 10,000-partition backfill (BENCH_BACKFILL to change the size) of a trivial job, against GNU make building as
 * many independent targets at the same parallelism. Measured: how long the backfill takes to be accepted, to
 * build, how long a one-partition interactive want takes while it runs (a step must cost what changed, not the
 * range), and how long a read of the backfill's progress takes.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { filter, firstValueFrom } from 'rxjs';
import { parseGraph } from '../lib/graph/parse-graph.js';
import { Platform } from '../lib/platform.js';
import { backfillView, backfillWant } from '../lib/server/backfill-queries.js';

const JOBS = 2;

export interface BackfillFigures {
  partitions: number;
  acceptMs: number;
  buildMs: number;
  /** Latency of a one-partition want created while the backfill builds, median of several. */
  interactiveMs: number;
  /** A read of the backfill's view while it builds, median. */
  readMs: number;
  makeMs: number | undefined;
}

const ms = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1e6;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function backfillBench(root: string, withMake: boolean): Promise<BackfillFigures> {
  const n = Number(process.env.BENCH_BACKFILL ?? (process.env.BENCH_QUICK === '1' ? 1_000 : 10_000));
  const dir = join(root, 'backfill-platform');
  mkdirSync(dir, { recursive: true });
  const graph = parseGraph(
    {
      max_concurrent_job_runs: JOBS,
      jobs: [
        { label: 'day', outputs: ['day/(?<i>\\d+)'], exec: ['true'] },
        { label: 'ask', outputs: ['ask/(?<i>\\d+)'], exec: ['true'] },
      ],
    },
    'bench',
  );
  // The daemon's executor (runs under supervisors that outlive it), as `platform backfill` gets.
  const platform = await Platform.open(dir, { graph, executor: 'supervised' });
  try {
    let t0 = process.hrtime.bigint();
    const reply = await platform.createBackfill({
      partitions: Array.from({ length: n }, (_, i) => `day/${i}`),
      pattern: `day/{0..${n - 1}}`,
      policy: 'missing',
      priority: 0,
      max_concurrent_job_runs: 0,
      comment: 'bench',
    });
    const acceptMs = ms(t0);
    if (!reply.ok || !reply.backfill) throw new Error('backfill refused');
    const wantId = reply.want_id;
    const backfillId = reply.backfill.backfill_id;
    const interactive: number[] = [];
    const reads: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t1 = process.hrtime.bigint();
      const w = await platform.createWant({ partitions: [`ask/${i}`], comment: '', data_timestamp: 0, ttl_seconds: 0, sla_seconds: 0, priority: 10 });
      if (!w.ok) throw new Error(w.error);
      await firstValueFrom(platform.state$.pipe(filter((s) => s.wants.get(w.want_id)?.status === 'successful')));
      interactive.push(ms(t1));
      const t2 = process.hrtime.bigint();
      const s = platform.state();
      backfillView(s, backfillWant(s, backfillId)!);
      reads.push(ms(t2));
    }
    await firstValueFrom(platform.state$.pipe(filter((s) => s.wants.get(wantId)?.status === 'successful')));
    const buildMs = ms(t0);
    let makeMs: number | undefined;
    if (withMake) {
      const mdir = join(root, 'backfill-make');
      mkdirSync(mdir, { recursive: true });
      const targets = Array.from({ length: n }, (_, i) => `day_${i}`);
      writeFileSync(join(mdir, 'Makefile'), `.PHONY: all ${targets.join(' ')}\nall: ${targets.join(' ')}\n${targets.map((x) => `${x}:\n\t@true`).join('\n')}\n`);
      t0 = process.hrtime.bigint();
      execFileSync('make', ['-s', `-j${JOBS}`], { cwd: mdir });
      makeMs = ms(t0);
    }
    return { partitions: n, acceptMs, buildMs, interactiveMs: median(interactive), readMs: median(reads), makeMs };
  } finally {
    await platform.close();
  }
}
