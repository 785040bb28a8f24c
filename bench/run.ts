/**
 * `npm run bench`: the same partitioned pipeline built by platform, GNU make and Snakemake in one run, so the
 * figures are ratios against peers on the same machine at the same moment, never absolute seconds alone.
 *
 * Pipeline: RAW raw partitions -> one daily partition each -> weekly partitions of 7 dailies. Every job is a
 * tiny shell command, so what is measured is the orchestrator's own overhead per job and per no-op check.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { firstValueFrom, filter } from 'rxjs';
import { Platform, type PlatformOptions } from '../lib/platform.js';
import { redisBench } from './redis-workers.js';
import { describeBreakdown } from './daemon-breakdown.js';
import { daemonBench, type DaemonFigures } from './daemon.js';
import { dagSizesBench, type DagSizeFigures } from './dag-sizes.js';
import { historyBench, waitingBench, type HistoryFigures, type WaitingFigures } from './history.js';
import { monthsBench, type MonthFigures } from './months.js';
import { parseGraph } from '../lib/graph/parse-graph.js';
import { backfillBench, type BackfillFigures } from './backfill.js';
import { canRunUiBench, uiBench, type UiFigures } from './ui-load.js';
import { cliBench, describeCli, type CliFigures } from './cli-commands.js';
import { warmCompileCache } from './serve-process.js';

const DAYS = Number(process.env.BENCH_DAYS ?? 140);
const WEEKS = Math.floor(DAYS / 7);
const JOBS = 2;

const day = (i: number) => `d${String(i).padStart(4, '0')}`;
const week = (w: number) => `w${String(w).padStart(3, '0')}`;

function platformGraph() {
  return parseGraph(
    {
      max_concurrent_job_runs: JOBS,
      jobs: [
        { label: 'raw', outputs: ['raw/(?<d>d\\d{4})'], exec: ['sh', '-c', 'echo 1 > out/raw_$0'], args: ['${d}'] },
        {
          label: 'daily',
          outputs: ['daily/(?<d>d\\d{4})'],
          inputs: [{ partition_ref: 'raw/${d}', dep_type: 'MATERIALIZE' }],
          exec: ['sh', '-c', 'cat out/raw_$0 > out/daily_$0'],
          args: ['${d}'],
        },
        ...Array.from({ length: WEEKS }, (_, w) => ({
          label: `weekly_${week(w)}`,
          outputs: [`weekly/${week(w)}`],
          inputs: Array.from({ length: 7 }, (_, k) => ({ partition_ref: `daily/${day(w * 7 + k)}`, dep_type: 'MATERIALIZE' })),
          exec: ['sh', '-c', `cat ${Array.from({ length: 7 }, (_, k) => `out/daily_${day(w * 7 + k)}`).join(' ')} > out/weekly_${week(w)}`],
        })),
      ],
    },
    'bench',
  );
}

function makefile(): string {
  const lines = [`all: ${Array.from({ length: WEEKS }, (_, w) => `out/weekly_${week(w)}`).join(' ')}`, ''];
  lines.push('out/raw_%:', '\t@mkdir -p out; echo 1 > $@', '');
  lines.push('out/daily_%: out/raw_%', '\t@cat $< > $@', '');
  for (let w = 0; w < WEEKS; w++) {
    const deps = Array.from({ length: 7 }, (_, k) => `out/daily_${day(w * 7 + k)}`).join(' ');
    lines.push(`out/weekly_${week(w)}: ${deps}`, '\t@cat $^ > $@', '');
  }
  return lines.join('\n');
}

function snakefile(): string {
  return `WEEKS = [${Array.from({ length: WEEKS }, (_, w) => `"${week(w)}"`).join(', ')}]
def days(w):
    i = int(w[1:])
    return ["out/daily_d%04d" % (i * 7 + k) for k in range(7)]
rule all:
    input: expand("out/weekly_{w}", w=WEEKS)
rule raw:
    output: "out/raw_{d}"
    shell: "echo 1 > {output}"
rule daily:
    input: "out/raw_{d}"
    output: "out/daily_{d}"
    shell: "cat {input} > {output}"
rule weekly:
    input: lambda wc: days(wc.w)
    output: "out/weekly_{w}"
    shell: "cat {input} > {output}"
`;
}

function timeIt(fn: () => void): number {
  const t0 = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

async function timeItAsync(fn: () => Promise<void>): Promise<number> {
  const t0 = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

async function platformRun(dir: string, executor: PlatformOptions['executor']): Promise<{ cold: number; noop: number }> {
  mkdirSync(join(dir, 'out'), { recursive: true });
  const refs = Array.from({ length: WEEKS }, (_, w) => `weekly/${week(w)}`);
  const build = async (platform: Platform) => {
    const r = await platform.createWant({ partitions: refs, comment: 'bench', data_timestamp: 0, ttl_seconds: 0, sla_seconds: 0 });
    if (!r.ok) throw new Error(r.error);
    await firstValueFrom(
      platform.state$.pipe(
        filter((s) => {
          const st = s.wants.get(r.want_id)?.status;
          if (st && st !== 'successful' && ['failed', 'upstream_failed', 'canceled'].includes(st)) throw new Error(`bench want ${st}`);
          return st === 'successful';
        }),
      ),
    );
  };
  let platform = await Platform.open(dir, { graph: platformGraph(), executor });
  const cold = await timeItAsync(() => build(platform));
  await platform.close();
  // No-op: a fresh daemon (replaying the whole log) is asked for everything again; nothing must run.
  const noop = await timeItAsync(async () => {
    platform = await Platform.open(dir, { graph: platformGraph(), executor });
    await build(platform);
  });
  const runs = platform.state().job_runs.size;
  await platform.close();
  if (runs !== DAYS * 2 + WEEKS) throw new Error(`platform ran ${runs} jobs, expected ${DAYS * 2 + WEEKS}`);
  return { cold, noop };
}

/** `BENCH_PEERS=none` measures platform alone (for scaling runs at sizes the peers take minutes on). */
function have(cmd: string): boolean {
  if (process.env.BENCH_PEERS === 'none') return false;
  return spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;
}

