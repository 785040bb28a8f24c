/** Why a job's program could not start, said so the reader knows what to fix in platform.json. */
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { errorMessage } from '../errors.js';

/** A message that names the program and says what to fix. */
export function spawnFailureReason(program: string, cwd: string, err: unknown): string {
  const code = (err as NodeJS.ErrnoException)?.code;
  const prefix = `could not start '${program}'`;
  if (code === 'ENOENT' || code === 'ENOTDIR') {
    if (!isDirectory(cwd)) return `${prefix}: working directory '${cwd}' does not exist`;
    if (program.includes('/') && existsSync(join(cwd, program)))
      return `${prefix}: its interpreter (the #! line) was not found; check the script`;
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
