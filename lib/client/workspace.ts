/** A workspace is the nearest ancestor directory holding a `.platform/` marker. */
import { existsSync, realpathSync, statSync } from 'node:fs';
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
  const given = resolve(from);
  if (!existsSync(given)) throw new NoDirectoryError(given);
  // A file is no workspace, nor a place to look up from (its directory's workspace would be taken silently).
  if (!statSync(given).isDirectory()) throw new NoDirectoryError(given, 'Not a directory:');
  // Its real path: a workspace reached through a link is the same workspace (one daemon), and its daemon's path stays
  // true when the link goes.
  let dir = realpathSync(given);
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
