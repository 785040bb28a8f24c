/**
 * Where a job's program is, found as execvp would find it (a name with a slash from the working directory, else
 * on PATH), so a run under a shell supervisor fails with the same words as a direct spawn when it cannot start,
 * and the shell runs that very file (never a shell builtin of the same name).
 */
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, resolve } from 'node:path';

export type ProgramLookup = { path: string } | { error: NodeJS.ErrnoException };

/**
 * Found paths, for a while: a DAG runs the same few programs thousands of times, and a PATH walk is several stats
 * (a program removed meanwhile fails in the shell, 127 and its message in stderr.log).
 */
const FOUND_FOR_MS = 10_000;
const found = new Map<string, { path: string; at: number }>();

export function findProgram(program: string, cwd: string, pathEnv: string | undefined): ProgramLookup {
  const key = `${cwd}\0${pathEnv ?? ''}\0${program}`;
  const now = Date.now();
  const hit = found.get(key);
  if (hit && now - hit.at < FOUND_FOR_MS) return { path: hit.path };
  const result = lookUp(program, cwd, pathEnv);
  if ('path' in result) {
    if (found.size >= 1000) found.clear();
    found.set(key, { path: result.path, at: now });
  }
  return result;
}

function lookUp(program: string, cwd: string, pathEnv: string | undefined): ProgramLookup {
  if (program.includes('/')) return toLookup(resolve(cwd, program), check(resolve(cwd, program)));
  let denied: string | undefined;
  for (const dir of (pathEnv ?? '/usr/local/bin:/usr/bin:/bin').split(delimiter)) {
    const path = resolve(cwd, dir === '' ? '.' : dir, program);
    const code = check(path);
    if (code === undefined) return { path };
    if (code === 'EACCES') denied ??= path;
  }
  return denied ? { error: errno('EACCES', denied) } : { error: errno('ENOENT', program) };
}

/** Undefined when `path` is an executable file; else why not. */
function check(path: string): 'ENOENT' | 'EACCES' | undefined {
  const stat = statSync(path, { throwIfNoEntry: false });
  if (!stat) return 'ENOENT';
  if (!stat.isFile()) return 'EACCES';
  try {
    accessSync(path, constants.X_OK);
    return undefined;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EACCES' ? 'EACCES' : 'ENOENT';
  }
}

function toLookup(path: string, code: 'ENOENT' | 'EACCES' | undefined): ProgramLookup {
  return code === undefined ? { path } : { error: errno(code, path) };
}

function errno(code: string, path: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: ${path}`), { code, path });
}
