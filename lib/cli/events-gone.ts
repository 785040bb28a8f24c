/**
 * The server's 410 for events compacted away, in the CLI's words. The API says which event is the first still in the
 * log (`first_event_id`); the CLI's `--offset` means "after", so the offset that reads from that event is one less.
 * Told as the server put it ("the first still available is 21940, read from there"), a user typed `--offset 21940` and
 * missed event 21940.
 */
import { ClientError } from '../client/platform-client.js';

/**
 * `err` as the offset to type when it is the server's answer that the events after `offset` were compacted; any other
 * error as it is. `follow`: the command to resume is `events --follow`.
 */
export function eventsGoneInCliWords(err: unknown, offset: number, follow: boolean): unknown {
  if (!(err instanceof ClientError) || err.status !== 410) return err;
  const first = (err.body as { first_event_id?: unknown } | undefined)?.first_event_id;
  if (typeof first !== 'number' || !Number.isSafeInteger(first) || first < 1) return err;
  const command = `platform events${follow ? ' --follow' : ''} --offset ${first - 1}`;
  return new ClientError(
    err.status,
    `Event ${offset + 1} is gone: events before ${first} were compacted (retention.events_keep in platform.json); ` +
      `the first still available is ${first}: '${command}' reads from there.`,
    err.body,
    err.wantId,
    err.code,
  );
}
