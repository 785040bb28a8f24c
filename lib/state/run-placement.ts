/**
 * Where a run is, read from its `worker`: an executor that hands runs to a queue records the queue
 * (`redis:<queue>`) when it hands one over, and the worker's name once a worker takes it (`job_run_placed`). Until
 * then the run is `running` by the log but nothing runs it yet. Here, in the state stage, since the fold reads it
 * (a run canceled while it waited never started): its code is part of what a snapshot is valid for.
 */
export const QUEUE_WORKER_PREFIX = 'redis:';

/** The queue name, when the run waits in a queue for a worker; undefined otherwise. */
export function waitingInQueue(worker: string | null | undefined): string | undefined {
  return worker?.startsWith(QUEUE_WORKER_PREFIX) ? worker.slice(QUEUE_WORKER_PREFIX.length) : undefined;
}

/**
 * Running by the log but still in a queue, no worker has taken it. Its `started_at` is then when it was handed to
 * the queue (`job_run_started`), not a start: the start is when a worker takes it (`job_run_placed` sets it again).
 * Surfaces show no start time and no duration for it, only that it waits.
 */
export function waitingForWorker(r: { status: string; worker?: string | null }): boolean {
  return r.status === 'running' && waitingInQueue(r.worker) !== undefined;
}
