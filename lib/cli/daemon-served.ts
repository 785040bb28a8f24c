/**
 * Whether this process served as the daemon (its HTTP server listened): what makes its V8 code cache worth writing
 * (compile-cache.ts). Kept in the global symbol registry, not in a module variable: the daemon bundle holds its own
 * copy of this module, apart from the one bin/platform's entry loaded to run it.
 */
const SERVED = Symbol.for('platform.daemon-served');

export function markDaemonServed(): void {
  (globalThis as Record<symbol, unknown>)[SERVED] = true;
}

export function daemonServed(): boolean {
  return (globalThis as Record<symbol, unknown>)[SERVED] === true;
}
