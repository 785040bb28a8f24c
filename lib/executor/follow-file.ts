/**
 * `tail -f` as an Observable, for job run logs: the file's lines so far, then each new line as the file
 * grows, until the run is over.
 */
import { watch, promises as fsp, type FSWatcher } from 'node:fs';
import { Observable, map, type Subscription } from 'rxjs';

const CHUNK_BYTES = 64 * 1024;

/** A line of the file (without its '\n' or a trailing '\r'), and the byte offset just after it. */
export interface FileLine {
  line: string;
  end: number;
}

export interface FollowOptions {
  /** The byte offset to start at (default 0): the start of a line, e.g. a `FileLine.end` seen before. */
  start?: number;
  /**
   * Awaited before each chunk is read: a consumer that writes to a slow socket resolves it when the socket has
   * drained, so the file is read only as fast as it is sent and a long log costs a chunk of memory, not the log.
   */
  ready?: () => Promise<void>;
  /** The polling fallback's period. */
  pollMs?: number;
  /**
   * A line longer is sent cut to about this many bytes, marked, and only this much of it is held: a reader of a
   * long line costs this, not the line (a 60 MiB line held whole cost ~230 MB a follower). Default: no limit.
   */
  maxLineBytes?: number;
}

/** `followFileLines`, the lines alone. */
export function followFile(path: string, done$: Observable<unknown>, pollMs = 100): Observable<string> {
  return followFileLines(path, done$, { pollMs }).pipe(map((l) => l.line));
}

/**
 * A piece of the file as it was read, and its byte offset. `bytes` is the follower's read buffer: valid until the
 * subscriber's `next` returns (copy it to keep it).
 */
export interface FileChunk {
  bytes: Buffer;
  at: number;
}

/**
 * Cold: each subscription reads `path` from `start` and emits its bytes as they are read, then what is appended as
 * the file grows (fs.watch, with polling every `pollMs` as a fallback). A file that does not exist yet is waited
 * for. A file that shrinks (truncated) is read again from its start: its next chunk is `at` 0.
 *
 * When `done$` emits (or completes), the file is read to its end one last time and the observable completes.
 * Unsubscribing stops all watchers and timers.
 */
export function followFileChunks(path: string, done$: Observable<unknown>, options: Omit<FollowOptions, 'maxLineBytes'> = {}): Observable<FileChunk> {
  const { start = 0, ready = async () => {}, pollMs = 100 } = options;
  return new Observable<FileChunk>((subscriber) => {
    let closed = false;
    let offset = start;
    let reading = false;
    let again = false;
    let doneSeen = false;
    let watcher: FSWatcher | undefined;
    const buf = Buffer.allocUnsafe(CHUNK_BYTES);

    const readToEnd = async (): Promise<void> => {
      let fh: fsp.FileHandle;
      try {
        fh = await fsp.open(path, 'r');
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return; // not created yet
        throw err;
      }
      try {
        const { size } = await fh.stat();
        // Truncated: read again from its start, which is told by an empty chunk at 0 (a line being read is gone).
        if (size < offset) {
          offset = 0;
          subscriber.next({ bytes: buf.subarray(0, 0), at: 0 });
        }
        while (!closed) {
          await ready();
          if (closed) break;
          const { bytesRead } = await fh.read(buf, 0, buf.length, offset);
          if (bytesRead === 0 || closed) break;
          const at = offset;
          offset += bytesRead;
          subscriber.next({ bytes: buf.subarray(0, bytesRead), at });
        }
      } finally {
        await fh.close().catch(() => {});
      }
    };

    const ensureWatcher = (): void => {
      if (watcher || closed) return;
      try {
        watcher = watch(path, { persistent: false }, () => pump());
        watcher.on('error', () => {
          watcher?.close();
          watcher = undefined; // polling carries on; retried after the next read
        });
      } catch {
        /* not there yet, or no inotify: polling covers it */
      }
    };

    const pump = (): void => {
      if (closed) return;
      if (reading) {
        again = true;
        return;
      }
      reading = true;
      void (async () => {
        try {
          do {
            again = false;
            await readToEnd();
          } while (again && !closed);
        } catch (err) {
          reading = false;
          if (!closed) subscriber.error(err);
          return;
        }
        reading = false;
        if (closed) return;
        ensureWatcher();
        // A done$ seen before this pass started is covered by it: the file is drained.
        if (doneSeen) subscriber.complete();
      })();
    };

    const markDone = (): void => {
      if (doneSeen) return;
      doneSeen = true;
      pump();
    };

    const timer = setInterval(pump, pollMs);
    pump();
    const doneSub: Subscription = done$.subscribe({
      next: markDone,
      complete: markDone,
      error: (err: unknown) => subscriber.error(err),
    });

    return () => {
      closed = true;
      clearInterval(timer);
      watcher?.close();
      watcher = undefined;
      doneSub.unsubscribe();
    };
  });
}

