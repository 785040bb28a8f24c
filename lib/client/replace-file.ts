/** A small file a reader must see whole or not at all: written beside, then renamed over it (atomic on one file system). */
import { readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { isPidAlive } from '../system/pid-liveness.js';

/** The paths this process has cleared of dead writers' temps. */
const looked = new Set<string>();

/**
 * Writes `text` to `path` through `<path>.<pid>.tmp`, for this user alone; a failed rename leaves no `.tmp`. The
 * temps of earlier writers that died between their write and their rename (a daemon killed while it started) are
 * removed first: no later writer has their pid, so nothing else would.
 */
export function replaceFile(path: string, text: string): void {
  // Once a process: a daemon's start news is rewritten every 250 ms of a replay, and what was left before it began
  // is gone after the first look.
  if (!looked.has(path)) {
    looked.add(path);
    removeDeadWritersTemps(path);
  }
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, text, { mode: 0o600 });
  try {
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}

/**
 * How old a dead writer's temp must be to be removed: a writer's pid is looked up in this process's pid namespace, and
 * one in another (a container sharing the workspace) looks dead while it writes. Its write and rename take
 * milliseconds; a temp a minute old is no writer's any more.
 */
const STALE_TEMP_MS = 60_000;

/**
 * Removes the temps beside `path` whose writer is no longer alive, once stale (STALE_TEMP_MS). A live writer's is
 * left: it may be between its write and its rename, which would then fail. Best effort: a temp it cannot list or
 * remove is left as it was, and the write goes on (a stale temp only takes room).
 */
export function removeDeadWritersTemps(path: string, alive: (pid: number) => boolean = isPidAlive): void {
  const dir = dirname(path);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  const staleBefore = Date.now() - STALE_TEMP_MS;
  for (const name of deadWritersTemps(basename(path), names, alive)) {
    try {
      if (statSync(join(dir, name)).mtimeMs > staleBefore) continue;
      rmSync(join(dir, name), { force: true });
    } catch {
      // Not ours to remove (another owner, a directory): left.
    }
  }
}

/** Of the names in a directory, the temps of `base` (`<base>.<pid>.tmp`) whose writer `alive` says is gone. */
export function deadWritersTemps(base: string, names: readonly string[], alive: (pid: number) => boolean): string[] {
  const prefix = `${base}.`;
  return names.filter((name) => {
    if (!name.startsWith(prefix) || !name.endsWith('.tmp')) return false;
    const pid = name.slice(prefix.length, -'.tmp'.length);
    return /^[1-9][0-9]{0,9}$/.test(pid) && !alive(Number(pid));
  });
}
