/**
 * What `Platform.open` refuses of its options before it touches the workspace. TypeScript says `number`, and a
 * number can still make no sense: `tickMs: 0` spun the event loop for ever (not even a timer ran again), and
 * `queueCapacity: 0` refused every command with "The orchestrator has 0 commands waiting; try again in a moment."
 */
import type { PlatformOptions } from './platform.js';
import { MAX_TIMER_MS } from './system/timer-ceiling.js';

export function platformOptionsProblem(options: PlatformOptions): string | undefined {
  // A JavaScript caller's null (or a string) failed in the destructuring below with a TypeError naming no option.
  if (typeof options !== 'object' || options === null) {
    return `Platform.open takes an options object as its second argument (or none), got ${options === null ? 'null' : `a ${typeof options}`}`;
  }
  const { tickMs, queueCapacity, snapshotEveryEvents, executor } = options;
  // Past setTimeout's ceiling node sets the tick's interval to 1 ms (a TimeoutOverflowWarning): the orchestrator
  // would tick a thousand times a second where the caller meant almost never.
  if (tickMs !== undefined && !(typeof tickMs === 'number' && Number.isFinite(tickMs) && tickMs >= 1 && tickMs <= MAX_TIMER_MS)) {
    return `PlatformOptions.tickMs must be a number of milliseconds from 1 to ${MAX_TIMER_MS} (default 500), got ${String(tickMs)}`;
  }
  if (queueCapacity !== undefined && !(Number.isSafeInteger(queueCapacity) && queueCapacity >= 1)) {
    return `PlatformOptions.queueCapacity must be a whole number of at least 1 (default 100), got ${String(queueCapacity)}`;
  }
  if (snapshotEveryEvents !== undefined && !(Number.isSafeInteger(snapshotEveryEvents) && snapshotEveryEvents >= 0)) {
    return `PlatformOptions.snapshotEveryEvents must be a whole number of at least 0 (0: only at close; default 100,000), got ${String(snapshotEveryEvents)}`;
  }
  // A JavaScript caller's typo ('in_process') would otherwise get supervised runs, which outlive its process.
  if (executor !== undefined && typeof executor !== 'function' && executor !== 'in-process' && executor !== 'supervised') {
    return `PlatformOptions.executor must be 'in-process', 'supervised' or a function (workspaceRoot) => Executor, got ${JSON.stringify(executor)}`;
  }
  return undefined;
}
