/**
 * Where a daemon's runs in flight were placed (.platform/executor.json) and the executor a starting daemon takes from
 * it (decideExecutor): pure decisions and a real file in a temp dir. From the review of session 34's change.
 */
import test from 'ava';
import { mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decideExecutor, readExecutorRecord, writeExecutorRecord, type ExecutorSpec } from '../lib/executor/executor-record.js';

const redis: ExecutorSpec = { kind: 'redis', url: 'redis://:secret@127.0.0.1:6390/2', queue: 'platform-runs' };

test('runs an in-process daemon left (it was killed) are held on the local executor when Redis is configured: a Redis executor cannot record them lost', (t) => {
  const running = [{ job_run_id: 'r-4', worker: 'local' }];
  t.deepEqual(decideExecutor(redis, { kind: 'in-process' }, running), { use: { kind: 'local' }, held: { runs: ['r-4'] } });
  t.deepEqual(decideExecutor({ kind: 'local' }, { kind: 'in-process' }, running), { use: { kind: 'local' } }, 'a local executor looks at them itself');
  t.deepEqual(decideExecutor(redis, { kind: 'in-process' }, []), { use: redis }, 'nothing in flight: the configured one');
});

test('the record is written 0600 (a Redis URL may carry a password) and read back; absent is none; damaged or not a record is an error naming the file', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'platform-record-'));
  t.is(readExecutorRecord(dir), undefined, 'none yet');
  writeExecutorRecord(dir, redis);
  t.is(statSync(join(dir, 'executor.json')).mode & 0o777, 0o600);
  t.deepEqual(readExecutorRecord(dir), redis);
  for (const text of ['{"kind": "redis", "url": "redis://127.0', '{"kind": "redis", "url": "not a url", "queue": "q"}', '[]', '{"kind": "ftp"}']) {
    writeFileSync(join(dir, 'executor.json'), text);
    const err = t.throws(() => readExecutorRecord(dir), undefined, text);
    t.regex(err!.message, /executor\.json \(where the job runs in flight were placed\) is damaged: .*delete it to have the configured executor taken for them/, text);
  }
});
