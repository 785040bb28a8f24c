/** How a refused write is told: a full disk is a 507 naming the file, other I/O errors a 503 to retry, the rest none. */
import test from 'ava';
import { storageFault } from '../lib/system/storage-fault.js';

test('a full disk, from LevelDB or node, and through a cause, is a 507 naming the file', (t) => {
  const level = Object.assign(new Error('IO error: /w/.platform/bel/000003.log: No space left on device'), { code: 'LEVEL_IO_ERROR' });
  t.deepEqual(storageFault(level), { status: 507, message: 'the disk holding /w/.platform/bel/000003.log is full; free space and retry' });
  const fsError = Object.assign(new Error('ENOSPC: no space left on device, open'), { code: 'ENOSPC', path: '/w/.platform/logs/r-1/stdout.log' });
  t.is(storageFault(fsError)?.message, 'the disk holding /w/.platform/logs/r-1/stdout.log is full; free space and retry');
  const wrapped = new Error('Database failed to open', { cause: level });
  t.is(storageFault(wrapped)?.status, 507);
});

test('another I/O error is a 503 with Retry-After; anything else is not a storage fault', (t) => {
  const io = Object.assign(new Error('IO error: /w/.platform/bel/LOCK: Input/output error'), { code: 'LEVEL_IO_ERROR' });
  const fault = storageFault(io);
  t.is(fault?.status, 503);
  t.is(fault?.retryAfterSeconds, 1);
  t.regex(fault!.message, /^could not write \/w\/\.platform\/bel\/LOCK \(/);
  t.is(storageFault(new TypeError('x is undefined')), undefined);
  t.is(storageFault('a string'), undefined);
  t.is(storageFault(null), undefined);
});
