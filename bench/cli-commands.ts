/**
 * What a person waits for at the prompt: one `platform` command against the workspace's running daemon, against
 * GNU make and Snakemake asked the same in the same run. Each is a new process, as at the prompt: `--version`
 * (loading the command line), `want list`, `build` of one new partition of a `true` job, and `build` of one that is
 * built already (make's up-to-date target, Snakemake's nothing-to-do). Medians of `runs` runs each. And the first
 * command of a workspace: `build` where no daemon runs yet, so the command starts one (stopped after each). And goal
 * 1's DAG as a person builds it, `platform build` of its daily partitions with its progress followed, against make.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../bin/platform', import.meta.url));

export interface CliFigures {
  runs: number;
  /** Medians in ms. */
  platform: { version: number; list: number; buildNew: number; buildBuilt: number; buildFirst: number };
  /** `platform build` of goal 1's DAG of `jobs` jobs (the daemon running), and make -j2 on the same DAG. */
  dag: { jobs: number; platformMs: number; makeMs: number | undefined };
  make?: { buildNew: number; buildBuilt: number };
  snakemake?: { buildNew: number; buildBuilt: number };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

function timed(runs: number, cmd: string, args: (i: number) => string[], cwd: string): number {
  const ms: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    execFileSync(cmd, args(i), { cwd, stdio: 'ignore' });
    ms.push(performance.now() - t0);
  }
  return median(ms);
}

const GRAPH = JSON.stringify({ jobs: [{ label: 'one', outputs: ['one/(?<n>\\d+)'], exec: ['true'] }] });
const platform = (...args: string[]): string[] => [BIN, ...args];

function workspace(dir: string): string {
  mkdirSync(join(dir, '.platform'), { recursive: true });
  writeFileSync(join(dir, 'platform.json'), GRAPH);
  return dir;
}

/** `build` in a new workspace: the command starts its daemon; the daemon is stopped after it, outside the time. */
function firstBuilds(root: string, runs: number): number {
  const ms: number[] = [];
  for (let i = 0; i < runs; i++) {
    const dir = workspace(join(root, `cli-first-${i}`));
    const t0 = performance.now();
    execFileSync(process.execPath, platform('build', 'one/1'), { cwd: dir, stdio: 'ignore' });
    ms.push(performance.now() - t0);
    execFileSync(process.execPath, platform('stop'), { cwd: dir, stdio: 'ignore' });
  }
  return median(ms);
}

const DAG_GRAPH = JSON.stringify({
  max_concurrent_job_runs: 2,
  jobs: [
    { label: 'raw', outputs: ['raw/(?<d>\\d+)'], exec: ['true'] },
    { label: 'daily', outputs: ['daily/(?<d>\\d+)'], inputs: [{ partition_ref: 'raw/${d}', dep_type: 'MATERIALIZE' }], exec: ['true'] },
  ],
});

/** Goal 1's DAG (raw/i -> daily/i, `true`, two at a time) by `platform build daily/{0..n}` in a terminal's stead. */
function dagBuild(root: string, jobs: number, withMake: boolean): CliFigures['dag'] {
  const dir = join(root, 'cli-dag');
  mkdirSync(join(dir, '.platform'), { recursive: true });
  writeFileSync(join(dir, 'platform.json'), DAG_GRAPH);
  execFileSync(process.execPath, platform('start'), { cwd: dir, stdio: 'ignore' });
  let platformMs: number;
  try {
    const t0 = performance.now();
    execFileSync(process.execPath, platform('build', `daily/{0..${jobs / 2 - 1}}`), { cwd: dir, stdio: 'ignore' });
    platformMs = performance.now() - t0;
  } finally {
    execFileSync(process.execPath, platform('stop'), { cwd: dir, stdio: 'ignore' });
  }
  let makeMs: number | undefined;
  if (withMake) {
    const mdir = join(root, 'cli-dag-make');
    mkdirSync(mdir, { recursive: true });
    const all = Array.from({ length: jobs / 2 }, (_, i) => `daily_${i}`).join(' ');
    writeFileSync(join(mdir, 'Makefile'), `all: ${all}\n\nraw_%:\n\t@true\n\ndaily_%: raw_%\n\t@true\n\n.PHONY: all\n`);
    const t0 = performance.now();
    execFileSync('make', ['-s', '-j2'], { cwd: mdir });
    makeMs = performance.now() - t0;
  }
  return { jobs, platformMs, makeMs };
}

