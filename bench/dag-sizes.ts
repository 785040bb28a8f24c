/**
 * Issue 13 goal 1: the same DAG of trivial jobs (raw/i -> daily/i pairs, every job `true`, two at a time) at each
 * size, through the daemon (`platform serve`, one want over HTTP), through the embedded API (Platform.open with the
 * daemon's supervised executor), with GNU make -j2 and Snakemake --cores 2 on the same DAG in the same run.
 *
 * Snakemake must write its outputs (it checks them), so its jobs `touch` a file where make's and platform's run
 * `true`; at 10,000 jobs it takes many minutes and is measured only up to BENCH_SNAKEMAKE_MAX jobs (default 2,000).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { filter, firstValueFrom } from 'rxjs';
import { Platform } from '../lib/platform.js';
import { parseGraph } from '../lib/graph/parse-graph.js';
import { dag } from './daemon.js';

export interface DagSizeFigures {
  jobs: number;
  daemonMs: number;
  embeddedMs: number;
  makeMs: number | undefined;
  snakemakeMs: number | undefined;
}

const GRAPH = {
  max_concurrent_job_runs: 2,
  jobs: [
    { label: 'raw', outputs: ['raw/(?<d>\\d+)'], exec: ['true'] },
    { label: 'daily', outputs: ['daily/(?<d>\\d+)'], inputs: [{ partition_ref: 'raw/${d}', dep_type: 'MATERIALIZE' }], exec: ['true'] },
  ],
};

async function embedded(dir: string, jobs: number): Promise<number> {
  mkdirSync(dir, { recursive: true });
  const platform = await Platform.open(dir, { graph: parseGraph(GRAPH, 'bench'), executor: 'supervised' });
  try {
    const t0 = performance.now();
    const r = await platform.createWant({ partitions: Array.from({ length: jobs / 2 }, (_, i) => `daily/${i}`), comment: 'bench', data_timestamp: 0, ttl_seconds: 0, sla_seconds: 0 });
    if (!r.ok) throw new Error(r.error);
    await firstValueFrom(
      platform.state$.pipe(
        filter((s) => {
          const st = s.wants.get(r.want_id)?.status;
          if (st && ['failed', 'upstream_failed', 'canceled'].includes(st)) throw new Error(`bench want ${st}`);
          return st === 'successful';
        }),
      ),
    );
    return performance.now() - t0;
  } finally {
    await platform.close();
  }
}

function snakemake(dir: string, jobs: number): number {
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'Snakefile'),
    `rule all:
    input: expand("daily_{i}", i=range(${jobs / 2}))
rule raw:
    output: "raw_{i}"
    shell: "touch {output}"
rule daily:
    input: "raw_{i}"
    output: "daily_{i}"
    shell: "touch {output}"
`,
  );
  const t0 = performance.now();
  execFileSync('snakemake', ['--cores', '2', '--quiet'], { cwd: dir, stdio: 'ignore' });
  return performance.now() - t0;
}

export async function dagSizesBench(root: string, sizes: number[], have: (cmd: string) => boolean): Promise<DagSizeFigures[]> {
  const snakemakeMax = Number(process.env.BENCH_SNAKEMAKE_MAX ?? 2_000);
  const out: DagSizeFigures[] = [];
  for (const jobs of sizes) {
    const d = await dag(join(root, 'sizes'), jobs, have('make'));
    const embeddedMs = await embedded(join(root, 'sizes', `embedded-${jobs}`), jobs);
    const snakemakeMs = have('snakemake') && jobs <= snakemakeMax ? snakemake(join(root, 'sizes', `snakemake-${jobs}`), jobs) : undefined;
    out.push({ jobs, daemonMs: d.platformMs, embeddedMs, makeMs: d.makeMs, snakemakeMs });
  }
  return out;
}
