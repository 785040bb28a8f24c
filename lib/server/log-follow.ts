/**
 * A job run's log followed as Server-Sent Events (`GET /api/job_runs/:id/logs/:stream?follow=true`): where the
 * follow starts, and its messages. Each line's `id:` is the byte offset after it, so a client that lost the
 * connection (EventSource sends the id back as `Last-Event-ID`) goes on from the next line: nothing twice,
 * nothing lost, and a 50 MB log is not replayed from its start on every reconnect.
 */
import { open } from 'node:fs/promises';
import { Observable } from 'rxjs';
import type { LogEnd } from '../api/job-run-log.js';
import { LogOffsetSchema } from '../api/schemas/job-runs.js';
import type { FileLine } from '../executor/follow-file.js';
import { sizeOf, tailStartOf } from '../executor/log-tail.js';
import type { JobRunRecord } from '../state/build-state.js';
import { exitCodeOf } from '../state/run-exit-code.js';
import { HttpError } from './http-error.js';
import type { SseMessage } from './sse.js';
import { validateValue } from './validate.js';

/**
 * A followed line longer is sent cut to this many bytes and marked (follow-file.ts): a follower costs this at most,
 * not the line, and one line is well under sse.ts's MAX_UNREAD_BYTES (past which the follow goes on from its last
 * line written, once the client read). The log read whole (`GET .../logs/:stream`) has every line as it is.
 */
export const FOLLOWED_LINE_BYTES = 256 * 1024;

/**
 * The byte offset a follow starts at: after the line `lastEventId` names (a reconnect: it wins over `tail`, which
 * the reconnect's URL still carries), else `tail` lines from the end, else 0. An id that is not an offset, one past
 * the log's end or one inside a line (not one this log's follow sent) is a 400.
 */
export async function followStart(file: string, lastEventId: string | undefined, tail: number): Promise<number> {
  if (lastEventId !== undefined) {
    const offset = Number(validateValue(LogOffsetSchema, lastEventId, 'Last-Event-ID'));
    if (!Number.isSafeInteger(offset)) throw new HttpError(400, `Last-Event-ID must be a byte offset up to ${Number.MAX_SAFE_INTEGER}, got ${lastEventId}.`);
    // A log only grows while its run has it, so an offset past its end did not come from this log.
    const size = await sizeOf(file);
    if (offset > size) {
      throw new HttpError(400, `Last-Event-ID ${offset} is past the end of this log (${size} bytes): it is not the id of a line its follow sent.`);
    }
    // Every line's id is the offset after its '\n' (or the log's end): any other offset would start the follow
    // inside a line, sent as if it were whole.
    if (offset > 0 && offset < size && (await byteAt(file, offset - 1)) !== 0x0a) {
      throw new HttpError(
        400,
        `Last-Event-ID ${offset} is not the end of a line of this log: it is not the id of a line its follow sent. ` +
          `Follow again without it (from the start, or the last lines with ?tail=N).`,
      );
    }
    return offset;
  }
  return tail > 0 ? tailStartOf(file, tail) : 0;
}

async function byteAt(file: string, at: number): Promise<number | undefined> {
  const fh = await open(file, 'r');
  try {
    const { bytesRead, buffer } = await fh.read(Buffer.alloc(1), 0, 1, at);
    return bytesRead === 1 ? buffer[0] : undefined;
  } finally {
    await fh.close();
  }
}

/** `event: log` per line (`id:` the offset after it), then `event: end` with how the run ended. */
export function logMessages(lines$: Observable<FileLine>, ended$: Observable<JobRunRecord>): Observable<SseMessage> {
  return new Observable<SseMessage>((subscriber) => {
    let last: JobRunRecord | undefined;
    const endSub = ended$.subscribe((r) => (last = r));
    const sub = lines$.subscribe({
      next: ({ line, end }) => subscriber.next({ event: 'log', id: end, data: line }),
      error: (err: unknown) => subscriber.error(err),
      complete: () => {
        const end: LogEnd = last ? { status: last.status, exit_code: exitCodeOf(last.exit_code), signal: last.signal || null } : { status: 'unknown', exit_code: null, signal: null };
        subscriber.next({ event: 'end', data: JSON.stringify(end) });
        subscriber.complete();
      },
    });
    return () => {
      sub.unsubscribe();
      endSub.unsubscribe();
    };
  });
}
