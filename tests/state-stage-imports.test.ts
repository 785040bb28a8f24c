/**
 * The fold's code is the state stage's alone: a snapshot is valid for the hash of lib/state's compiled files
 * (snapshot-file.ts `stateCodeFingerprint`), so code the fold runs from another folder could change without old
 * snapshots being refused (a helper's change of session 32 did it; moved back). Data flows one way, too: the state
 * stage reads events, never the stages after it. Read from the compiled files: type-only imports are gone there.
 */
import test from 'ava';
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

const STATE = fileURLToPath(new URL('../lib/state/', import.meta.url));
/** Where the state stage may import from at run time, besides itself and packages. */
const ALLOWED = ['../events/'];

test('the state stage imports nothing at run time from the stages after it', (t) => {
  const files = readdirSync(STATE).filter((n) => n.endsWith('.js'));
  t.true(files.length > 10, `compiled state files in ${STATE}`);
  const wrong: string[] = [];
  for (const name of files) {
    const code = readFileSync(join(STATE, name), 'utf8');
    for (const m of code.matchAll(/(?:^|\n)\s*(?:import|export)\b[^'"\n]*?from\s+['"](\.\.\/[^'"]+)['"]/g)) {
      const spec = m[1]!;
      if (!ALLOWED.some((a) => spec.startsWith(a))) wrong.push(`${name} -> ${spec}`);
    }
  }
  t.deepEqual(wrong, []);
});
