/**
 * A real redis-server for a test: on a free loopback port, its data in a temp dir, configured as BullMQ requires
 * (noeviction, AOF fsynced on every write). Undefined, with the reason, when redis-server is not installed: the
 * caller skips saying so.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ExecutionContext } from 'ava';

export interface RedisServer {
  url: string;
  port: number;
  /** Kills it with SIGKILL and starts it again on the same port and data (AOF replayed). */
  restart(): Promise<void>;
  /** Kills it with SIGKILL, to be started again by `restart`. */
  stop(): Promise<void>;
  /** Stops it with SIGSTOP (a hung server: its connections stay up, nothing answers), or lets it go on (SIGCONT). */
  freeze(frozen: boolean): void;
  /** The server's pid now (a restart changes it). */
  pid(): number;
}

export const redisMissing: string | undefined =
  spawnSync('sh', ['-c', 'command -v redis-server']).status === 0
    ? undefined
    : 'redis-server is not installed (apt-get install redis-server; .ci/run does it when it can): the Redis executor tests are skipped';

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export async function startRedis(t: ExecutionContext): Promise<RedisServer> {
  const dir = mkdtempSync(join(tmpdir(), 'platform-redis-'));
  const port = await freePort();
  let child: ChildProcess | undefined;
  const launch = async (): Promise<void> => {
    child = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--appendonly', 'yes', '--appendfsync', 'always', '--maxmemory-policy', 'noeviction', '--save', ''],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`redis-server did not start: ${out}`)), 10_000);
      child!.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        if (/Ready to accept connections/.test(out)) {
          clearTimeout(timer);
          resolve();
        }
      });
      child!.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`redis-server exited (${code}): ${out}`));
      });
    });
  };
  const stop = async (): Promise<void> => {
    const old = child!;
    if (old.exitCode !== null || old.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      old.once('exit', () => resolve());
      old.kill('SIGKILL');
    });
  };
  await launch();
  t.teardown(() => {
    child?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    restart: async () => {
      await stop();
      await launch();
    },
    stop,
    freeze: (frozen) => void child!.kill(frozen ? 'SIGSTOP' : 'SIGCONT'),
    pid: () => child!.pid!,
  };
}
