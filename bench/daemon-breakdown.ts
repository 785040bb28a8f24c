/**
 * Where an intake's time went, from the daemon's own /metrics and /proc, read before and after the load: how many
 * steps it took and how many wants a step carried, a step's mean time and the synced write's inside it, and the
 * daemon's CPU a want. The figures that explain goal 2 (docs/decisions.md, "Speed, session 15"): a want waits for the
 * step under way and then its own, so intake is about clients / (2 x step).
 */
import { readFileSync } from 'node:fs';
import { get as httpGet } from 'node:http';

export interface Breakdown {
  steps: number;
  wantsPerStep: number;
  stepMs: number;
  syncedWriteMs: number;
  /** The daemon process's CPU (all its threads: user + system) per want, in microseconds. */
  cpuUsPerWant: number;
}

interface Reading {
  metrics: Map<string, number>;
  cpuMs: number;
}

/** A reading of the daemon `pid` serving at `url`. */
export async function readDaemon(url: string, pid: number): Promise<Reading> {
  const metrics = new Map<string, number>();
  for (const line of (await metricsText(url)).split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    metrics.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return { metrics, cpuMs: cpuMsOf(pid) };
}

export function breakdown(before: Reading, after: Reading, wants: number): Breakdown {
  const d = (name: string): number => (after.metrics.get(name) ?? 0) - (before.metrics.get(name) ?? 0);
  const steps = d('platform_step_duration_seconds_count');
  const synced = d('platform_log_write_duration_seconds_count{synced="true"}');
  return {
    steps,
    wantsPerStep: steps > 0 ? wants / steps : 0,
    stepMs: steps > 0 ? (d('platform_step_duration_seconds_sum') * 1000) / steps : 0,
    syncedWriteMs: synced > 0 ? (d('platform_log_write_duration_seconds_sum{synced="true"}') * 1000) / synced : 0,
    cpuUsPerWant: wants > 0 ? ((after.cpuMs - before.cpuMs) * 1000) / wants : 0,
  };
}

/**
 * GET /metrics on a connection of its own: a kept-alive one (the benches' agent, or fetch's) may have been closed by
 * the daemon while wrk ran, unseen by this process, which execFileSync held.
 */
function metricsText(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = httpGet(`${url}/metrics`, { agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => (res.statusCode === 200 ? resolve(text) : reject(new Error(`GET /metrics: ${res.statusCode} ${text}`))));
    });
    req.on('error', reject);
  });
}

/** utime + stime of a process, in ms (/proc's clock ticks are 10 ms: USER_HZ is 100 on Linux). */
function cpuMsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

export function describeBreakdown(b: Breakdown): string {
  return `${b.steps} steps, ${b.wantsPerStep.toFixed(1)} wants a step; a step ${b.stepMs.toFixed(2)} ms, its synced write ${b.syncedWriteMs.toFixed(2)} ms; daemon CPU ${b.cpuUsPerWant.toFixed(0)} us a want`;
}
