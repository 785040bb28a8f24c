/**
 * execSizeProblem refuses a config exactly when Linux would not start it: each case is started for real (`/bin/true`
 * with the config's environment and arguments alone) and the verdicts must agree, around this machine's limit.
 */
import test from 'ava';
import { spawnSync } from 'node:child_process';
import type { JobConfig } from '../lib/events/build-event.js';
import { execLimitBytes, execSizeProblem } from '../lib/graph/exec-size.js';

const startable = (c: JobConfig): boolean => {
  const r = spawnSync('/bin/true', c.args, { env: c.env });
  return r.error === undefined && r.status === 0;
};

/** `n` variables of `bytes` each, as a config's env. */
const vars = (n: number, bytes: number): Record<string, string> => Object.fromEntries(Array.from({ length: n }, (_, i) => [`V${i}`, 'z'.repeat(bytes)]));
const config = (env: Record<string, string>, args: string[] = []): JobConfig => ({ outputs: ['a'], inputs: [], args, env });

test('the check and the kernel agree: under the limit starts, over it is refused, by one variable or by all', (t) => {
  const limit = execLimitBytes();
  const each = 64 * 1024;
  // A variable counts its `V<i>=` and value, its NUL and its pointer.
  const fit = Math.floor(limit / (each + 16)) - 1;
  const cases: Array<[string, JobConfig]> = [
    ['well under', config(vars(4, 100 * 1024))],
    ['just under the limit', config(vars(fit, each))],
    ['just over the limit', config(vars(fit + 2, each))],
    ['one variable too long', config(vars(1, 128 * 1024))],
    ['one argument too long', config({}, ['a'.repeat(128 * 1024)])],
    ['many small variables (their pointers count)', config(Object.fromEntries(Array.from({ length: 400_000 }, (_, i) => [`V${i}`, '1'])))],
  ];
  for (const [name, c] of cases) {
    const refused = execSizeProblem(c) !== undefined;
    t.is(refused, !startable(c), `${name}: refused ${refused}, but the kernel ${refused ? 'starts' : 'refuses'} it`);
  }
  t.is(execSizeProblem(cases[1]![1]), undefined, 'just under is taken');
  t.regex(execSizeProblem(cases[2]![1]) ?? '', /Linux allows a program's arguments and environment together here/);
  t.regex(execSizeProblem(cases[3]![1]) ?? '', /^its variable V0 is 131,076 bytes, over the 131,072/);
});
