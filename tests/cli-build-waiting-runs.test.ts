/**
 * `platform build` whose runs go to a queue that no worker takes from waited in silence for ever ("running (handed to
 * queue platform-runs, waiting for a worker)" and nothing more), while `platform status` and `doctor` knew why. It now
 * says what stops them, as they do, once (and again if it changes). The real server on a real redis-server,
 * the real CLI piped, a real worker started once the build said it.
 */
import { spawn } from 'node:child_process';
import { CLI, REPO_ROOT, startServer } from './helpers/server-fixture.js';
import { poll } from './helpers/jobs-fixture.js';
import { startRedis } from './helpers/redis-server.js';
import { redisExecutor, redisTests, startWorker } from './helpers/redis-fixture.js';

const graph = { jobs: [{ label: 'quick', outputs: ['quick/(?<n>\\d+)'], exec: ['sh', '-c', 'true'] }] };
const redisTest = redisTests();

redisTest('a build whose runs no worker takes says why they wait, once, then builds once a worker comes', async (t) => {
  const redis = await startRedis(t);
  const f = await startServer(t, { graph, platform: { executor: redisExecutor(redis.url) } });
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' };
  delete env.FORCE_COLOR;
  const build = spawn(process.execPath, [CLI, '--server-url', f.url, 'build', 'quick/1'], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  t.teardown(() => build.kill('SIGKILL'));
  let out = '';
  build.stdout.on('data', (c: Buffer) => (out += c.toString()));
  build.stderr.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<number | null>((resolve) => build.on('close', resolve));

  t.true(await poll(() => /runs wait: no platform worker takes runs from queue platform-runs at redis:\/\/127\.0\.0\.1:\d+/.test(out), 20_000, 100), out);
  t.regex(out, /'platform worker --redis redis:\/\/127\.0\.0\.1:\d+'/, 'what to do');
  const w1 = startWorker(t, f.dir, redis.url, 'w1');
  await w1.waitForStdout(/takes runs/);
  t.is(await exited, 0, out);
  t.regex(out, /want w-1 successful/);
  t.is(out.split('runs wait:').length - 1, 1, `said once: ${out}`);
});
