/**
 * Shared fixture of the jobs-*.test.ts files: a temp workspace per test, a real Platform (real processes) on it,
 * waits on `state$` with a timeout (never fixed sleeps), an HTTP server on a free port, and teardown that kills
 * whatever a test started.
 */
import { listArray, listLength } from '../../lib/state/append-list.js';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { filter, firstValueFrom, timeout } from 'rxjs';
import type { ExecutionContext } from 'ava';
import { isPidAlive } from '../../lib/system/pid-liveness.js';
import { parseGraph } from '../../lib/graph/parse-graph.js';
import { Platform, type PlatformOptions } from '../../lib/platform.js';
import { startHttpServer, type RunningServer } from '../../lib/server/http-server.js';
import type { BuildState, JobRunRecord, WantRecord } from '../../lib/state/build-state.js';

type T = ExecutionContext<unknown>;

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A temp directory with a `.platform/` marker and `files` (path -> content) written into it; removed at teardown. */
export function makeWorkspace(t: T, files: Record<string, string> = {}): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'platform-jobs-')));
  mkdirSync(join(dir, '.platform'), { recursive: true });
  writeFiles(dir, files);
  // Registered first, so it runs last (ava runs teardowns in reverse order): after the platform is closed. Retried: a
  // run's supervisor, outliving the test by design, may still write its status as its job is killed at teardown
  // (ENOTEMPTY on a loaded machine).
  t.teardown(() => rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 }));
  return dir;
}

export function writeFiles(dir: string, files: Record<string, string>): void {
  for (const [path, content] of Object.entries(files)) {
    const full = join(dir, path);
    mkdirSync(dirname(full), { recursive: true });
    writeFileSync(full, content);
  }
}

/**
 * A platform on `dir` with the graph `graph` (the platform.json object), no tick to speak of, closed at teardown. Orchestrator
 * errors are collected in `errors` so a test can show them.
 */
export async function openPlatform(
  t: T,
  dir: string,
  graph: unknown,
  options: PlatformOptions = {},
): Promise<Platform> {
  const errors: string[] = [];
  const platform = await Platform.open(dir, {
    graph: parseGraph(graph, 'test'),
    // Effectively no tick: every step must come from an event or a deadline (retry, ttl). The tick's full
    // scan is only the daemon's safety net, and must not be what makes these tests pass.
    tickMs: 60_000,
    // A test's platform takes its runs with it when it closes (the survival of runs is tested on purpose).
    cancelRunsOnClose: true,
    logError: (m) => {
      errors.push(m);
      t.log(`platform error: ${m}`);
    },
    ...options,
  });
  t.teardown(() => platform.close());
  return platform;
}

/** A want created through the embedding API; fails the test when the orchestrator refuses it. */
export async function want(platform: Platform, partitions: string[], comment = ''): Promise<string> {
  const r = await platform.createWant({ partitions, comment, data_timestamp: 0, ttl_seconds: 0, sla_seconds: 0 });
  if (!r.ok) throw new Error(`createWant(${partitions.join(', ')}) refused: ${r.status} ${r.error}`);
  return r.want_id;
}

/**
 * The first state satisfying `pred` (the current one included); rejects after `ms` with `what` and a summary of the
 * state, so a hang reads as a test failure with context rather than an ava timeout.
 */
export async function waitFor(
  platform: Platform,
  pred: (s: BuildState) => boolean,
  what: string,
  ms = 10_000,
): Promise<BuildState> {
  try {
    return await firstValueFrom(platform.state$.pipe(filter(pred), timeout(ms)));
  } catch (err) {
    throw new Error(`timed out after ${ms} ms waiting for ${what}; state:\n${describeState(platform.state())}`, {
      cause: err,
    });
  }
}

/** Waits until the want is in one of `statuses` (default: any terminal status). */
export function waitForWant(
  platform: Platform,
  want_id: string,
  statuses: readonly string[] = ['successful', 'failed', 'upstream_failed', 'canceled'],
  ms = 10_000,
): Promise<BuildState> {
  return waitFor(
    platform,
    (s) => statuses.includes(s.wants.get(want_id)?.status ?? ''),
    `want ${want_id} to be ${statuses.join('|')}`,
    ms,
  );
}

/** Polls a plain condition (files, pids) every 20 ms; false after `ms`. */
export async function poll(cond: () => boolean | Promise<boolean>, ms: number, every = 20): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await cond()) return true;
    await sleep(every);
  }
  return cond();
}

