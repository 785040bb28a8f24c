/**
 * A worker's jobs run in process groups of their own, so a worker killed with `kill -9` would leave them running
 * while the daemon, seeing its lease expire, runs them again elsewhere. This watchdog, a `sh` loop in a session of
 * its own, waits for the worker to die and then kills every process that carries the worker's token in its
 * environment (jobs inherit it, and their children from them): a run never executes twice at once.
 *
 * A worker that is alive but does nothing (stopped with SIGSTOP, frozen in a debugger, an event loop that hangs)
 * loses its leases just the same, and cannot stop its jobs itself: so it keeps a deadline in a file, the time by
 * which its leases are known to hold no longer (rewritten as they are renewed), and the watchdog kills the token's
 * processes once that time has passed with the file not moved on.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { renameSync, writeFileSync } from 'node:fs';

export const WORKER_TOKEN_VAR = 'PLATFORM_WORKER_TOKEN';

const SCRIPT = [
  'w=$1; t=$2; f=$3',
  // One grep over every environment (NUL-separated entries), not a process per pid: it is done in milliseconds.
  `kill_jobs() { for e in $(grep -l -z -x "${WORKER_TOKEN_VAR}=$t" /proc/[0-9]*/environ 2>/dev/null); do p=\${e#/proc/}; kill -KILL "\${p%/environ}" 2>/dev/null; done; }`,
  'while kill -0 "$w" 2>/dev/null; do',
  // `date` only while the worker holds runs (the file is empty otherwise).
  '  d=; [ -r "$f" ] && read -r d < "$f" 2>/dev/null',
  '  if [ -n "$d" ] && [ "$(date +%s%3N)" -ge "$d" ]; then kill_jobs; fi',
  '  sleep 0.1',
  'done',
  'kill_jobs',
  // The worker's scratch directory (where the deadline is, and its runs' output files): a worker that closes removes
  // it, one killed left it for good, one more in the temp dir each time (thousands on a machine whose workers get
  // killed). The worker is gone: nothing uses it now.
  'case "${f%/*}" in */platform-worker-*) rm -rf "${f%/*}" ;; esac',
].join('\n');

/**
 * Starts the watchdog of this process, which reads the deadline of its leases from `deadlineFile`
 * (`writeLeaseDeadline`); returns the token to put in each job's environment.
 */
export function startOrphanWatchdog(deadlineFile: string): string {
  const token = randomBytes(12).toString('hex');
  const child = spawn('/bin/sh', ['-c', SCRIPT, 'platform-worker-watchdog', String(process.pid), token, deadlineFile], { detached: true, stdio: 'ignore' });
  child.on('error', () => {});
  child.unref();
  return token;
}

/**
 * Tells the watchdog when to kill this worker's jobs if it has not heard again by then (epoch ms), or, undefined,
 * never (no run held). Written whole then renamed: a half-written number would read as a deadline long past.
 */
export function writeLeaseDeadline(deadlineFile: string, deadline: number | undefined): void {
  const temp = `${deadlineFile}.tmp`;
  writeFileSync(temp, deadline === undefined ? '' : `${Math.floor(deadline)}\n`);
  renameSync(temp, deadlineFile);
}
