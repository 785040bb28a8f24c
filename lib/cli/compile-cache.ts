/**
 * Loads a CommonJS bundle with a V8 code cache beside it: the bytecode of every function the last process compiled,
 * so that this one neither parses the 2.5 MB bundle nor compiles the functions it runs first. A daemon answers its
 * first /health ~50-80 ms sooner with it (docs/decisions.md, "Speed, session 20"). Node 22 has this built in
 * (module.enableCompileCache); node 20, which we support, has only vm.Script's cachedData.
 *
 * The cache is written once a process has run CACHE_AFTER_MS, or at its exit if it ran at least CACHE_AT_EXIT_MS,
 * and only by a daemon that served (daemon-served.ts) and when none was loaded: a cache holds the functions compiled
 * when it was taken, and one that a `serve --help` or a start that failed wrote would hold little and stay. (Its run
 * time alone once decided: on a loaded machine a `serve --help` ran 2 s, and wrote one.) V8 refuses a cache made by another V8 or with
 * other flags; the file's name holds the bundle's size, mtime and inode besides, because V8 checks a source only by
 * its length, and bytecode of an older build of the same length would run in place of the new code.
 */
import { createHash } from 'node:crypto';
import { closeSync, fstatSync, mkdirSync, openSync, readFileSync, readdirSync, renameSync, statSync, unlinkSync, writeFileSync, type Stats } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';
import { Script, constants } from 'node:vm';
import { daemonServed } from './daemon-served.js';

export const CACHE_AFTER_MS = 5_000;
export const CACHE_AT_EXIT_MS = 2_000;

/**
 * PLATFORM_COMPILE_CACHE names the cache's directory (default: the bundle's own); PLATFORM_DISABLE_COMPILE_CACHE=1
 * turns it off. The same two switches as node 22's NODE_COMPILE_CACHE and NODE_DISABLE_COMPILE_CACHE.
 */
export function cacheDirectory(bundle: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.PLATFORM_DISABLE_COMPILE_CACHE && env.PLATFORM_DISABLE_COMPILE_CACHE !== '0') return undefined;
  return env.PLATFORM_COMPILE_CACHE || dirname(bundle);
}

interface CacheName {
  /** What the names of all caches of this bundle file start with, whatever its build. */
  readonly bundle: string;
  /** What the names of this build's caches start with. */
  readonly build: string;
  readonly name: string;
}

/**
 * `<bundle>.<path hash>.<size>-<mtime>-<inode>.<node>-<arch>-<flags>.v8cache`. The path's hash keeps apart the
 * caches of two installs that share a directory (each removes only its own older builds'); node's flags are in the
 * name because V8 refuses a cache made under others: a daemon profiled with --cpu-prof would otherwise replace the
 * cache every other daemon loads, and the next of those replace it back.
 */
function cacheName(bundlePath: string, st: Stats): CacheName {
  const hash = (text: string) => createHash('sha1').update(text).digest('hex').slice(0, 8);
  const bundle = `${basename(bundlePath)}.${hash(bundlePath)}.`;
  const build = `${bundle}${st.size}-${Math.trunc(st.mtimeMs)}-${st.ino}.`;
  const flags = hash(JSON.stringify([process.execArgv, process.env.NODE_OPTIONS ?? '']));
  return { bundle, build, name: `${build}${process.version}-${process.arch}-${flags}.v8cache` };
}

/** Why a directory may not hold a cache the daemon runs: another user's, or writable by all; undefined when it may. */
function unsafeDirectory(st: Stats): string | undefined {
  const uid = process.getuid?.();
  if (uid === undefined) return undefined;
  if (st.uid !== uid && st.uid !== 0) return "another user's";
  if ((st.mode & 0o002) !== 0) return 'writable by all';
  return undefined;
}

/**
 * Where the cache of `bundle` (whose stat is `st`) goes, for the loader and `platform doctor` alike. Not in a
 * directory of another user's or writable by all: a cache is code the daemon runs, and there anyone could plant it.
 * Group-writable is let be: with a umask of 002 (a group of one's own, as many systems give) every directory is, and
 * a group that may write there may as well write the bundle beside it. A directory not there yet may be made.
 */
type CacheLocation =
  | { state: 'off' }
  | { state: 'unsafe'; dir: string; why: string }
  | { state: 'usable'; dir: string; names: CacheName; file: string };

function cacheLocation(bundle: string, st: Stats): CacheLocation {
  const dir = cacheDirectory(bundle);
  if (dir === undefined) return { state: 'off' };
  let why: string | undefined;
  try {
    why = unsafeDirectory(statSync(dir));
  } catch {
    why = undefined;
  }
  if (why) return { state: 'unsafe', dir, why };
  const names = cacheName(bundle, st);
  return { state: 'usable', dir, names, file: join(dir, names.name) };
}

