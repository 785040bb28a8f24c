/**
 * Whether the executor can run what it is handed, as last seen (never a round trip per read: `/api/status`, which
 * every CLI command asks, carries it).
 */
export interface ExecutorHealth {
  /** 'local' (this machine, supervised), 'in-process', 'redis'. */
  kind: string;
  /** Where runs go, for a person: 'this machine', or the Redis URL (password hidden) and queue. */
  where: string;
  /** The executor's own service answers (always true for this machine). */
  reachable: boolean;
  /** Workers taking runs, when runs go to workers; null otherwise or when unknown. */
  workers: number | null;
  /** What stops runs from running, with what to do; null when nothing does. */
  problem: string | null;
  /**
   * How runs on this machine are started (run-launcher.ts): 'native' (the compiled launcher), 'shell' (a `/bin/sh` a
   * run: no C compiler built the native one, or PLATFORM_LAUNCHER=shell), 'direct' (children of the daemon, where
   * neither can run); null when runs do not start as processes of this machine's daemon (Redis workers, in-process).
   */
  launcher: RunLauncherKind | null;
}

export type RunLauncherKind = 'native' | 'shell' | 'direct';

/**
 * The workers, for a person: "2 workers"; for a Redis that answers but would not list its clients (an ACL, a managed
 * Redis), that they are not counted, which is not none; null where runs do not go to workers or Redis does not answer.
 */
export function workerCountWords(e: ExecutorHealth): string | null {
  if (e.workers !== null) return `${e.workers} worker${e.workers === 1 ? '' : 's'}`;
  if (e.kind === 'redis' && e.reachable) return 'workers not counted (this Redis does not list its clients to platform)';
  return null;
}
