/**
 * Where a run is, as every surface says it: waiting for a worker in a queue (`redis:<queue>`), a worker's name, or
 * `local`. What the fold itself reads of it is kept in the state stage (lib/state/run-placement.ts).
 */
import { waitingInQueue } from '../state/run-placement.js';

export { QUEUE_WORKER_PREFIX, waitingForWorker, waitingInQueue } from '../state/run-placement.js';

/** A person's words for where a run is: 'local', a worker's name, or that it waits for one. */
export function placementText(worker: string | null | undefined): string {
  const queue = waitingInQueue(worker);
  return queue !== undefined ? `waiting for a worker (queue ${queue})` : (worker ?? '');
}
