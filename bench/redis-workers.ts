/**
 * The pipeline through the Redis executor: a redis-server of its own (AOF fsynced every second, noeviction), one
 * `platform worker` process taking two runs at a time, the daemon's side embedded. What it adds over local runs is
 * the queue's round trips and the output's copy through Redis streams.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { RedisExecutor } from '../lib/executor/redis/redis-executor.js';
import type { PlatformOptions } from '../lib/platform.js';

const BIN = fileURLToPath(new URL('../../bin/platform', import.meta.url));

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

function waitForLine(child: ChildProcess, re: RegExp): Promise<void> {
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (re.test(out)) resolve();
    });
    child.once('exit', (code) => reject(new Error(`exited with ${code} before ${re}: ${out}`)));
  });
}

export async function redisBench<T>(dir: string, run: (executor: PlatformOptions['executor']) => Promise<T>): Promise<T> {
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  const redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--appendonly', 'yes', '--maxmemory-policy', 'noeviction', '--save', ''], { stdio: ['ignore', 'pipe', 'ignore'] });
  let worker: ChildProcess | undefined;
  try {
    await waitForLine(redis, /Ready to accept connections/);
    worker = spawn(process.execPath, [BIN, 'worker', '--redis', url, '--concurrency', '2', '--name', 'bench'], { cwd: dir, stdio: ['ignore', 'pipe', 'ignore'] });
    await waitForLine(worker, /takes runs/);
    return await run((workspaceRoot) => new RedisExecutor({ redisUrl: url, workspaceRoot }));
  } finally {
    worker?.kill('SIGKILL');
    redis.kill('SIGKILL');
  }
}
