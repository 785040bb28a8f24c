/**
 * A run that ends while no daemon runs, on a disk with inodes but no blocks left: the native launcher cannot write
 * its status.json. It must not leave an empty one (which a next daemon read as no status and recorded the run lost):
 * it writes the status as status.link's target (a short symlink needs no block), and a next daemon records the run's
 * real end. Mounting a tmpfs needs root: elsewhere the test is skipped, saying so.
 */
import test from 'ava';
import { existsSync, lstatSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { launcherMode } from '../lib/executor/run-launcher.js';
import { bash, isPidAlive, killAtTeardown, openPlatform, poll, runsFor, waitFor, want } from './helpers/jobs-fixture.js';
import { fill, mountTmpfs, whyNoTmpfs } from './helpers/tmpfs.js';

const graph = {
  jobs: [{ label: 'gated', outputs: ['gated/(?<n>\\d+)'], exec: bash('while [ ! -e go ]; do sleep 0.05; done; exit 3') }],
};

const why = whyNoTmpfs();
const title = 'a run that ends on a disk with no block left for its status.json is recorded with its exit by the next daemon, not lost';

if (why !== undefined) {
  test.skip(`${title} (skipped: cannot mount a tmpfs here: ${why})`, () => {});
} else {
  // Serial: the shell case sets PLATFORM_LAUNCHER for this process while it runs.
  for (const mode of ['native', 'shell'] as const)
  test.serial(`${title}: the ${mode} launcher`, async (t) => {
    if (mode === 'shell') {
      const before = process.env.PLATFORM_LAUNCHER;
      process.env.PLATFORM_LAUNCHER = 'shell';
      t.teardown(() => (before === undefined ? delete process.env.PLATFORM_LAUNCHER : (process.env.PLATFORM_LAUNCHER = before)));
    }
    if (launcherMode() !== mode) return t.pass(`the ${mode} launcher cannot run here (${mode === 'native' ? 'no C compiler built it' : 'no setsid or env --default-signal'})`);
    const mounted = mountTmpfs(16);
    if (typeof mounted === 'string') return t.fail(mounted);
    t.teardown(mounted.unmount);
    const dir = join(mounted.dir, 'ws');
    mkdirSync(join(dir, '.platform'), { recursive: true });
    const first = await openPlatform(t, dir, graph, { executor: 'supervised', cancelRunsOnClose: false });
    await want(first, ['gated/1']);
    const running = await waitFor(first, (s) => runsFor(s, 'gated/1')[0]?.status === 'running', 'gated/1 running');
    const run = runsFor(running, 'gated/1')[0]!;
    killAtTeardown(t, () => [run.pid]);
    await first.close();

    // No block left, inodes to spare: the job's end comes while no daemon runs.
    const fillers = [...fill(mounted.dir), ...fill(mounted.dir, 1)];
    writeFileSync(join(dir, 'go'), '');
    t.true(await poll(() => !isPidAlive(run.pid), 10_000), 'the job ended');
    const logDir = join(dir, '.platform', 'logs', run.job_run_id);
    const linked = (): boolean => lstatSync(join(logDir, 'status.link'), { throwIfNoEntry: false })?.isSymbolicLink() === true;
    t.true(await poll(() => existsSync(join(logDir, 'status.json')) || linked(), 5_000), 'its launcher wrote what it could');
    t.false(existsSync(join(logDir, 'status.json')) && readFileSync(join(logDir, 'status.json'), 'utf8') === '', 'no empty status.json');
    t.true(linked(), 'the status went into status.link');
    t.false(existsSync(join(logDir, 'status.json.tmp')), 'no half-written status left');

    // Room again (the log needs it), then a next daemon.
    for (const file of fillers) rmSync(file);
    const second = await openPlatform(t, dir, graph, { executor: 'supervised' });
    const ended = await waitFor(second, (s) => runsFor(s, 'gated/1')[0]?.status !== 'running', 'gated/1 settled');
    t.like(runsFor(ended, 'gated/1')[0], { job_run_id: run.job_run_id, status: 'failed', exit_code: 3 }, 'its real end, not lost');
  });
}
