/**
 * Where a job's program is, found as execvp would find it (a name with a slash from the working directory, else
 * on PATH), so a run under a shell supervisor fails with the same words as a direct spawn when it cannot start,
 * and the shell runs that very file (never a shell builtin of the same name).
 */
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, resolve } from 'node:path';

export type ProgramLookup = { path: string } | { error: NodeJS.ErrnoException };

export function findProgram(program: string, cwd: string, pathEnv: string | undefined): ProgramLookup {
  if (program.includes('/')) return check(resolve(cwd, program));
  let denied: ProgramLookup | undefined;
  for (const dir of (pathEnv ?? '/usr/local/bin:/usr/bin:/bin').split(delimiter)) {
    const found = check(resolve(cwd, dir === '' ? '.' : dir, program));
    if ('path' in found) return found;
    if (found.error.code === 'EACCES') denied ??= found;
  }
  return denied ?? { error: errno('ENOENT', program) };
}

function check(path: string): ProgramLookup {
  try {
    if (!statSync(path).isFile()) return { error: errno('EACCES', path) };
    accessSync(path, constants.X_OK);
    return { path };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code === 'EACCES' ? 'EACCES' : 'ENOENT';
    return { error: errno(code, path) };
  }
}

function errno(code: string, path: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: ${path}`), { code, path });
}
