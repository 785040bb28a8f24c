/**
 * Jobs that say when they ran, for the tests of runs held past the cap: each start appends its run id to
 * marks/<ref>.starts and writes its start and end times (ns, the job's own clock) to .start / .end.
 */
import type { ExecutionContext } from 'ava';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Platform } from '../../lib/platform.js';
import { bash, openPlatform, runsFor } from './jobs-fixture.js';

/**
 * 8,000 variables: more than the launcher's records carry, so a run of a job with them goes to the launcher as a small
 * record whose program is its `--supervise` mode (the variables in the run's exec.fields).
 */
export const WIDE_ENV: Readonly<Record<string, string>> = Object.fromEntries(Array.from({ length: 8_000 }, (_, i) => [`V${i}`, 'x']));

export function marked(seconds: number | string): string[] {
  return bash(
    `f="marks/$(echo "$PLATFORM_OUTPUTS" | tr -dc 'a-z0-9_/' | tr / _)"; mkdir -p marks; echo "$PLATFORM_JOB_RUN_ID" >> "$f.starts"; date +%s%N > "$f.start"; sleep ${seconds}; date +%s%N > "$f.end"`,
  );
}

/**
 * A marked job that runs until the test releases it (`release(dir, name)`), not for a fixed time: for a test whose
 * steps must come while it runs (a job of a fixed second or two ended first on a loaded machine). A minute at most, so
 * that one a failed test left behind ends by itself.
 */
export function markedUntilReleased(): string[] {
  return bash(
    `f="marks/$(echo "$PLATFORM_OUTPUTS" | tr -dc 'a-z0-9_/' | tr / _)"; mkdir -p marks; echo "$PLATFORM_JOB_RUN_ID" >> "$f.starts"; date +%s%N > "$f.start"; i=0; while [ ! -e "$f.release" ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i + 1)); done; date +%s%N > "$f.end"`,
  );
}

/** Lets the job of `name` (a ref with / as _) made by `markedUntilReleased` end. */
export function release(dir: string, name: string): void {
  mkdirSync(join(dir, 'marks'), { recursive: true });
  writeFileSync(join(dir, 'marks', `${name}.release`), '');
}

/** [start, end] of every job that ran (ns), by ref with / as _; a job still going ends at the end of time. */
export function spans(dir: string): Map<string, [bigint, bigint]> {
  const out = new Map<string, [bigint, bigint]>();
  const marks = join(dir, 'marks');
  if (!existsSync(marks)) return out;
  for (const f of readdirSync(marks).filter((n) => n.endsWith('.start'))) {
    const name = f.slice(0, -'.start'.length);
    const end = join(marks, `${name}.end`);
    const read = (p: string) => BigInt(readFileSync(p, 'utf8').trim());
    out.set(name, [read(join(marks, f)), existsSync(end) ? read(end) : BigInt(Number.MAX_SAFE_INTEGER) * 1_000_000n]);
  }
  return out;
}

/** The run ids that started a job for `name` (a ref with / as _), in order. */
export function starts(dir: string, name: string): string[] {
  const p = join(dir, 'marks', `${name}.starts`);
  return existsSync(p) ? readFileSync(p, 'utf8').split('\n').filter(Boolean) : [];
}

/** The most jobs that ran at once. */
export function mostAtOnce(all: Iterable<[bigint, bigint]>): number {
  const points = [...all].flatMap(([s, e]) => [[s, 1] as const, [e, -1] as const]).sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] - b[1]));
  let now = 0;
  let most = 0;
  for (const [, d] of points) most = Math.max(most, (now += d));
  return most;
}

/** A platform with the daemon's executor (supervised runs, the native launcher where it was built). */
export const openSupervised = (t: ExecutionContext, dir: string, graph: unknown, cancelRunsOnClose = true): Promise<Platform> =>
  openPlatform(t, dir, graph, { executor: 'supervised', cancelRunsOnClose });

/**
 * Keeps this process's event loop busy (no step, no news read) until `done()` says so, or `ms` at most; returns the
 * next millisecond in ns: a mark seen written bears a time within the millisecond Date.now() says, or before.
 */
export function holdLoopUntil(done: () => boolean, ms: number): bigint {
  const until = Date.now() + ms;
  let now = Date.now();
  while (now < until && !done()) {
    now = Date.now();
  }
  return BigInt(Date.now() + 1) * 1_000_000n;
}

/** Whether the mark `name` (a ref with / as _, and its kind) is written whole. */
export function markWritten(dir: string, name: string): boolean {
  try {
    return readFileSync(join(dir, 'marks', name), 'utf8').endsWith('\n');
  } catch {
    return false;
  }
}

/** Whether every run of `refs` is in the native launcher's hands: it makes a run's directory as it is given it. */
export function handedOver(dir: string, platform: Platform, refs: string[]): boolean {
  const state = platform.state();
  return refs.every((ref) => {
    const run = runsFor(state, ref)[0];
    return run !== undefined && existsSync(join(dir, '.platform', 'logs', run.job_run_id));
  });
}
