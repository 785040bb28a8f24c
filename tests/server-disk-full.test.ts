/**
 * A full disk under the workspace: the real server on a real LevelDB in a small tmpfs, filled to the brim while
 * wants arrive. Every write is acknowledged (201) or refused with 507 and words that say what to do; nothing
 * acknowledged is lost (a reopen finds every acknowledged want); once space is freed, writes are taken again.
 * Mounting a tmpfs needs root: elsewhere the test is skipped, saying so.
 */
import test from 'ava';
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { firstValueFrom } from 'rxjs';
import { SupervisedExecutor } from '../lib/executor/supervised-executor.js';
import { sleep, startServer } from './helpers/server-fixture.js';
import { fill, mountTmpfs, whyNoTmpfs } from './helpers/tmpfs.js';

const why = whyNoTmpfs();

if (why !== undefined) {
  test.skip(`a full disk answers 507 and loses nothing (skipped: cannot mount a tmpfs here: ${why})`, () => {});
  test.skip(`a run whose files cannot be written on a full disk fails saying so (skipped: cannot mount a tmpfs here: ${why})`, () => {});
} else {
  // The daemon's executor makes the run's directory (the shell launcher writes stdin.json and run.sh in it too) before
  // it starts anything: on a disk with no room for a new file, that fails. (Where a file can still be made but not
  // written, the native launcher, which gives a job its config on a memfd, starts the run; its job then meets the
  // full disk in its own writes, as one does on a disk that fills while it runs.)
  test('a run whose files cannot be written on a full disk fails saying so', async (t) => {
    const mounted = mountTmpfs(1, 64);
    if (typeof mounted === 'string') return t.fail(mounted);
    t.teardown(mounted.unmount);
    fill(mounted.dir);
    fill(mounted.dir, 0);
    const executors = [new SupervisedExecutor({ workspaceRoot: mounted.dir })];
    for (const [i, executor] of executors.entries()) {
      t.teardown(() => executor.shutdown('test over', { cancelRuns: true }));
      const outcome = firstValueFrom(executor.outcomes$);
      const logDir = join(mounted.dir, '.platform', 'logs', `r-${i}`);
      executor.start({ job_run_id: `r-${i}`, argv: ['true'], env: {}, outputs: ['p'], cwd: mounted.dir, stdin: '{}', log_dir: logDir, timeout_seconds: 0 });
      const o = await outcome;
      t.is(o.status, 'failed');
      t.regex(o.status === 'failed' ? o.reason : '', new RegExp(`^the disk holding ${mounted.dir}/.+ is full; free space and retry$`));
    }
  });

  test('a full disk answers 507 with what to do, loses nothing acknowledged, and takes writes again once space is freed', async (t) => {
    const mounted = mountTmpfs(24);
    if (typeof mounted === 'string') return t.fail(mounted);
    t.teardown(mounted.unmount);
    const workspace = join(mounted.dir, 'ws');
    spawnSync('mkdir', ['-p', workspace]);
    const graph = { jobs: [{ label: 'gate', outputs: ['gate'], exec: ['sleep', '600'] }, { label: 'q', outputs: ['q/(?<n>\\d+)'], inputs: [{ partition_ref: 'gate', dep_type: 'MATERIALIZE' }], exec: ['true'] }] };
    const f = await startServer(t, { dir: workspace, graph });
    const acknowledged: string[] = [];
    const refusals: Array<{ status: number; error: string }> = [];
    let n = 0;
    const post = async () => {
      const res = await f.postWant({ partitions: [`q/${n++}`] });
      const body = (await res.json()) as { want_id?: string; error?: string };
      if (res.status === 201) acknowledged.push(body.want_id!);
      else refusals.push({ status: res.status, error: body.error ?? '' });
      return res.status;
    };
    for (let i = 0; i < 20; i++) t.is(await post(), 201);
    const fillers = fill(mounted.dir);
    // Some writes may still fit in what LevelDB had buffered; keep asking until the disk refuses.
    for (let i = 0; i < 200 && refusals.length < 5; i++) await post();
    t.true(refusals.length >= 5, `the full disk refused ${refusals.length} writes`);
    for (const r of refusals) {
      t.true(r.status === 507 || r.status === 503, `refused with ${r.status}: ${r.error}`);
      if (r.status === 507) t.regex(r.error, /^the disk holding \/.+ is full; free space and retry$/);
    }
    t.true(refusals.some((r) => r.status === 507), 'a full disk is named as such');
    t.false(f.errorLines.some((l) => l.includes('Internal error')), 'no 500');
    // Space returns: writes are taken again (the loop retries its step on its own).
    for (const file of fillers) rmSync(file);
    let status = 0;
    for (let i = 0; i < 100 && status !== 201; i++) {
      status = await post();
      if (status !== 201) await sleep(100);
    }
    t.is(status, 201, 'a write is taken once space is freed');
    await f.close();
    // Everything acknowledged is in the log.
    const again = await startServer(t, { dir: workspace, graph });
    for (const id of acknowledged) t.is((await again.api(`/api/wants/${id}`)).status, 200, `want ${id} was acknowledged`);
    const page = await again.getJson<{ total: number }>('/api/wants?limit=1');
    t.true(page.total >= acknowledged.length);
  });
}
