// Bundles the dashboard into dist/ui (one script, one stylesheet, index.html); run by `npm run build`.
import { build } from 'esbuild';
import { copyFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, '..', 'dist', 'ui');
mkdirSync(join(out, 'assets'), { recursive: true });
await build({
  entryPoints: [join(here, 'src', 'main.tsx')],
  bundle: true,
  minify: true,
  sourcemap: true,
  format: 'esm',
  target: 'es2022',
  jsx: 'automatic',
  jsxImportSource: 'preact',
  outfile: join(out, 'assets', 'app.js'),
  logLevel: 'warning',
});
copyFileSync(join(here, 'index.html'), join(out, 'index.html'));
copyFileSync(join(here, 'styles.css'), join(out, 'assets', 'styles.css'));
