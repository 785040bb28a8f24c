/** Offers a command to the orchestrator and maps what comes back (or the refusal) onto HTTP. */
import { QueueClosedError, QueueFullError } from '../orchestrator/command-queue.js';
import type { CommandResult } from '../orchestrator/command.js';
import { HttpError } from './http-error.js';

export async function awaitCommand(offer: () => Promise<CommandResult>) {
  let result: CommandResult;
  try {
    result = await offer();
  } catch (err) {
    if (err instanceof QueueFullError) {
      throw new HttpError(
        503,
        `The daemon's command queue is full: ${err.capacity} writes are waiting for its orchestrator to take them, so this one ` +
          `was refused and nothing was done. Retry it after the Retry-After seconds (the CLI does); a burst goes ` +
          `through in fewer writes as one want of many partitions, or a backfill.`,
        undefined,
        { 'Retry-After': '1' },
      );
    }
    if (err instanceof QueueClosedError) throw shuttingDown();
    throw err;
  }
  if (!result.ok) throw new HttpError(result.status, result.error, result.want_id);
  return result;
}

/** What a request meets once the server's platform closed (the server stops with it): nothing was done, retry later. */
export function shuttingDown(): HttpError {
  return new HttpError(503, 'The server is shutting down and takes no new requests; retry once it runs again.', undefined, { 'Retry-After': '5' });
}
