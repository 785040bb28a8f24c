/**
 * A write that the disk refused, as what the person at the other end can do about it: a full disk (ENOSPC, or
 * LevelDB's "No space left on device") is a 507 that says which file's disk and to free space; any other I/O
 * error is a 503 with Retry-After, since it may pass. Nothing acknowledged is lost: a step whose batch failed is
 * not recorded and its commands hear this; the loop retries what it was doing and goes on once space returns.
 */
export interface StorageFault {
  status: 507 | 503;
  message: string;
  /** For 503: when to try again. */
  retryAfterSeconds?: number;
}

const FULL_CODES = new Set(['ENOSPC', 'EDQUOT']);
// LEVEL_DATABASE_NOT_OPEN: the event log is closed between a failed write and its reopen (event-log.ts).
const IO_CODES = new Set(['LEVEL_IO_ERROR', 'LEVEL_DATABASE_NOT_OPEN', 'EIO', 'EROFS', 'EMFILE', 'ENFILE']);

/** The fault of `err` or of what caused it (LevelDB wraps what failed an open in a `cause`). */
export function storageFault(err: unknown, where?: string): StorageFault | undefined {
  for (let e = err, depth = 0; typeof e === 'object' && e !== null && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const fault = ownFault(e, where);
    if (fault) return fault;
  }
  return undefined;
}

function ownFault(err: object, where: string | undefined): StorageFault | undefined {
  const e = err as { code?: unknown; message?: unknown; path?: unknown };
  const code = typeof e.code === 'string' ? e.code : '';
  const message = typeof e.message === 'string' ? e.message : '';
  const full = FULL_CODES.has(code) || /No space left on device|Disk quota exceeded/i.test(message);
  if (!full && !IO_CODES.has(code)) return undefined;
  // LevelDB names the file in its message ("IO error: <path>: <reason>"); node's fs errors carry `path`.
  const path =
    (typeof e.path === 'string' ? e.path : undefined) ??
    /IO error: (.+?): [^:]+$/.exec(message)?.[1] ??
    /, \w+ '(.+)'$/.exec(message)?.[1] ??
    where ??
    "the workspace's .platform directory";
  if (full) return { status: 507, message: `the disk holding ${path} is full; free space and retry` };
  return { status: 503, message: `could not write ${path} (${message}); retry in a moment`, retryAfterSeconds: 1 };
}
