/**
 * A worker's jobs run in process groups of their own, so a worker killed with `kill -9` would leave them running
 * while the daemon, seeing its lease expire, runs them again elsewhere. This watchdog, a `sh` loop in a session of
 * its own, waits for the worker to die and then kills every process that carries the worker's token in its
 * environment (jobs inherit it, and their children from them): a run never executes twice at once.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';

export const WORKER_TOKEN_VAR = 'PLATFORM_WORKER_TOKEN';

const SCRIPT = [
  'w=$1; t=$2',
  'while kill -0 "$w" 2>/dev/null; do sleep 0.2; done',
  // One grep over every environment (NUL-separated entries), not a process per pid: it is done in milliseconds.
  `for e in $(grep -l -z -x "${WORKER_TOKEN_VAR}=$t" /proc/[0-9]*/environ 2>/dev/null); do p=\${e#/proc/}; kill -KILL "\${p%/environ}" 2>/dev/null; done`,
].join('\n');

/** Starts the watchdog of this process; returns the token to put in each job's environment. */
export function startOrphanWatchdog(): string {
  const token = randomBytes(12).toString('hex');
  const child = spawn('/bin/sh', ['-c', SCRIPT, 'platform-worker-watchdog', String(process.pid), token], { detached: true, stdio: 'ignore' });
  child.on('error', () => {});
  child.unref();
  return token;
}
