/** `platform serve` as a subprocess for the benches: started on a free port, timed until `/health` answers; stopped. */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { CACHE_AFTER_MS } from '../lib/cli/compile-cache.js';
import { get, postWant } from './http-client.js';

const BIN = fileURLToPath(new URL('../../bin/platform', import.meta.url));

export async function serve(dir: string): Promise<{ url: string; child: ChildProcess; startedMs: number }> {
  const t0 = performance.now();
  // BENCH_SERVE_NODE_ARGS="--cpu-prof --cpu-prof-dir=..." profiles the daemon of a bench (NODE_OPTIONS may not).
  const nodeArgs = process.env.BENCH_SERVE_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  const child = spawn(process.execPath, [...nodeArgs, BIN, 'serve', '--port', '0', '--idle-timeout', '1h'], { cwd: dir, stdio: ['ignore', 'pipe', 'ignore'] });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /Listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`platform serve exited (${code}): ${out}`)));
  });
  for (;;) {
    const ok = await fetch(`${url}/health`).then((r) => r.ok, () => false);
    if (ok) break;
    await new Promise((r) => setTimeout(r, 5));
  }
  return { url, child, startedMs: performance.now() - t0 };
}

export async function kill(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  // One that already exited would never say so again (a bench's clean-up after its own kill -9).
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill(signal);
  await exited;
}

/**
 * One daemon in `dir` (a workspace whose job `warm/<n>` is `true`) that builds a partition and runs until it has
 * written its V8 code cache (lib/cli/compile-cache.ts), so that the daemons the bench times start from it, as a
 * user's do after the first.
 */
export async function warmCompileCache(dir: string): Promise<void> {
  const started = performance.now();
  const { url, child } = await serve(dir);
  try {
    const { want_id } = await postWant(url, { partitions: ['warm/1'] });
    while (JSON.parse(await get(url, `/api/wants/${want_id}`)).status !== 'successful') await new Promise((r) => setTimeout(r, 20));
    await new Promise((r) => setTimeout(r, Math.max(0, CACHE_AFTER_MS + 500 - (performance.now() - started))));
  } finally {
    await kill(child, 'SIGTERM');
  }
}
