/**
 * What Linux will not start, said when a config is read rather than when its run is launched: no single argument or
 * `K=V` variable over MAX_ARG_STRLEN (32 pages, 128 KiB), and no argument list and environment together over 3/4 of
 * _STK_LIM (6 MiB), whatever the stack limit (fs/exec.c). A config past either only failed at launch (`Argument list
 * too long`), after its run was queued: its whole config recorded in the log, and a million variables (35 MB) encoded,
 * recorded and handed to the launcher held the daemon's loop 8-15 s first.
 */
import type { JobConfig } from '../events/build-event.js';
import { groupDigits } from '../group-digits.js';

const MAX_ONE_BYTES = 128 * 1024;
const MAX_ALL_BYTES = 6 * 1024 * 1024;

/** Why `config` cannot be started (its args and env, not yet the daemon's own environment), or undefined. */
export function execSizeProblem(config: JobConfig): string | undefined {
  let all = 0;
  const one = (what: string, text: string): string | undefined => {
    const bytes = Buffer.byteLength(text) + 1;
    all += bytes;
    return bytes > MAX_ONE_BYTES ? `${what} is ${groupDigits(bytes)} bytes, over the ${groupDigits(MAX_ONE_BYTES)} Linux allows one argument or variable` : undefined;
  };
  for (const [i, arg] of config.args.entries()) {
    const problem = one(`its argument ${i + 1}`, arg);
    if (problem) return problem;
  }
  let vars = 0;
  for (const name in config.env) {
    vars++;
    const problem = one(`its variable ${name}`, `${name}=${config.env[name]}`);
    if (problem) return problem;
  }
  if (all > MAX_ALL_BYTES) {
    return `its ${groupDigits(config.args.length)} arguments and ${groupDigits(vars)} variables are ${groupDigits(all)} bytes, over the ${groupDigits(MAX_ALL_BYTES)} Linux allows a program's arguments and environment together`;
  }
  return undefined;
}
