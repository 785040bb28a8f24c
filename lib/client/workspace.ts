/** A workspace is the nearest ancestor directory holding a `.platform/` marker. */
import { existsSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

export const MARKER = '.platform';

export class NoWorkspaceError extends Error {
  constructor(readonly from: string) {
    super(`No platform workspace at ${from} or any directory above it (none has a ${MARKER}/ directory). Run 'platform init' in your project's root, or pass -C <dir>.`);
    this.name = 'NoWorkspaceError';
  }
}

export class NoDirectoryError extends Error {
  constructor(
    readonly dir: string,
    what = 'No directory',
  ) {
    super(`${what} ${dir}: check the path given to -C (--workspace).`);
    this.name = 'NoDirectoryError';
  }
}

export function findWorkspaceRoot(from: string): string {
  let dir = resolve(from);
  if (!existsSync(dir)) throw new NoDirectoryError(dir);
  // A file is no workspace, nor a place to look up from (its directory's workspace would be taken silently).
  if (!statSync(dir).isDirectory()) throw new NoDirectoryError(dir, 'Not a directory:');
  for (;;) {
    const marker = join(dir, MARKER);
    if (existsSync(marker) && statSync(marker).isDirectory()) return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new NoWorkspaceError(resolve(from));
    dir = parent;
  }
}

export function platformDir(root: string): string {
  return join(root, MARKER);
}