/** What a daemon started now would do with the cache (`platform doctor`): nothing is changed. */
export type CacheStatus =
  | { state: 'off' }
  | { state: 'no bundle'; bundle: string }
  | { state: 'unsafe'; dir: string; why: string }
  | { state: 'present'; file: string; bytes: number }
  | { state: 'absent'; dir: string };

export function compileCacheStatus(bundle: string): CacheStatus {
  let st: Stats;
  try {
    st = statSync(bundle);
  } catch {
    return cacheDirectory(bundle) === undefined ? { state: 'off' } : { state: 'no bundle', bundle };
  }
  const at = cacheLocation(bundle, st);
  if (at.state !== 'usable') return at;
  try {
    return { state: 'present', file: at.file, bytes: statSync(at.file).size };
  } catch {
    return { state: 'absent', dir: at.dir };
  }
}

function readIfThere(file: string): Buffer | undefined {
  try {
    return readFileSync(file);
  } catch {
    return undefined;
  }
}

/**
 * Writes the cache and removes those of other builds of the bundle (a directory outside dist/ outlives rebuilds);
 * a directory we may not write is no error.
 */
function writeCache(script: Script, dir: string, names: CacheName, say: (line: string) => void): void {
  const file = join(dir, names.name);
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const data = script.createCachedData();
    writeFileSync(tmp, data, { mode: 0o600 });
    renameSync(tmp, file);
    say(`Compile cache: wrote ${file} (${(data.length / 1048576).toFixed(1)} MB)`);
  } catch (err) {
    try {
      unlinkSync(tmp);
    } catch {
      // never made, or already renamed
    }
    say(`Compile cache: not written to ${dir} (${err instanceof Error ? err.message : String(err)}); starts stay uncached`);
    return;
  }
  for (const other of readdirSync(dir)) {
    if (!other.startsWith(names.bundle) || !other.endsWith('.v8cache') || other.startsWith(names.build)) continue;
    try {
      unlinkSync(join(dir, other));
    } catch {
      // another daemon removed it first
    }
  }
}

/** Runs `bundle` (CommonJS) as node's require would, compiled from the cache when there is a good one. */
export function requireWithCompileCache<T>(bundle: string, say: (line: string) => void): T {
  // One descriptor for the source and the stat that names its cache: a rebuild between the two would otherwise
  // file this source's bytecode under the new build's name.
  const fd = openSync(bundle, 'r');
  let source: string;
  let st: Stats;
  try {
    st = fstatSync(fd);
    source = readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
  const at = cacheLocation(bundle, st);
  // Neither read nor written where it may not be used.
  if (at.state === 'unsafe') say(`Compile cache: not used: ${at.dir} is ${at.why} (chmod o-w it, or set PLATFORM_COMPILE_CACHE to a directory of your own)`);
  const cachedData = at.state === 'usable' ? readIfThere(at.file) : undefined;
  // Strict, as the ES bundle is (an ES module always is): the same program, whichever bundle runs it.
  const script = new Script(`(function (exports, require, module, __filename, __dirname) { 'use strict'; ${source}\n})`, {
    filename: bundle,
    ...(cachedData ? { cachedData } : {}),
    importModuleDynamically: constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  if (at.state === 'usable' && cachedData && !script.cachedDataRejected) say(`Compile cache: loaded ${at.file}`);
  else if (at.state === 'usable') {
    if (cachedData) say(`Compile cache: ${at.file} was refused by V8 (damaged, or made by another V8); writing a new one`);
    let written = false;
    const writeOnce = () => {
      if (written) return;
      written = true;
      writeCache(script, at.dir, at.names, say);
    };
    // A daemon still starting when the time comes is looked at again as long again later.
    const writeOnceServed = (): void => {
      if (daemonServed()) writeOnce();
      else setTimeout(writeOnceServed, CACHE_AFTER_MS).unref();
    };
    setTimeout(writeOnceServed, CACHE_AFTER_MS).unref();
    // performance.now() counts from the process's start.
    process.once('exit', () => {
      if (performance.now() >= CACHE_AT_EXIT_MS && daemonServed()) writeOnce();
    });
  }
  const module = { exports: {} as T };
  const run = script.runInThisContext() as (exports: T, require: NodeJS.Require, module: { exports: T }, filename: string, dirname: string) => void;
  run(module.exports, createRequire(bundle), module, bundle, dirname(bundle));
  return module.exports;
}
