// Part of `npm run build`: bundles the compiled CLI and daemon (dist/lib/cli/main.js and all it imports) into
// dist/lib/bundle, which bin/platform runs. Why: node's loader resolved, read and compiled ~150 files and their
// packages one by one, ~0.4 s of every `platform` command and of every daemon start (docs/BENCHMARKS.md, session 10).
// Code splitting keeps what main.js imports lazily (the server, the Redis executor) in chunks of their own, so a
// command that needs no daemon loads none of it. The bundle lives at the same depth as dist/lib/<stage>/, so the
// paths the code finds from its own location (dist/ui, dist/native, bin/, package.json) resolve alike from both.
// Native packages, and those that read their own files at run time, stay outside it.
import { build } from 'esbuild';
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const rxjsEsm = join(here, '..', '..', 'node_modules', 'rxjs', 'dist', 'esm', 'index.js');
const dist = join(here, '..', '..', 'dist', 'lib');
const outdir = join(dist, 'bundle');
rmSync(outdir, { recursive: true, force: true });
// The bundle vouches for snapshots with the fingerprint of the state code it holds, taken now: computed when it
// runs, from dist/lib/state, it would be that of whatever was compiled there later.
const { stateCodeFingerprint } = await import(pathToFileURL(join(dist, 'state', 'snapshot-file.js')).href);
const shared = {
  entryPoints: { main: join(dist, 'cli', 'main.js') },
  bundle: true,
  platform: 'node',
  target: 'node20',
  outdir,
  // classic-level and msgpackr-extract load native addons found from their own directory; bullmq reads its Lua
  // scripts from its own; ioredis and msgpackr come with them. iconv-lite (body-parser's) and mime-db (express's)
  // are half the server's chunk, the code tables and the JSON of every media type, which node's loader reads only
  // as far as they are used: the daemon starts ~35 ms sooner (docs/decisions.md, session 19). Both are
  // dependencies of ours, so that they are found from here.
  external: ['classic-level', 'msgpackr', 'msgpackr-extract', 'bullmq', 'ioredis', 'iconv-lite', 'mime-db'],
  define: { __PLATFORM_STATE_CODE__: JSON.stringify(stateCodeFingerprint()) },
  // rxjs's ES module build, not the CommonJS one node's resolution picks: esbuild keeps only the operators the code
  // uses (61 KB of the 344 KB a command loaded and compiled before it did anything; docs/decisions.md, session 19).
  plugins: [{ name: 'rxjs-esm', setup: (b) => b.onResolve({ filter: /^rxjs$/ }, () => ({ path: rxjsEsm })) }],
  logLevel: 'warning',
};
// The commands: ES modules, split so that a command loads only the chunks it imports. With them, the worker thread
// that reads a large config program output (graph/config-output-worker.js): the code that starts it, here or in the
// daemon's file, finds it beside itself, as the compiled one finds its own in dist/lib/graph/.
await build({
  ...shared,
  entryPoints: { ...shared.entryPoints, 'config-output-worker': join(dist, 'graph', 'config-output-worker.js') },
  splitting: true,
  format: 'esm',
  // The CommonJS packages inside (express and its kin) call require(), which an ES module does not have.
  banner: { js: "import { createRequire as __platformRequire } from 'node:module'; const require = __platformRequire(import.meta.url);" },
});
// The daemon (`platform serve`): the same program as one CommonJS file, the only kind node 20 compiles from a V8 code
// cache (lib/cli/compile-cache.ts). Its import.meta.url is the file's own URL, as in the ES build.
await build({
  ...shared,
  entryPoints: { daemon: join(dist, 'cli', 'main.js') },
  format: 'cjs',
  outExtension: { '.js': '.cjs' },
  define: { ...shared.define, 'import.meta.url': '__platformModuleUrl' },
  banner: { js: "var __platformModuleUrl = require('node:url').pathToFileURL(__filename).href;" },
});
