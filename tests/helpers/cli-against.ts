/**
 * The real CLI as a subprocess: talking to a given server (`--server-url`), colours as a pipe gets them; or in a
 * workspace, finding (or starting) its daemon as a user's command does.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const BIN = join(REPO, 'bin', 'platform');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function cliAgainst(url: () => string): (...args: string[]) => Promise<CliResult> {
  return (...args) => {
    const env = { ...process.env };
    delete env.FORCE_COLOR;
    delete env.NO_COLOR;
    const child = spawn(process.execPath, [BIN, '--server-url', url(), ...args], { cwd: REPO, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
  };
}

/** `platform -C <dir> <args>` run in `dir`, with `env` added to the test's environment (no colour). */
export function cliIn(dir: string, env: NodeJS.ProcessEnv, ...args: string[]): Promise<CliResult> {
  const child = spawn(process.execPath, [BIN, '-C', dir, ...args], { cwd: dir, env: { ...process.env, NO_COLOR: '1', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}