export function runs(state: BuildState, job_label?: string): JobRunRecord[] {
  const out: JobRunRecord[] = [];
  for (const [, id] of state.job_run_order.entries()) {
    const r = state.job_runs.get(id);
    if (r && (job_label === undefined || r.job_label === job_label)) out.push(r);
  }
  return out;
}

export function wants(state: BuildState): WantRecord[] {
  const out: WantRecord[] = [];
  for (const [, id] of state.want_order.entries()) {
    const w = state.wants.get(id);
    if (w) out.push(w);
  }
  return out;
}

/** Runs that built (or are building) `ref`. */
export function runsFor(state: BuildState, ref: string): JobRunRecord[] {
  return runs(state).filter((r) => r.config.outputs.includes(ref));
}

export function describeState(s: BuildState): string {
  const lines: string[] = [];
  for (const w of wants(s)) {
    lines.push(
      `  want ${w.want_id} ${w.status} [${w.partitions.join(', ')}] parent=${w.parent_want_id || '-'} runs=${listArray(w.job_run_ids).slice(0, 10).join(',')}${listLength(w.job_run_ids) > 10 ? `,... (${listLength(w.job_run_ids)})` : ''}`,
    );
  }
  const all = runs(s);
  if (all.length > 30) lines.push(`  ... ${all.length - 30} earlier runs`);
  for (const r of all.slice(-30)) {
    lines.push(
      `  run ${r.job_run_id} ${r.job_label} #${r.attempt} ${r.status} [${r.config.outputs.join(', ')}] exit=${r.exit_code} ${r.reason}`,
    );
  }
  for (const [ref, p] of s.partitions.entries()) lines.push(`  partition ${ref} ${p.status} (${p.job_run_id})`);
  return lines.join('\n');
}

/** Non-empty lines of a file in the workspace; [] when it does not exist. */
export function lines(dir: string, file: string): string[] {
  const path = join(dir, file);
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8').split('\n').filter((l) => l !== '');
}

export async function startServer(t: T, platform: Platform): Promise<RunningServer> {
  const server = await startHttpServer(platform, { port: 0, log: () => {}, logError: (l) => t.log(l), drainMs: 1000 });
  t.teardown(() => server.close());
  return server;
}

/**
 * At teardown, SIGKILLs every pid `pids()` returns then (and its process group), so a job or a grandchild that a
 * failing test left behind does not outlive the test.
 */
export function killAtTeardown(t: Pick<T, 'teardown'>, pids: () => number[]): void {
  t.teardown(() => {
    for (const pid of pids()) killHard(pid);
  });
}

export function killHard(pid: number): void {
  if (!Number.isInteger(pid) || pid <= 0) return;
  for (const target of [-pid, pid]) {
    try {
      process.kill(target, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
}

/**
 * Until `wrote()` says a job wrote what it writes among its first commands, or its process `pid()` is gone (0: not known
 * yet); true when it wrote. How soon a spawned job gets to its first commands is no fixed time (a loaded machine took
 * more than the 3 s a test gave it): `ms` only guards against a hang.
 */
export async function untilJobWrote(wrote: () => boolean, pid: () => number, ms = 20_000): Promise<boolean> {
  await poll(() => wrote() || (pid() > 0 && !isPidAlive(pid())), ms);
  return wrote();
}

/** Pids (one per line) of a pid file in the workspace. */
export function pidsIn(dir: string, file: string): number[] {
  return lines(dir, file)
    .map((l) => Number(l.trim()))
    .filter((n) => Number.isInteger(n) && n > 0);
}

export { isPidAlive };

/** `bash -c <script> <label>`: the JobConfig's args become $1, $2, ... of the script. */
export function bash(script: string, label = 'job'): string[] {
  return ['bash', '-c', script, label];
}

/** Reads an SSE response body, calling `onFrame` with each frame as it arrives; resolves when the body ends. */
export async function readSse(
  body: ReadableStream<Uint8Array>,
  onFrame: (frame: { event: string; data: string; at: number }) => void,
): Promise<void> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    for (;;) {
      const end = buffer.indexOf('\n\n');
      if (end < 0) break;
      const raw = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let event = 'message';
      const data: string[] = [];
      for (const line of raw.split('\n')) {
        if (line.startsWith(':')) continue;
        if (line.startsWith('event: ')) event = line.slice(7);
        else if (line.startsWith('data: ')) data.push(line.slice(6));
        else if (line === 'data:') data.push('');
      }
      if (data.length > 0 || event !== 'message') onFrame({ event, data: data.join('\n'), at: Date.now() });
    }
  }
}
