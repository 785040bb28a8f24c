/**
 * What Linux will not start, said when a config is read rather than when its run is launched (fs/exec.c): no single
 * argument or `K=V` variable over MAX_ARG_STRLEN (32 pages, 128 KiB), and no argument list and environment together
 * over a quarter of the stack's soft limit (at most 3/4 of _STK_LIM, 6 MiB; at least 128 KiB), each string counted
 * with its NUL and its 8-byte pointer: 2 MiB under the default 8 MiB stack. A config past either only failed at
 * launch (`Argument list too long`), after its run was queued: its whole config recorded in the log, and a million
 * variables (35 MB) encoded, recorded and handed to the launcher held the daemon's loop 8-15 s first.
 *
 * Only the config's own args and env are counted, not the daemon's environment nor the exec words added at launch:
 * what is refused here cannot start, what passes may still fail there, with the kernel's words. The stack limit is
 * this process's, which its launcher and jobs inherit (a Redis worker on another machine may have its own).
 */
import { readFileSync } from 'node:fs';
import type { JobConfig } from '../events/build-event.js';
import { groupDigits } from '../group-digits.js';

const MAX_ONE_BYTES = 128 * 1024;
const MAX_ALL_BYTES = 6 * 1024 * 1024;
const POINTER_BYTES = 8;

let allBytes: number | undefined;

/** The bytes a program's arguments and environment may take together here (read once). */
export function execLimitBytes(): number {
  allBytes ??= Math.max(MAX_ONE_BYTES, Math.min(MAX_ALL_BYTES, Math.floor(stackSoftLimit() / 4)));
  return allBytes;
}

/** RLIMIT_STACK's soft limit (node has no getrlimit): /proc's word, or the most the kernel allows when unknown. */
function stackSoftLimit(): number {
  try {
    const line = /^Max stack size\s+(\S+)/m.exec(readFileSync('/proc/self/limits', 'utf8'))?.[1];
    const n = Number(line);
    return Number.isFinite(n) && n > 0 ? n : 4 * MAX_ALL_BYTES;
  } catch {
    return 4 * MAX_ALL_BYTES;
  }
}

/** Why `config` cannot be started (its args and env, not yet the daemon's own environment), or undefined. */
export function execSizeProblem(config: JobConfig): string | undefined {
  let all = 0;
  const one = (what: string, text: string): string | undefined => {
    const bytes = Buffer.byteLength(text) + 1;
    all += bytes + POINTER_BYTES;
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
  const limit = execLimitBytes();
  if (all > limit) {
    return (
      `its ${groupDigits(config.args.length)} arguments and ${groupDigits(vars)} variables take ${groupDigits(all)} bytes, ` +
      `over the ${groupDigits(limit)} Linux allows a program's arguments and environment together here (a quarter of the stack limit, ulimit -s)`
    );
  }
  return undefined;
}
