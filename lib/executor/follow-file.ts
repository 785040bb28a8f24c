/**
 * `tail -f` as an Observable, for job run logs: the file's lines so far, then each new line as the file
 * grows, until the run is over.
 */
import { watch, promises as fsp, type FSWatcher } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import { Observable, type Subscription } from 'rxjs';

const CHUNK_BYTES = 64 * 1024;

/**
 * Cold: each subscription reads `path` from byte 0 and emits its complete lines (without the '\n', and
 * without a trailing '\r'), then new lines as they are appended (fs.watch, with polling every `pollMs` as a
 * fallback). A file that does not exist yet is waited for. A partial last line is held back until its
 * newline arrives.
 *
 * When `done$` emits (or completes), the file is read to its end one last time, a final partial line is
 * emitted, and the observable completes. Unsubscribing stops all watchers and timers. A file that shrinks
 * (truncated) is read again from its start.
 */
export function followFile(path: string, done$: Observable<unknown>, pollMs = 100): Observable<string> {
  return new Observable<string>((subscriber) => {
    let closed = false;
    let offset = 0;
    let decoder = new StringDecoder('utf8');
    let partial = '';
    let reading = false;
    let again = false;
    let doneSeen = false;
    let watcher: FSWatcher | undefined;
    const buf = Buffer.allocUnsafe(CHUNK_BYTES);

    const emitText = (text: string): void => {
      let start = 0;
      for (;;) {
        const nl = text.indexOf('\n', start);
        if (nl < 0) break;
        const line = partial + text.slice(start, nl);
        partial = '';
        start = nl + 1;
        subscriber.next(stripCr(line));
        if (closed) return;
      }
      partial += text.slice(start);
    };

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
        if (size < offset) {
          offset = 0;
          partial = '';
          decoder = new StringDecoder('utf8');
        }
        while (!closed) {
          const { bytesRead } = await fh.read(buf, 0, buf.length, offset);
          if (bytesRead === 0 || closed) break;
          offset += bytesRead;
          emitText(decoder.write(buf.subarray(0, bytesRead)));
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

    const finish = (): void => {
      emitText(decoder.end());
      if (closed) return;
      if (partial !== '') subscriber.next(stripCr(partial));
      partial = '';
      subscriber.complete();
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
        if (doneSeen) finish();
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

function stripCr(line: string): string {
  return line.endsWith('\r') ? line.slice(0, -1) : line;
}
