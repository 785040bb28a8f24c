// Part of `npm run build`: compiles the native run launcher (launcher.c) to dist/native/platform-launcher.
// Statically linked where the C library allows it (an exec of it is cheaper), else dynamically; with no C compiler
// the build goes on and the daemon starts runs through its shell launcher instead (slower, same behaviour).
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const source = join(here, 'launcher.c');
const outDir = join(here, '..', '..', '..', 'dist', 'native');
const out = join(outDir, 'platform-launcher');
mkdirSync(outDir, { recursive: true });
rmSync(out, { force: true });
const cc = process.env.CC || 'cc';
const attempts = [['-O2', '-static'], ['-O2']];
let built = false;
let lastError = '';
for (const flags of attempts) {
  const r = spawnSync(cc, [...flags, '-o', out, source], { encoding: 'utf8' });
  if (r.status === 0) {
    built = true;
    break;
  }
  lastError = r.error ? r.error.message : r.stderr.trim().split('\n').slice(-3).join('\n');
}
if (!built) {
  process.stderr.write(
    `note: could not compile the native run launcher with '${cc}' (${lastError}); the daemon will start runs through its ` +
      `shell launcher, about 1.5 ms a run slower. Install a C compiler (Debian: apt-get install gcc libc6-dev) and run npm run build again.\n`,
  );
}
