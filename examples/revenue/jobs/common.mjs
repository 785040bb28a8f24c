// Helpers shared by the example jobs: where a partition's file lives, and writing it atomically.
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** Every partition is one file under data/, named after its ref: `raw/orders/date=2026-01-05` -> `data/raw/orders/date=2026-01-05.csv`. */
export function dataFile(ref, ext) {
  return join('data', `${ref}.${ext}`);
}

/** Write to a temp file, then rename: a reader never sees half a partition, a killed job leaves none. */
export function writeAtomic(path, text) {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, path);
}

/** The protocol line a job prints when an input is not there: the platform builds them and runs the job again. */
export function missingDeps(refs) {
  console.log(`PLATFORM_MISSING_DEPS ${JSON.stringify({ missing: refs })}`);
  process.exit(1);
}

export function fail(message) {
  console.error(message);
  process.exit(2);
}

export const DATE = /^\d{4}-\d{2}-\d{2}$/;
