/**
 * The daemon's V8 code cache (lib/cli/compile-cache.ts), through the real `platform serve`: written by a daemon
 * that ran, loaded by the next one, which builds with the cached code; a refused cache is replaced, a directory
 * that cannot be written is no error, and the switch turns it off. Each test has its own cache directory
 * (PLATFORM_COMPILE_CACHE), so that the suite's other daemons neither see nor race its files.
 */
import test, { type ExecutionContext } from 'ava';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { commandWord } from '../lib/cli/entry.js';
import { CACHE_AT_EXIT_MS, cacheDirectory, requireWithCompileCache } from '../lib/cli/compile-cache.js';
import { chmodSync } from 'node:fs';
import { sleep } from './helpers/jobs-fixture.js';

const BIN = fileURLToPath(new URL('../../bin/platform', import.meta.url));

function tempDir(t: ExecutionContext, prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function workspace(t: ExecutionContext): string {
  const dir = tempDir(t, 'platform-cc-ws-');
  writeFileSync(join(dir, 'platform.json'), JSON.stringify({ jobs: [{ label: 'one', outputs: ['one/(?<n>\\d+)'], exec: ['true'] }] }));
  return dir;
}

const cacheFiles = (dir: string): string[] => (existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.v8cache')) : []);

/**
 * Runs `platform serve` with `env`, lets `during` use it, stops it with SIGTERM and returns what it printed. The
 * daemon writes its cache at exit when it ran less than the cache's delay (and more than CACHE_AT_EXIT_MS), as these do.
 */
async function serveOnce(t: ExecutionContext, root: string, env: NodeJS.ProcessEnv, during: (url: string) => Promise<void> = async () => {}): Promise<string> {
  const spawned = Date.now();
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '-C', root], { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  t.teardown(() => void child.kill('SIGKILL'));
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const end = Date.now() + 15_000;
  let url: string | undefined;
  while (!url && Date.now() < end) {
    url = /Listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out)?.[1];
    await sleep(10);
  }
  if (!url) t.fail(`platform serve did not listen:\n${out}`);
  else {
    t.true((await fetch(`${url}/health`)).ok);
    await during(url);
  }
  // A daemon writes its cache at exit only once it ran CACHE_AT_EXIT_MS (a `serve --help` writes none).
  await sleep(Math.max(0, CACHE_AT_EXIT_MS + 800 - (Date.now() - spawned)));
  child.kill('SIGTERM');
  t.is(await exited, 0, out);
  return out;
}

async function buildOne(t: ExecutionContext, url: string, ref: string): Promise<void> {
  const res = await fetch(`${url}/api/wants`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ partitions: [ref] }) });
  t.is(res.status, 201);
  const { want_id } = (await res.json()) as { want_id: string };
  let status = '';
  for (let i = 0; i < 400 && !['successful', 'failed', 'upstream_failed'].includes(status); i++) {
    await sleep(25);
    status = ((await (await fetch(`${url}/api/wants/${want_id}`)).json()) as { status: string }).status;
  }
  t.is(status, 'successful');
}

test('a daemon writes the cache, the next one loads it and builds with it; a refused one is replaced', async (t) => {
  const root = workspace(t);
  const cache = tempDir(t, 'platform-cc-');
  const env = { PLATFORM_COMPILE_CACHE: cache };

  const first = await serveOnce(t, root, env, (url) => buildOne(t, url, 'one/1'));
  t.notRegex(first, /Compile cache: loaded/);
  t.regex(first, new RegExp(`Compile cache: wrote ${cache}/daemon\\.cjs\\.[0-9a-f]{8}\\.\\S+\\.v8cache`));
  const files = cacheFiles(cache);
  t.is(files.length, 1, files.join(', '));
  const mine = files[0]!;
  const written = readFileSync(join(cache, mine));
  t.true(written.length > 100_000, `${written.length} bytes`);

  const second = await serveOnce(t, root, env, (url) => buildOne(t, url, 'one/2'));
  t.regex(second, /Compile cache: loaded /);
  t.notRegex(second, /Compile cache: wrote/);
  t.deepEqual(readFileSync(join(cache, mine)), written);

  // Beside it: a cache of an older build of this bundle (removed by the next write), one of the same build under
  // other node flags (a profiled daemon's) and one of another install's bundle sharing the directory (both kept).
  const bundlePrefix = /^daemon\.cjs\.[0-9a-f]{8}\./.exec(mine)![0];
  const olderBuild = `${bundlePrefix}1-2-3.v0.0.0-x64-00000000.v8cache`;
  const otherFlags = mine.replace(/-[0-9a-f]{8}\.v8cache$/, '-00000000.v8cache');
  const otherInstall = mine.replace(bundlePrefix, 'daemon.cjs.00000000.');
  t.not(otherFlags, mine);
  t.not(otherInstall, mine);
  for (const f of [olderBuild, otherFlags, otherInstall]) writeFileSync(join(cache, f), 'other');
  // Bytes V8 cannot vouch for are refused: the daemon compiles from the source, serves, and writes a good cache.
  writeFileSync(join(cache, mine), Buffer.alloc(written.length, 7));
  const third = await serveOnce(t, root, env, (url) => buildOne(t, url, 'one/3'));
  t.regex(third, /Compile cache: \S+ was refused by V8/);
  t.regex(third, /Compile cache: wrote /);
  t.deepEqual(cacheFiles(cache).sort(), [mine, otherFlags, otherInstall].sort());
  const rewritten = readFileSync(join(cache, mine));
  t.false(rewritten.equals(Buffer.alloc(written.length, 7)));
  t.regex(await serveOnce(t, root, env), /Compile cache: loaded /);

  // A directory all may write to is not read from: anyone could plant the code the daemon runs there.
  chmodSync(cache, 0o777);
  const open = await serveOnce(t, root, env);
  t.regex(open, /Compile cache: not used: \S+ is writable by all/);
  t.notRegex(open, /Compile cache: (loaded|wrote)/);
  // One its group may write to (a umask of 002) is.
  chmodSync(cache, 0o770);
  t.regex(await serveOnce(t, root, env), /Compile cache: loaded /);
  chmodSync(cache, 0o700);
});

