/**
 * `.platform/daemon.lock`: the exclusive right to check for the workspace's daemon and start one. Created with
 * O_CREAT|O_EXCL (`openSync(path, 'wx')`), so of two clients that race, exactly one gets it; the other waits
 * for the winner's server. The file holds the owner's pid, a random token and its creation time, so a lock left
 * by a client that died (pid gone) or hung (older than `staleMs`) can be broken.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, linkSync, openSync, readFileSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { isPidAlive } from '../system/pid-liveness.js';
import { platformDir } from './workspace.js';

export interface LockOwner {
  pid: number;
  token: string;
  created_at: string;
}

export interface DaemonLock {
  readonly path: string;
  readonly owner: LockOwner;
  /** Removes the lock file if it is still this lock's (idempotent). */
  release(): void;
}

/** A lock younger than this whose content is not written yet is being created, not abandoned. */
const UNWRITTEN_GRACE_MS = 5_000;
/** Default: longer than any legitimate hold (stop an old server, start a new one, wait for it). */
export const DEFAULT_LOCK_STALE_MS = 120_000;

export function daemonLockPath(root: string): string {
  return join(platformDir(root), 'daemon.lock');
}

function readOwner(path: string): LockOwner | undefined {
  try {
    const v = JSON.parse(readFileSync(path, 'utf8')) as Partial<LockOwner>;
    if (typeof v.pid !== 'number' || typeof v.token !== 'string') return undefined;
    return { pid: v.pid, token: v.token, created_at: String(v.created_at ?? '') };
  } catch {
    return undefined;
  }
}

/** Who holds the lock now, if anyone (undefined also while its owner is still writing it). */
export function lockHolder(root: string): LockOwner | undefined {
  return readOwner(daemonLockPath(root));
}

interface StaleLock {
  reason: string;
  /** What identifies the file judged stale: its token, or for an unreadable one its mtime. */
  token: string | undefined;
  mtimeMs: number;
}

/** Why the lock at `path` may be broken, or undefined when its holder looks legitimate (or there is none). */
function staleLock(path: string, staleMs: number): StaleLock | undefined {
  let mtimeMs: number;
  try {
    mtimeMs = statSync(path).mtimeMs;
  } catch {
    return undefined; // gone: just retry
  }
  const age = Date.now() - mtimeMs;
  const owner = readOwner(path);
  if (!owner) {
    return age > UNWRITTEN_GRACE_MS ? { reason: 'unreadable and old', token: undefined, mtimeMs } : undefined;
  }
  if (!isPidAlive(owner.pid)) return { reason: `its owner pid ${owner.pid} is gone`, token: owner.token, mtimeMs };
  if (age > staleMs) return { reason: `held for ${Math.round(age / 1000)} s by pid ${owner.pid}`, token: owner.token, mtimeMs };
  return undefined;
}

/**
 * Breaks a stale lock without ever removing a fresh one: move it aside (atomic), check that what was moved is
 * the stale lock judged above, and if another client replaced it in between, put that one back.
 */
function breakStale(path: string, stale: StaleLock): void {
  const aside = `${path}.stale.${process.pid}.${randomBytes(4).toString('hex')}`;
  try {
    renameSync(path, aside);
  } catch {
    return; // someone else broke or released it first
  }
  const moved = readOwner(aside);
  let movedMtime = -1;
  try {
    movedMtime = statSync(aside).mtimeMs;
  } catch {
    // vanished: nothing to check
  }
  const same = stale.token !== undefined ? moved?.token === stale.token : !moved && movedMtime === stale.mtimeMs;
  if (!same) {
    try {
      linkSync(aside, path); // fails (EEXIST) if a third client has locked since: then that one holds it
    } catch {
      // nothing to restore into
    }
  }
  rmSync(aside, { force: true });
}

/** Takes the lock if free (or stale), else returns undefined at once. */
export function tryAcquireDaemonLock(root: string, staleMs = DEFAULT_LOCK_STALE_MS): DaemonLock | undefined {
  const path = daemonLockPath(root);
  for (let attempt = 0; attempt < 3; attempt++) {
    let fd: number;
    try {
      fd = openSync(path, 'wx');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const stale = staleLock(path, staleMs);
      if (!stale) return undefined;
      breakStale(path, stale);
      continue;
    }
    const owner: LockOwner = { pid: process.pid, token: randomBytes(8).toString('hex'), created_at: new Date().toISOString() };
    try {
      writeSync(fd, `${JSON.stringify(owner)}\n`);
    } finally {
      closeSync(fd);
    }
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      process.removeListener('exit', release);
      if (readOwner(path)?.token === owner.token) rmSync(path, { force: true });
    };
    // A client that exits while holding the lock (an uncaught error) leaves no lock behind.
    process.once('exit', release);
    return { path, owner, release };
  }
  return undefined;
}
