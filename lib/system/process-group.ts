/** Signals to a job's (or config program's) whole process group, so its children go with it. */

/**
 * Sends `signal` to the group `pid` leads; if there is no such group and `orProcess`, to the process itself.
 * False when nothing was signalled. A pid of 0 or less is refused: kill(-0) would signal our own group.
 */
export function signalGroup(pid: number, signal: NodeJS.Signals, orProcess = true): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    if (!orProcess) return false;
    try {
      process.kill(pid, signal);
      return true;
    } catch {
      return false; // already gone
    }
  }
}

/** Whether any process is left in the group `pid` led (one of another user's counts: EPERM). */
export function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