async function main(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'platform-bench-'));
  const results: Array<{ tool: string; cold: number; noop: number }> = [];
  let backfill: BackfillFigures | undefined;
  let ui: UiFigures | undefined;
  let daemon: DaemonFigures | undefined;
  let dagSizes: DagSizeFigures[] | undefined;
  let waiting: WaitingFigures | undefined;
  let history: HistoryFigures | undefined;
  let months: MonthFigures[] | undefined;
  let cli: CliFigures | undefined;
  const quick = process.env.BENCH_QUICK === '1';
  try {
    const warm = join(root, 'warm');
    mkdirSync(warm);
    writeFileSync(join(warm, 'platform.json'), JSON.stringify({ jobs: [{ label: 'warm', outputs: ['warm/(?<n>\\d+)'], exec: ['true'] }] }));
    await warmCompileCache(warm);
    results.push({ tool: 'platform', ...(await platformRun(join(root, 'platform'), 'in-process')) });
    // What the daemon uses: every run under a shell supervisor, so that it outlives the daemon.
    results.push({ tool: 'platform, supervised', ...(await platformRun(join(root, 'supervised'), 'supervised')) });
    // Through a BullMQ queue on a local redis-server to one `platform worker` taking 2 at a time.
    if (have('redis-server')) {
      const dir = join(root, 'redis');
      mkdirSync(dir);
      results.push({ tool: 'platform, Redis worker', ...(await redisBench(dir, (executor) => platformRun(dir, executor))) });
    }

    if (have('make')) {
      const dir = join(root, 'make');
      mkdirSync(dir);
      writeFileSync(join(dir, 'Makefile'), makefile());
      const cold = timeIt(() => execFileSync('make', ['-s', `-j${JOBS}`], { cwd: dir }));
      const noop = timeIt(() => execFileSync('make', ['-s', `-j${JOBS}`], { cwd: dir }));
      results.push({ tool: 'GNU make', cold, noop });
    }
    // Quick runs leave Snakemake out of the pipeline (its 13 s was a tenth of them); goal 1 below still runs it.
    if (have('snakemake') && !quick) {
      const dir = join(root, 'snakemake');
      mkdirSync(dir);
      writeFileSync(join(dir, 'Snakefile'), snakefile());
      const args = ['--cores', String(JOBS), '--quiet'];
      const cold = timeIt(() => execFileSync('snakemake', args, { cwd: dir, stdio: 'ignore' }));
      const noop = timeIt(() => execFileSync('snakemake', args, { cwd: dir, stdio: 'ignore' }));
      results.push({ tool: 'Snakemake', cold, noop });
    }
    // A command at the prompt: a new process each, against the workspace's daemon (BENCH_CLI=0 leaves it out).
    if (process.env.BENCH_CLI !== '0') cli = cliBench(root, quick ? 7 : 15, quick ? 400 : 2_000, have);
    // Goal 1 at each size (BENCH_SIZES=400,2000 to choose), then the daemon's latency and intake.
    if (process.env.BENCH_DAEMON !== '0') {
      const sizes = (process.env.BENCH_SIZES ?? (quick ? '400' : '400,2000,10000')).split(',').map(Number);
      dagSizes = await dagSizesBench(root, sizes, have);
      daemon = await daemonBench(root, quick);
    }
    // BENCH_HISTORY=0 leaves goals 4 and 5 out (the full sizes take several minutes).
    if (process.env.BENCH_HISTORY !== '0') {
      waiting = await waitingBench(root, quick ? 5_000 : 100_000);
      history = await historyBench(root, quick ? 15_000 : 250_000);
    }
    // BENCH_MONTHS=0 leaves out retention over months (issue 14).
    if (process.env.BENCH_MONTHS !== '0') months = await monthsBench(root, quick ? 500 : 2_000, quick ? 2 : 6, 30);
    if (process.env.BENCH_BACKFILL !== '0') backfill = await backfillBench(root, have('make'));
    if (process.env.BENCH_UI !== '0' && canRunUiBench()) ui = await uiBench(root);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  const base = results[0]!;
  const jobs = DAYS * 2 + WEEKS;
  console.log(`pipeline: ${DAYS} raw -> ${DAYS} daily -> ${WEEKS} weekly = ${jobs} jobs, ${JOBS} at a time`);
  console.log('tool                   cold build   no-op rebuild   cold vs platform   no-op vs platform');
  for (const r of results) {
    console.log(
      `${r.tool.padEnd(22)} ${`${r.cold.toFixed(0)} ms`.padStart(10)}   ${`${r.noop.toFixed(0)} ms`.padStart(13)}   ${(r.cold / base.cold).toFixed(2).padStart(16)}x   ${(r.noop / base.noop).toFixed(2).padStart(16)}x`,
    );
  }
  if (dagSizes) {
    const ms = (v: number | undefined) => (v === undefined ? '-' : `${v.toFixed(0)} ms`);
    const x = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined ? '-' : `${(a / b).toFixed(2)}x`);
    console.log('\ngoal 1: raw -> daily pairs of trivial jobs (`true`), two at a time; daemon = platform serve + one want over HTTP');
    console.log('   jobs     daemon   embedded   GNU make  Snakemake   daemon/make  embedded/make  Snakemake/daemon  Snakemake/embedded');
    for (const d of dagSizes) {
      console.log(
        `${String(d.jobs).padStart(7)} ${ms(d.daemonMs).padStart(10)} ${ms(d.embeddedMs).padStart(10)} ${ms(d.makeMs).padStart(10)} ${ms(d.snakemakeMs).padStart(10)} ${x(d.daemonMs, d.makeMs).padStart(13)} ${x(d.embeddedMs, d.makeMs).padStart(14)} ${x(d.snakemakeMs, d.daemonMs).padStart(17)} ${x(d.snakemakeMs, d.embeddedMs).padStart(19)}`,
      );
    }
  }
  if (daemon) {
    console.log('\nthe daemon (platform serve, HTTP):');
    console.log(`  want acknowledged -> job started, idle daemon: p50 ${daemon.latency.p50.toFixed(1)} ms, p99 ${daemon.latency.p99.toFixed(1)} ms (${daemon.latency.samples} wants)`);
    console.log(`  intake: ${daemon.intake.clients} clients (${daemon.intake.client}), runs queued behind a busy executor: ${daemon.intake.perSecond.toFixed(0)} wants/s`);
    console.log(`    where the time went: ${describeBreakdown(daemon.intake.breakdown)}`);
    console.log(`  intake while building (each want's run starts, two at a time): ${daemon.intakeBuilding.perSecond.toFixed(0)} wants/s`);
    console.log(`    where the time went: ${describeBreakdown(daemon.intakeBuilding.breakdown)}`);
    if (daemon.intake.client !== 'wrk') console.log('  (wrk not installed: apt-get install wrk measures intake without a node client on the same cores)');
  }
  if (waiting) {
    const w = waiting;
    console.log(`\n${w.wants} wants waiting on one long-running input, posted by 16 clients (${w.client}):`);
    console.log(`  intake by slice of a tenth of the wants: ${w.intakeBySlice.map((r) => r.toFixed(0)).join(', ')} wants/s`);
    console.log(`  GET /api/wants/:id on the waiting daemon: p50 ${w.read.p50.toFixed(2)} ms, p99 ${w.read.p99.toFixed(2)} ms`);
    if (w.readWrk) console.log(`  the same by wrk (one connection, ${w.readWrk.requests} requests): p50 ${w.readWrk.p50.toFixed(2)} ms, p99 ${w.readWrk.p99.toFixed(2)} ms`);
    if (w.settled) {
      const { get, health, waitedMs } = w.settled;
      console.log(`  settled (no snapshot written for 1 s, after ${(waitedMs / 1000).toFixed(1)} s), by wrk: GET /api/wants/:id p50 ${get.p50.toFixed(2)} ms, p99 ${get.p99.toFixed(2)} ms; /health p50 ${health.p50.toFixed(2)} ms, p99 ${health.p99.toFixed(2)} ms`);
    }
    console.log(`  restart after kill -9 until /health answers: ${w.restartMs.toFixed(0)} ms`);
  }
  if (history) {
    const h = history;
    console.log(`\na history of ${h.events} events (${h.wants} wants built):`);
    console.log(`  first start (no snapshot: the whole log replayed): ${h.firstStartMs.toFixed(0)} ms`);
    console.log(`  start after an upgrade (the snapshot of another version: its records read): ${h.upgradeStartMs.toFixed(0)} ms`);
    console.log(`  the snapshot written in the background after it held the event loop at most ${h.snapshotLoopMaxMs.toFixed(0)} ms (the daemon's loop-delay monitor)`);
    console.log(`  restart after kill -9 (from the background snapshot) until /health answers: ${h.restartMs.toFixed(0)} ms`);
    const w5 = h.worstRestart;
    console.log(
      `  restart after kill -9 at the worst moment (the image, its delta of ${w5.deltaEvents} events, then ${w5.tailEvents} events replayed): ${w5.ms.toFixed(0)} ms` +
        ` (the delta: ${w5.deltaMiB.toFixed(1)} MiB, written ${w5.deltaMs.toFixed(0)} ms after the daemon that replayed its events answered)`,
    );
    console.log(`  the first 200 GET /api/wants/:id after it: p50 ${h.firstGets.p50.toFixed(2)} ms, p99 ${h.firstGets.p99.toFixed(2)} ms`);
    console.log(`  then GET /api/wants/:id p50 ${h.get.p50.toFixed(2)} ms, p99 ${h.get.p99.toFixed(2)} ms; a page of 100: p50 ${h.page.p50.toFixed(2)} ms, p99 ${h.page.p99.toFixed(2)} ms`);
    console.log(`  GET /health on the same daemon (the floor of a request here): p50 ${h.health.p50.toFixed(2)} ms, p99 ${h.health.p99.toFixed(2)} ms`);
    if (h.wrk) {
      const { get, page, health } = h.wrk;
      console.log(`  by wrk (one connection, a C client), ${get.requests} / ${page.requests} / ${health.requests} requests:`);
      console.log(`    GET /api/wants/:id p50 ${get.p50.toFixed(2)} ms, p99 ${get.p99.toFixed(2)} ms; a page of 100: p50 ${page.p50.toFixed(2)} ms, p99 ${page.p99.toFixed(2)} ms; /health p50 ${health.p50.toFixed(2)} ms, p99 ${health.p99.toFixed(2)} ms`);
    } else {
      console.log('  (wrk not installed: apt-get install wrk measures the reads without a node client on the same cores)');
    }
    console.log(`  resident memory: ${h.rssMiB.toFixed(0)} MiB`);
    const c = h.compaction;
    console.log(`  retention.events_keep ${c.keep}: POST /api/gc ${c.gcMs.toFixed(0)} ms; event log ${c.belMiBBefore.toFixed(1)} MiB -> ${c.belMiBAfter.toFixed(1)} MiB, compacted.bin ${c.baseMiB.toFixed(1)} MiB`);
    console.log(`  restart after kill -9 from compacted.bin alone (no snapshot.bin) until /health answers: ${c.restartMs.toFixed(0)} ms`);
  }
  if (months && months.length > 0) {
    console.log('\nretention over months: the same partitions rebuilt daily, events_keep = a week, gc at each month end:');
    console.log('  month   events written   event log   compacted.bin   wants kept   gc        restart after kill -9');
    for (const m of months) {
      console.log(
        `  ${String(m.month).padStart(5)}   ${String(m.eventsWritten).padStart(14)}   ${`${m.belMiB.toFixed(1)} MiB`.padStart(9)}   ${`${m.baseMiB.toFixed(1)} MiB`.padStart(13)}   ${String(m.wantsKept).padStart(10)}   ${`${m.gcMs.toFixed(0)} ms`.padStart(7)}   ${m.restartMs.toFixed(0)} ms`,
      );
    }
  }
  if (cli) for (const l of describeCli(cli)) console.log(l);
  if (backfill) {
    const b = backfill;
    console.log(`\nbackfill: ${b.partitions} partitions of a trivial job, ${JOBS} at a time`);
    console.log(`  accepted in ${b.acceptMs.toFixed(0)} ms; built in ${b.buildMs.toFixed(0)} ms (${(b.buildMs / b.partitions).toFixed(2)} ms a partition)`);
    if (b.makeMs !== undefined) console.log(`  GNU make, ${b.partitions} independent targets: ${b.makeMs.toFixed(0)} ms; platform/make ${(b.buildMs / b.makeMs).toFixed(2)}x`);
    console.log(`  while it builds: a one-partition want at priority 10 is built in ${b.interactiveMs.toFixed(1)} ms (median); its progress is read in ${b.readMs.toFixed(3)} ms`);
  }
  if (ui) {
    console.log(`\ndashboard: ${ui.wants} wants, in headless Chromium`);
    console.log(`  wants page: first rows ${ui.firstRowsMs.toFixed(0)} ms after navigation; a jump to the middle ${ui.jumpMs.toFixed(0)} ms`);
    console.log(`  ${ui.eventsPerSecond.toFixed(0)} events a second for 3 s: longest gap between frames ${ui.maxFrameGapMs.toFixed(0)} ms`);
  } else if (process.env.BENCH_UI !== '0') {
    console.log('(no Chromium: apt-get install chromium to measure the dashboard)');
  }
  if (quick && have('snakemake')) console.log('(BENCH_QUICK: Snakemake is left out of the pipeline table; goal 1 above has it)');
  for (const missing of ['make', 'snakemake', 'redis-server'].filter((c) => !have(c))) {
    console.log(`(${missing} not installed: apt-get install ${missing} to measure it)`);
  }
}

await main();
