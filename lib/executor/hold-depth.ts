/**
 * How many runs the native launcher may hold past the cap, asked before each step. Held, a run starts the moment a
 * slot frees, without the daemon's round trip (a step and its synced write: 1-5 ms on this VM, more while a snapshot
 * or a burst of intake shares the loop). That round trip matters only when runs are as short as it is: then the
 * launcher holds HOLD_MOST runs, which covers even a slow step (docs/decisions.md, "Speed, session 27": 2,000 runs of
 * `true` held 2 deep took 6.3 s, 64 deep 2.2 s). Runs that take a second or more leave the daemon ample time to hand
 * over the next, and runs held behind them would only wait (their directories made, each step looking at each of
 * them again): the launcher holds as many as the cap, as before. Until a run has ended there is nothing to go by.
 */
export const HOLD_MOST = 64;
/** A run that took less than this (from its start to its end, as the daemon heard them) is short. */
export const SHORT_RUN_MS = 1000;

/** `lastRunMs`: how long the run that ended last took; undefined before any did. */
export function holdDepth(cap: number, lastRunMs: number | undefined): number {
  return lastRunMs !== undefined && lastRunMs < SHORT_RUN_MS ? Math.max(cap, HOLD_MOST) : cap;
}
