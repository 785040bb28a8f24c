/**
 * wrk (Debian's package) as the bench's HTTP client where it is installed: a load generator in C whose cost per
 * request is a few microseconds, so a figure is the daemon's, not a node client's sharing the two cores with it
 * (node's `http` client costs ~0.35 ms of CPU a request, and its own garbage collection lands in the p99).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

let here: boolean | undefined;

/** Whether wrk is installed (and not turned off with BENCH_WRK=0). */
export function haveWrk(): boolean {
  here ??= process.env.BENCH_WRK !== '0' && spawnSync('sh', ['-c', 'command -v wrk'], { stdio: 'ignore' }).status === 0;
  return here;
}

/**
 * Runs wrk with a Lua script (written to `dir`) for `seconds` and returns what it printed; any answer but
 * `okStatus`, or a socket error, fails the bench with wrk's output.
 */
export function runWrk(dir: string, url: string, lua: string[], opts: { threads: number; connections: number; seconds: number; okStatus: number }): string {
  const script = join(dir, `wrk-${process.pid}-${Date.now()}.lua`);
  writeFileSync(
    script,
    [
      ...lua,
      'bad = 0',
      `function response(status, headers, body) if status ~= ${opts.okStatus} then bad = bad + 1 end end`,
      // Exact percentiles (in microseconds) where --latency prints rounded ones.
      'function done(summary, latency, requests)',
      '  io.write(string.format("PERCENTILES %d %d %d\\n", latency:percentile(50), latency:percentile(99), summary.requests))',
      'end',
      '',
    ].join('\n'),
  );
  const out = execFileSync('wrk', [`-t${opts.threads}`, `-c${opts.connections}`, `-d${opts.seconds}s`, '-s', script, url], { encoding: 'utf8' });
  if (/Non-2xx or 3xx responses/.test(out) || /Socket errors/.test(out)) throw new Error(`wrk saw failed requests:\n${out}`);
  return out;
}

/**
 * `connections` connections post one-partition wants back to back for `seconds`, each for partitions of its own
 * (`prefix`, then the thread's and the request's numbers); any answer but 201 fails the bench.
 */
export function wrkPostWants(dir: string, url: string, prefix: string, opts: { connections: number; seconds: number }): { perSecond: number; sent: number } {
  const lua = [
    'local counter = 0',
    'local threads = {}',
    'function setup(thread) thread:set("tid", #threads + 1); table.insert(threads, thread) end',
    'function request()',
    '  counter = counter + 1',
    `  return wrk.format("POST", "/api/wants", {["Content-Type"] = "application/json"}, '{"partitions":["${prefix}' .. tid .. '-' .. counter .. '"]}')`,
    'end',
  ];
  const out = runWrk(dir, url, lua, { threads: 2, connections: opts.connections, seconds: opts.seconds, okStatus: 201 });
  const perSecond = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1]);
  const sent = Number(/(\d+) requests in/.exec(out)?.[1]);
  if (!(perSecond > 0) || !(sent > 0)) throw new Error(`wrk printed no rate:\n${out}`);
  return { perSecond, sent };
}

export interface WrkLatency {
  p50: number;
  p99: number;
  /** How many requests the figures are of. */
  requests: number;
}

/**
 * Latency of one request at a time (one connection, each request sent when the last answer came, as a person or a
 * script reading would), for `seconds`; `path` is a Lua expression evaluated for each request. Milliseconds.
 */
export function wrkLatency(dir: string, url: string, path: string, seconds: number): WrkLatency {
  const out = runWrk(dir, url, ['function request()', `  return wrk.format("GET", ${path})`, 'end'], { threads: 1, connections: 1, seconds, okStatus: 200 });
  const m = /PERCENTILES (\d+) (\d+) (\d+)/.exec(out);
  if (!m) throw new Error(`wrk printed no percentiles:\n${out}`);
  return { p50: Number(m[1]) / 1000, p99: Number(m[2]) / 1000, requests: Number(m[3]) };
}