export function cliBench(root: string, runs: number, dagJobs: number, have: (cmd: string) => boolean): CliFigures {
  const dir = workspace(join(root, 'cli'));
  const buildFirst = firstBuilds(root, Math.max(3, Math.ceil(runs / 3)));
  const dag = dagBuild(root, dagJobs, have('make'));
  execFileSync(process.execPath, platform('start'), { cwd: dir, stdio: 'ignore' });
  try {
    execFileSync(process.execPath, platform('build', 'one/0'), { cwd: dir, stdio: 'ignore' });
    const figures: CliFigures = {
      runs,
      platform: {
        version: timed(runs, process.execPath, () => platform('--version'), dir),
        list: timed(runs, process.execPath, () => platform('want', 'list'), dir),
        buildNew: timed(runs, process.execPath, (i) => platform('build', `one/${i + 1}`), dir),
        buildBuilt: timed(runs, process.execPath, () => platform('build', 'one/0'), dir),
        buildFirst,
      },
      dag,
    };
    if (have('make')) {
      const mdir = join(root, 'cli-make');
      mkdirSync(mdir, { recursive: true });
      writeFileSync(join(mdir, 'Makefile'), 'one_%:\n\t@true\n\t@touch $@\n');
      execFileSync('make', ['-s', 'one_0'], { cwd: mdir });
      figures.make = {
        buildNew: timed(runs, 'make', (i) => ['-s', `one_${i + 1}`], mdir),
        buildBuilt: timed(runs, 'make', () => ['-s', 'one_0'], mdir),
      };
    }
    if (have('snakemake')) {
      const sdir = join(root, 'cli-snakemake');
      mkdirSync(sdir, { recursive: true });
      writeFileSync(join(sdir, 'Snakefile'), 'rule one:\n    output: "one_{n}"\n    shell: "touch {output}"\n');
      const args = (target: string) => ['--cores', '1', '--quiet', 'all', '--', target];
      execFileSync('snakemake', args('one_0'), { cwd: sdir, stdio: 'ignore' });
      // Snakemake takes about a second a command: a third of the runs keeps the bench short.
      const n = Math.max(3, Math.ceil(runs / 3));
      figures.snakemake = {
        buildNew: timed(n, 'snakemake', (i) => args(`one_${i + 1}`), sdir),
        buildBuilt: timed(n, 'snakemake', () => args('one_0'), sdir),
      };
    }
    return figures;
  } finally {
    execFileSync(process.execPath, platform('stop'), { cwd: dir, stdio: 'ignore' });
  }
}

export function describeCli(c: CliFigures): string[] {
  const ms = (x: number) => `${x.toFixed(0)} ms`;
  const lines = [
    `\na command at the prompt (a new process each, against the running daemon; medians of ${c.runs}):`,
    `  platform --version ${ms(c.platform.version)}, want list ${ms(c.platform.list)}`,
    `  build one new partition: platform ${ms(c.platform.buildNew)}` +
      (c.make ? `, GNU make ${ms(c.make.buildNew)} (platform/make ${(c.platform.buildNew / c.make.buildNew).toFixed(2)}x)` : '') +
      (c.snakemake ? `, Snakemake ${ms(c.snakemake.buildNew)} (Snakemake/platform ${(c.snakemake.buildNew / c.platform.buildNew).toFixed(2)}x)` : ''),
    `  the same as a workspace's first command (it starts the daemon): platform ${ms(c.platform.buildFirst)}` +
      (c.snakemake ? ` (Snakemake/platform ${(c.snakemake.buildNew / c.platform.buildFirst).toFixed(2)}x)` : ''),
    `  build one that is built: platform ${ms(c.platform.buildBuilt)}` +
      (c.make ? `, GNU make ${ms(c.make.buildBuilt)} (platform/make ${(c.platform.buildBuilt / c.make.buildBuilt).toFixed(2)}x)` : '') +
      (c.snakemake ? `, Snakemake ${ms(c.snakemake.buildBuilt)} (Snakemake/platform ${(c.snakemake.buildBuilt / c.platform.buildBuilt).toFixed(2)}x)` : ''),
  ];
  const d = c.dag;
  lines.push(
    `  platform build of goal 1's DAG of ${d.jobs} jobs, its progress followed: ${ms(d.platformMs)}` +
      (d.makeMs !== undefined ? `; GNU make -j2 ${ms(d.makeMs)} (platform/make ${(d.platformMs / d.makeMs).toFixed(2)}x)` : ''),
  );
  return lines;
}
