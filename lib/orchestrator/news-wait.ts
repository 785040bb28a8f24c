/**
 * A step is the loop's unit of fixed cost (a plan, an append and its sync, a state emitted): a DAG of short runs
 * made a step of every few runs' starts and ends (236 for 2,000 jobs; 0.8 a job on a loaded machine). While the
 * launcher holds enough runs to start the next ones by itself (executor-port.ts `holdBeyond`), nothing waits on a
 * step of run news but the log: such a step waits NEWS_WAIT_MS for the news that follow. Anything else in the batch
 * (a write, a tick, a due retry) starts it at once, so no request waits for it.
 */
import type { OrchestratorInput } from './orchestrator-input.js';

/** How long a step of run news alone waits for more. */
export const NEWS_WAIT_MS = 2;
/** The runs the launcher must hold unstarted for a step to wait: fewer, and a slot could fall idle meanwhile. */
export const NEWS_WAIT_MIN_HELD = 8;

/**
 * How long the step for `inputs` may wait (ms), the executor holding `heldUnstarted()` runs it has yet to start (asked
 * only of news: the executor counts its runs to say).
 */
export function newsWaitMs(inputs: readonly OrchestratorInput[], heldUnstarted: () => number): number {
  for (const input of inputs) if (input.kind !== 'started' && input.kind !== 'outcome') return 0;
  return heldUnstarted() >= NEWS_WAIT_MIN_HELD ? NEWS_WAIT_MS : 0;
}
