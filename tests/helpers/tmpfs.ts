/**
 * A small tmpfs to fill, for tests of a full disk. Mounting one needs root (or a user namespace's): where it cannot be
 * mounted, `mountTmpfs` says why, and the test is skipped saying so.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A tmpfs of `sizeMiB` (and `inodes`, when given) mounted on a new temp directory, or why it could not be. */
export function mountTmpfs(sizeMiB: number, inodes?: number): { dir: string; unmount: () => void } | string {
  const dir = mkdtempSync(join(tmpdir(), 'platform-full-'));
  const options = `size=${sizeMiB}m${inodes === undefined ? '' : `,nr_inodes=${inodes}`}`;
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', options, 'tmpfs', dir], { encoding: 'utf8' });
  if (r.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    return (r.stderr || r.error?.message || `mount exited ${r.status}`).trim();
  }
  return {
    dir,
    unmount: () => {
      spawnSync('umount', ['-l', dir]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Writes filler files (of `bytes` each: 0 takes inodes alone) until the disk says ENOSPC; returns their paths. */
export function fill(dir: string, bytes = 64 * 1024): string[] {
  const files: string[] = [];
  for (let i = 0; ; i++) {
    const file = join(dir, `filler-${bytes}-${i}`);
    try {
      writeFileSync(file, Buffer.alloc(bytes, 1));
      files.push(file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOSPC') return files;
      throw err;
    }
  }
}

/** Why a tmpfs cannot be mounted here, or undefined when it can (a probe, unmounted at once). */
export function whyNoTmpfs(): string | undefined {
  const probe = mountTmpfs(1);
  if (typeof probe === 'string') return probe;
  probe.unmount();
  return undefined;
}
