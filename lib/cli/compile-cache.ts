/**
 * Loads a CommonJS bundle with a V8 code cache beside it: the bytecode of every function the last process compiled,
 * so that this one neither parses the 2.5 MB bundle nor compiles the functions it runs first. A daemon answers its
 * first /health ~100 ms sooner with it (docs/decisions.md, "Speed, session 20"). Node 22 has this built in
 * (module.enableCompileCache); node 20, which we support, has only vm.Script's cachedData.
 *
 * The cache is written once a process has run a while (CACHE_AFTER_MS), or at its exit if it ends sooner, and only
 * when none was loaded: a cache holds the functions compiled when it was taken, so one taken after the start and
 * the first build serves the next start best. V8 refuses a cache made by another V8 or with other flags; the file's
 * name holds the bundle's size, mtime and inode besides, because V8 checks a source only by its length, and bytecode
 * of an older build of the same length would run in place of the new code.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, readdirSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';
import { Script, constants } from 'node:vm';

export const CACHE_AFTER_MS = 5_000;

/**
 * PLATFORM_COMPILE_CACHE names the cache's directory (default: the bundle's own); PLATFORM_DISABLE_COMPILE_CACHE=1
 * turns it off. The same two switches as node 22's NODE_COMPILE_CACHE and NODE_DISABLE_COMPILE_CACHE.
 */
export function cacheDirectory(bundle: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.PLATFORM_DISABLE_COMPILE_CACHE && env.PLATFORM_DISABLE_COMPILE_CACHE !== '0') return undefined;
  return env.PLATFORM_COMPILE_CACHE || dirname(bundle);
}

/**
 * `<bundle>.<size>-<mtime>-<inode>.<node>-<arch>-<flags>.v8cache`. The node flags are in the name because V8 refuses
 * a cache made under other flags: a daemon profiled with --cpu-prof would otherwise replace the cache every other
 * daemon loads, and the next of those replace it back.
 */
interface CacheName {
  /** What the names of all its caches start with, whatever the build. */
  readonly bundle: string;
  /** What the names of this build's caches start with. */
  readonly build: string;
  readonly name: string;
}

function cacheName(bundlePath: string): CacheName {
  const st = statSync(bundlePath);
  const bundle = `${basename(bundlePath)}.`;
  const build = `${bundle}${st.size}-${Math.trunc(st.mtimeMs)}-${st.ino}.`;
  const flags = createHash('sha1').update(JSON.stringify([process.execArgv, process.env.NODE_OPTIONS ?? ''])).digest('hex').slice(0, 8);
  return { bundle, build, name: `${build}${process.version}-${process.arch}-${flags}.v8cache` };
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
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const data = script.createCachedData();
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, data, { mode: 0o600 });
    renameSync(tmp, file);
    for (const other of readdirSync(dir)) {
      if (other.startsWith(names.bundle) && other.endsWith('.v8cache') && !other.startsWith(names.build)) unlinkSync(join(dir, other));
    }
    say(`Compile cache: wrote ${file} (${(data.length / 1048576).toFixed(1)} MB)`);
  } catch (err) {
    say(`Compile cache: not written to ${dir} (${err instanceof Error ? err.message : String(err)}); starts stay uncached`);
  }
}

/** Runs `bundle` (CommonJS) as node's require would, compiled from the cache when there is a good one. */
export function requireWithCompileCache<T>(bundle: string, say: (line: string) => void): T {
  const source = readFileSync(bundle, 'utf8');
  const dir = cacheDirectory(bundle);
  const names = dir === undefined ? undefined : cacheName(bundle);
  const cacheFile = dir === undefined || names === undefined ? undefined : join(dir, names.name);
  const cachedData = cacheFile === undefined ? undefined : readIfThere(cacheFile);
  const script = new Script(`(function (exports, require, module, __filename, __dirname) { ${source}\n})`, {
    filename: bundle,
    ...(cachedData ? { cachedData } : {}),
    importModuleDynamically: constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  if (cachedData && !script.cachedDataRejected) say(`Compile cache: loaded ${cacheFile}`);
  else if (dir !== undefined && names !== undefined) {
    if (cachedData) say(`Compile cache: ${cacheFile} was refused by V8 (damaged, or made by another V8); writing a new one`);
    let written = false;
    const writeOnce = () => {
      if (written) return;
      written = true;
      writeCache(script, dir, names, say);
    };
    setTimeout(writeOnce, CACHE_AFTER_MS).unref();
    process.once('exit', writeOnce);
  }
  const module = { exports: {} as T };
  const run = script.runInThisContext() as (exports: T, require: NodeJS.Require, module: { exports: T }, filename: string, dirname: string) => void;
  run(module.exports, createRequire(bundle), module, bundle, dirname(bundle));
  return module.exports;
}