test('a daemon that ends at once (serve --help) writes no cache', async (t) => {
  const cache = tempDir(t, 'platform-cc-');
  const help = spawnSync(process.execPath, [BIN, 'serve', '--help'], { env: { ...process.env, PLATFORM_COMPILE_CACHE: cache }, encoding: 'utf8' });
  t.is(help.status, 0, help.stderr);
  t.regex(help.stdout, /--idle-timeout/);
  t.deepEqual(cacheFiles(cache), []);
  // Slowed past CACHE_AT_EXIT_MS, as a loaded machine slows it (one wrote a cache in a run of the suite under load):
  // none still, for it never served.
  const slowStart = join(tempDir(t, 'platform-cc-slow-'), 'slow-start.mjs');
  writeFileSync(slowStart, `const end = Date.now() + ${CACHE_AT_EXIT_MS + 500};\nwhile (Date.now() < end);\n`);
  const slow = spawnSync(process.execPath, ['--import', pathToFileURL(slowStart).href, BIN, 'serve', '--help'], { env: { ...process.env, PLATFORM_COMPILE_CACHE: cache }, encoding: 'utf8' });
  t.is(slow.status, 0, slow.stderr);
  t.regex(slow.stdout, /--idle-timeout/);
  t.deepEqual(cacheFiles(cache), [], 'a slow serve --help writes no cache');
  // Loaded from a cache a serve wrote: the usage alone, no word of the cache.
  const serve = spawnSync(process.execPath, [BIN, 'serve', '--help'], { env: { ...process.env }, encoding: 'utf8' });
  t.notRegex(serve.stdout + serve.stderr, /Compile cache/);
  const worker = spawnSync(process.execPath, [BIN, 'worker', '--help'], { encoding: 'utf8' });
  t.regex(worker.stdout, /runs at once on this worker \(default: 1\)/);
  t.notRegex(worker.stdout, /\(default 1\)/);
});

test('a cache directory that cannot be made is no error, and PLATFORM_DISABLE_COMPILE_CACHE=1 turns the cache off', async (t) => {
  const root = workspace(t);
  const dir = tempDir(t, 'platform-cc-');
  const file = join(dir, 'a-file');
  writeFileSync(file, '');
  const out = await serveOnce(t, root, { PLATFORM_COMPILE_CACHE: join(file, 'cache') }, (url) => buildOne(t, url, 'one/1'));
  t.regex(out, /Compile cache: not written to \S+a-file\/cache \(.*\); starts stay uncached/);

  const off = join(dir, 'off');
  const disabled = await serveOnce(t, root, { PLATFORM_COMPILE_CACHE: off, PLATFORM_DISABLE_COMPILE_CACHE: '1' });
  t.notRegex(disabled, /Compile cache/);
  t.false(existsSync(off));
});

test('the cache directory: the bundle\'s own, PLATFORM_COMPILE_CACHE, or none when disabled', (t) => {
  t.is(cacheDirectory('/x/bundle/daemon.cjs', {}), '/x/bundle');
  t.is(cacheDirectory('/x/bundle/daemon.cjs', { PLATFORM_COMPILE_CACHE: '/c' }), '/c');
  t.is(cacheDirectory('/x/bundle/daemon.cjs', { PLATFORM_COMPILE_CACHE: '/c', PLATFORM_DISABLE_COMPILE_CACHE: '1' }), undefined);
  t.is(cacheDirectory('/x/bundle/daemon.cjs', { PLATFORM_DISABLE_COMPILE_CACHE: '0' }), '/x/bundle');
});

test('the command word skips the root options and their values', (t) => {
  const word = (...args: string[]) => commandWord(['node', 'platform', ...args]);
  t.is(word('serve', '--port', '0'), 'serve');
  t.is(word('-C', '/w', 'serve'), 'serve');
  t.is(word('--workspace', 'serve', 'build', 'a/1'), 'build');
  t.is(word('--workspace=/w', '--json', 'serve'), 'serve');
  t.is(word('--server-url', 'http://127.0.0.1:1', 'want', 'create', 'serve'), 'want');
  t.is(word('--', 'serve'), 'serve');
  t.is(word('--json'), undefined);
});

test('the loader runs a bundle as node runs a CommonJS module, but strict, as the ES bundle is', (t) => {
  const dir = tempDir(t, 'platform-cc-mod-');
  const file = join(dir, 'mod.cjs');
  writeFileSync(file, "const path = require('node:path'); module.exports = { strict: (function () { return this === undefined; })(), file: __filename, dir: __dirname, sep: path.sep };");
  const loaded = requireWithCompileCache<{ strict: boolean; file: string; dir: string; sep: string }>(file, () => {});
  t.deepEqual(loaded, { strict: true, file, dir, sep: '/' });
});
