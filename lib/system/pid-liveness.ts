/** Whether a pid is a live process: what a client checks before it trusts a server.json, and the executor too. */
import { readFileSync } from 'node:fs';

/**
 * Whether a process with this pid exists (`kill(pid, 0)`; EPERM counts as alive). A zombie (exited, not yet
 * reaped by its parent) counts as dead.
 */
export function isPidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  return !isZombie(pid);
}

function isZombie(pid: number): boolean {
  if (process.platform !== 'linux') return false;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // "pid (comm) S ...": comm may hold spaces and parens, so look after the last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z';
  } catch {
    return false;
  }
}
