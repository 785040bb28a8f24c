/** Where a log's last lines begin: for `?tail=N` read once, and for a follow that starts there. */
import { open, stat, type FileHandle } from 'node:fs/promises';

const TAIL_CHUNK = 64 * 1024;

/**
 * Where the last `lines` lines of the file begin: reads backwards in chunks, counting newlines (a newline that
 * ends the file ends the last line, it does not start an empty one).
 */
export async function tailStart(handle: FileHandle, lines: number): Promise<number> {
  const { size } = await handle.stat();
  const buf = Buffer.alloc(TAIL_CHUNK);
  let end = size;
  let seen = 0;
  while (end > 0) {
    const from = Math.max(0, end - TAIL_CHUNK);
    const { bytesRead } = await handle.read(buf, 0, end - from, from);
    for (let i = bytesRead - 1; i >= 0; i--) {
      if (buf[i] !== 0x0a) continue;
      if (from + i === size - 1) continue;
      if (++seen === lines) return from + i + 1;
    }
    end = from;
  }
  return 0;
}

/** The same, by path; 0 for a file not there yet (a run that has printed nothing starts at its first line). */
export async function tailStartOf(path: string, lines: number): Promise<number> {
  const handle = await open(path, 'r').catch(zeroIfAbsent);
  if (handle === 0) return 0;
  try {
    return await tailStart(handle, lines);
  } finally {
    await handle.close();
  }
}

/** The file's size, 0 when it is not there yet. */
export async function sizeOf(path: string): Promise<number> {
  const s = await stat(path).catch(zeroIfAbsent);
  return s === 0 ? 0 : s.size;
}

/** A log not written yet reads as empty: 0 for a missing file, any other error as it is. */
function zeroIfAbsent(err: unknown): 0 {
  if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
  throw err;
}
