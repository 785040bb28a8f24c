/**
 * What bin/platform runs. A command loads the ES module bundle (main.js and the chunks it needs); `serve`, the
 * daemon, loads the same program as one CommonJS file compiled from a V8 code cache (compile-cache.ts), which only
 * a classic script can use on node 20. Both bundles are built from lib/cli/main.ts by build-bundle.mjs.
 */
import { join, dirname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

type Main = (argv: string[]) => Promise<void>;

const BUNDLE_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'bundle');
/** The daemon's bundle: the same path from dist/lib/cli (this file) and from dist/lib/bundle (a chunk of it). */
export const DAEMON_BUNDLE = join(BUNDLE_DIR, 'daemon.cjs');

/** Root options that take a value, whose value is no command (lib/cli/main.ts). */
const VALUE_OPTIONS = new Set(['--server-url', '-C', '--workspace']);

/** The command `argv` (node, script, ...) names: its first word that is not a root option or an option's value. */
export function commandWord(argv: readonly string[]): string | undefined {
  for (let i = 2; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') return argv[i + 1];
    if (!arg.startsWith('-')) return arg;
    if (VALUE_OPTIONS.has(arg)) i++;
  }
  return undefined;
}

async function daemonMain(argv: readonly string[]): Promise<Main> {
  const { requireWithCompileCache } = await import('./compile-cache.js');
  // Its lines are for server.log; `serve --help` prints the usage alone.
  const help = argv.includes('--help') || argv.includes('-h');
  const say = (line: string) => void (help || process.stdout.write(`${line}\n`));
  return requireWithCompileCache<{ main: Main }>(DAEMON_BUNDLE, say).main;
}

export async function run(argv: string[]): Promise<void> {
  const main: Main =
    commandWord(argv) === 'serve' ? await daemonMain(argv) : ((await import(pathToFileURL(join(BUNDLE_DIR, 'main.js')).href)) as { main: Main }).main;
  await main(argv);
}
