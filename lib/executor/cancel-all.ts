/** A shutdown that cancels: every run asked to end, then their outcomes awaited, for a bounded time. */
import { firstValueFrom, filter, timer, race, map } from 'rxjs';
import type { Executor } from './executor-port.js';

export async function cancelAllAndWait(executor: Executor, ids: readonly string[], reason: string, timeoutMs: number): Promise<void> {
  if (executor.runningCount() === 0) return;
  const done = firstValueFrom(
    race(executor.outcomes$.pipe(filter(() => executor.runningCount() === 0)), timer(timeoutMs)).pipe(map(() => undefined)),
  );
  for (const id of ids) executor.cancel(id, reason);
  await done;
}
