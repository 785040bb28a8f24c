/**
 * What a daemon's stop leaves behind and what it answers while it stops, through a real `platform serve` subprocess
 * and the real CLI: config programs it started (spawned in process groups of their own) are killed with it, and
 * commands racing the stop complete or are refused in words, never reset.
 */
import test from 'ava';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { groupAlive } from '../lib/system/process-group.js';
import { killAtTeardown, lines, makeWorkspace, poll } from './helpers/jobs-fixture.js';
import { serveSubprocess } from './helpers/serve-subprocess.js';
import type { CliResult } from './helpers/cli-against.js';

const BIN = join(fileURLToPath(new URL('../../', import.meta.url)), 'bin', 'platform');

/** The CLI in the workspace, as a user runs it (the daemon found through server.json). */
function cli(dir: string, ...args: string[]): Promise<CliResult> {
  const env = { ...process.env, NO_COLOR: '1', PLATFORM_IDLE_TIMEOUT: '1m' };
  const child = spawn(process.execPath, [BIN, '-C', dir, ...args], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

test('platform stop kills the config programs its daemon is running, and what they started', async (t) => {
  const dir = makeWorkspace(t, {
    'platform.json': JSON.stringify({ jobs: [{ label: 'x', outputs: ['x/(?<k>.+)'], config: ['sh', 'cfg.sh'], exec: ['true'] }] }),
    // Its own pid, then a child that sleeps: both must go with the daemon.
    'cfg.sh': 'echo $$ >> cfg.pid\nsleep 30 &\necho $! >> cfg.pid\nwait\necho \'{"configs":[]}\'\n',
  });
  killAtTeardown(t, () => lines(dir, 'cfg.pid').map(Number));
  await serveSubprocess(t, dir);
  const made = await cli(dir, 'want', 'create', '--partition', 'x/slow9', '--json');
  t.is(made.code, 0, made.stderr);
  t.true(await poll(() => lines(dir, 'cfg.pid').length === 2, 10_000), 'the config program started');
  const [program, sleeper] = lines(dir, 'cfg.pid').map(Number) as [number, number];
  t.true(groupAlive(program));

  const stop = await cli(dir, 'stop');
  t.is(stop.code, 0, stop.stderr);
  t.true(await poll(() => !groupAlive(program), 2_000), `config program group ${program} left running after the stop`);
  t.throws(() => process.kill(sleeper, 0), { code: 'ESRCH' }, 'its child is gone too');
});
