/**
 * The live status line of `platform build` on a terminal says the root want's status as it moves: `building` once its
 * own runs run, not `upstream_building` until the next 5 s poll (found by QA, session 32). The real CLI in a
 * pseudo-terminal (util-linux `script`), against a real daemon.
 */
import test from 'ava';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLI, startServer } from './helpers/server-fixture.js';

const haveScript = spawnSync('script', ['--version'], { encoding: 'utf8' }).status === 0;

test('the status line says building once the root want\'s own run runs, upstream_building before', async (t) => {
  if (!haveScript) {
    t.log('skipped: util-linux `script` (a pseudo-terminal for the CLI) is not installed');
    t.pass();
    return;
  }
  const f = await startServer(t, {
    graph: {
      jobs: [
        { label: 'src', outputs: ['src/(?<k>.+)'], exec: ['bash', '-c', 'touch src-started; while [ ! -f release-src ]; do sleep 0.05; done'] },
        {
          label: 'top',
          outputs: ['top/(?<k>.+)'],
          inputs: [{ partition_ref: 'src/${k}', dep_type: 'MATERIALIZE' }],
          exec: ['bash', '-c', 'touch top-started; while [ ! -f release-top ]; do sleep 0.05; done'],
        },
      ],
    },
  });
  const command = [process.execPath, CLI, '--server-url', f.url, 'build', 'top/1'].map((a) => `'${a}'`).join(' ');
  const child = spawn('script', ['-qefc', command, '/dev/null'], { cwd: f.dir, env: { ...process.env, NO_COLOR: '1', COLUMNS: '200', TERM: 'xterm' } });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  const exited = new Promise<number | null>((r) => child.once('close', r));
  t.teardown(() => void (child.exitCode === null && child.kill('SIGKILL')));
  const until = async (what: string, ok: () => boolean, ms = 15_000): Promise<void> => {
    for (const end = Date.now() + ms; !ok(); ) {
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}; output: ${JSON.stringify(out.slice(-2000))}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  await until('src/1 to run', () => existsSync(join(f.dir, 'src-started')));
  await until('the line to say upstream_building', () => out.includes('upstream_building'));
  writeFileSync(join(f.dir, 'release-src'), '');
  await until('top/1 to run', () => existsSync(join(f.dir, 'top-started')));
  const mark = out.length;
  // Well within the poll's 5 s: a frame that says building.
  await until('the line to say building', () => / building /.test(out.slice(mark)), 2_500);
  writeFileSync(join(f.dir, 'release-top'), '');
  t.is(await exited, 0, out.slice(-2000));
});
