/** Why a job's program could not start, said so the reader knows what to fix in platform.json. */
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { errorMessage } from '../errors.js';

/**
 * Where a run starts when not on the daemon's machine: a `platform worker`, whose own directory and PATH are then at
 * fault as much as platform.json, so the reason names it and them.
 */
export interface SpawnPlace {
  /** The worker's name. */
  worker: string;
  /** What chose the working directory, e.g. "the worker's --workdir". */
  cwdSource: string;
}

/**
 * A message that names the program and says what to fix. `jobPath`: the PATH the job's own `env` in platform.json
 * sets, when it sets one: the program is looked up there, not on the daemon's or the worker's PATH, so that is what
 * to check (blaming the worker's PATH sent the reader to the wrong machine).
 */
export function spawnFailureReason(program: string, cwd: string, err: unknown, place?: SpawnPlace, jobPath?: string): string {
  const code = (err as NodeJS.ErrnoException)?.code;
  const prefix = `could not start '${program}'${place ? ` on worker ${place.worker}` : ''}`;
  if (code === 'ENOENT' || code === 'ENOTDIR') {
    if (!isDirectory(cwd)) return `${prefix}: working directory '${cwd}' does not exist${place ? ` there (${place.cwdSource})` : ''}`;
    if (program.includes('/') && existsSync(join(cwd, program)))
      return `${prefix}: its interpreter (the #! line) was not found; check the script`;
    if (jobPath !== undefined && !program.includes('/'))
      return `${prefix}: not found on the PATH the job's env in platform.json sets (${JSON.stringify(jobPath)}); check env.PATH and exec in platform.json`;
    if (place && !program.includes('/')) return `${prefix}: not found on its PATH; check exec in platform.json, and the PATH worker ${place.worker} runs with`;
    return `${prefix}: not found; check exec in platform.json`;
  }
  if (code === 'EACCES') return `${prefix}: permission denied (is it executable?); check exec in platform.json`;
  const message = errorMessage(err);
  return `${prefix}: ${message}`;
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
