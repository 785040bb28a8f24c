/** `platform serve` on a workspace as a subprocess of the test, as a user's daemon runs (its own process, the bundle). */
import type { ExecutionContext } from 'ava';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readServerInfo } from '../../lib/client/server-info.js';
import { killAtTeardown, poll } from './jobs-fixture.js';

const BIN = join(fileURLToPath(new URL('../../../', import.meta.url)), 'bin', 'platform');

/** Its URL once it answers; `kill9` ends it with SIGKILL and resolves once it is gone. */
export async function serveSubprocess(t: Pick<ExecutionContext, 'teardown'>, dir: string): Promise<{ url: string; kill9: () => Promise<void> }> {
  const child = spawn(process.execPath, [BIN, '-C', dir, 'serve', '--port', '0', '--idle-timeout', '1h'], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  killAtTeardown(t, () => (child.exitCode === null && child.signalCode === null ? [child.pid ?? 0] : []));
  const up = await poll(() => readServerInfo(dir)?.pid === child.pid, 15_000, 50);
  if (!up) throw new Error(`platform serve did not start: ${stderr}`);
  const url = `http://127.0.0.1:${readServerInfo(dir)!.port}`;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return { url, kill9: async () => (child.kill('SIGKILL'), await exited) };
}
