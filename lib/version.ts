/**
 * The package version, read once from package.json above the compiled code: two levels up from dist/lib/version.js,
 * three from a module in dist/lib/<folder>/ (the CLI's bundle, lib/cli/build-bundle.mjs).
 */
import { readFileSync } from 'node:fs';

function readVersion(): string {
  for (const rel of ['../../package.json', '../../../package.json', '../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(rel, import.meta.url), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'platform' && pkg.version) return pkg.version;
    } catch {
      // try the next candidate
    }
  }
  return '0.0.0';
}

export const VERSION = readVersion();