/**
 * Cold: each subscription reads `path` from `start` and emits its complete lines, then new lines as they are
 * appended (`followFileChunks`). A partial last line is held back until its newline arrives; when `done$` emits (or
 * completes), a final partial line is emitted and the observable completes. A file that shrinks (truncated) is read
 * again from its start.
 *
 * Lines are cut on the bytes and each is decoded whole: a '\n' byte is never part of a UTF-8 sequence, and
 * each line's `end` is a byte offset a follow can be resumed from.
 */
export function followFileLines(path: string, done$: Observable<unknown>, options: FollowOptions = {}): Observable<FileLine> {
  const { start = 0, maxLineBytes = Number.POSITIVE_INFINITY } = options;
  return new Observable<FileLine>((subscriber) => {
    /** Where the next chunk is read from: one read elsewhere is a truncated file read again. */
    let expected = start;
    /** The bytes of the line not yet ended, as read (a chunk each), up to maxLineBytes; `dropped` counts the rest. */
    let partial: Buffer[] = [];
    let kept = 0;
    let dropped = 0;
    /** The line's last byte so far, held or dropped: a '\r' there ends the line with its '\n', and is no content. */
    let lastByte = -1;

    /** Holds `bytes` as part of the line being read, as far as maxLineBytes goes; `copy`: they are the read buffer's. */
    const keep = (bytes: Buffer, copy: boolean): void => {
      const room = Math.max(0, maxLineBytes - kept);
      const taken = bytes.length <= room ? bytes : bytes.subarray(0, room);
      if (taken.length > 0) partial.push(copy ? Buffer.from(taken) : taken);
      kept += taken.length;
      dropped += bytes.length - taken.length;
      if (bytes.length > 0) lastByte = bytes[bytes.length - 1]!;
    };

    const forget = (): void => {
      partial = [];
      kept = 0;
      dropped = 0;
      lastByte = -1;
    };

    const emit = (bytes: Buffer, end: number): void => {
      // Decoded before the read buffer is read into again: the last piece needs no copy.
      keep(bytes, false);
      const whole = partial.length === 1 ? partial[0]! : Buffer.concat(partial);
      // A CRLF line's CR is its ending, as stripCr has it: a line of maxLineBytes whose CR alone was dropped is whole.
      const cr = lastByte === 0x0d ? 1 : 0;
      const line = dropped > cr ? cutLine(whole, kept + dropped - cr) : stripCr(whole.toString('utf8'));
      forget();
      subscriber.next({ line, end });
    };

    /** Emits the lines `chunk` ends; it was read at `at`. Keeps a copy of what follows the last newline. */
    const emitChunk = ({ bytes: chunk, at }: FileChunk): void => {
      if (at !== expected) forget();
      expected = at + chunk.length;
      let from = 0;
      for (;;) {
        const nl = chunk.indexOf(0x0a, from);
        if (nl < 0) break;
        emit(chunk.subarray(from, nl), at + nl + 1);
        from = nl + 1;
        if (subscriber.closed) return;
      }
      if (from < chunk.length) keep(chunk.subarray(from), true);
    };

    return followFileChunks(path, done$, options).subscribe({
      next: emitChunk,
      error: (err: unknown) => subscriber.error(err),
      complete: () => {
        if (partial.length > 0 || dropped > 0) emit(Buffer.alloc(0), expected);
        subscriber.complete();
      },
    });
  });
}

/** The start of a line held to `bytes.length` of its `total` bytes, cut where a character ends, and marked so. */
function cutLine(bytes: Buffer, total: number): string {
  let n = bytes.length;
  // A character whose bytes the cut split is left out whole (a lead byte 11xxxxxx, then 10xxxxxx after it).
  let lead = n - 1;
  while (lead > 0 && n - lead < 4 && (bytes[lead]! & 0xc0) === 0x80) lead--;
  const b = bytes[lead]!;
  const length = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
  if (lead + length > n) n = lead;
  return `${bytes.subarray(0, n).toString('utf8')} … [line cut: ${total} bytes, followed to ${n}; the log read whole has all of it]`;
}

function stripCr(line: string): string {
  return line.endsWith('\r') ? line.slice(0, -1) : line;
}
