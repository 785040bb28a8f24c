/** A small file a reader must see whole or not at all: written beside, then renamed over it (atomic on one file system). */
import { renameSync, rmSync, writeFileSync } from 'node:fs';

/** Writes `text` to `path` through `<path>.<pid>.tmp`, for this user alone; a failed rename leaves no `.tmp`. */
export function replaceFile(path: string, text: string): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, text, { mode: 0o600 });
  try {
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}
