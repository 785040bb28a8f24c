/**
 * What the Redis executor's tests share: their test function (serial, or skipped where redis-server is missing, with
 * a test that says so), a `platform worker` on a Redis, and the executor option of a platform on it.
 */
import test, { type ExecutionContext } from 'ava';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { RedisExecutor } from '../../lib/executor/redis/redis-executor.js';
import type { PlatformOptions } from '../../lib/platform.js';
import { bash, killAtTeardown, makeWorkspace, openPlatform, pidsIn, poll, runsFor, untilJobWrote, waitFor, want } from './jobs-fixture.js';
import { redisMissing, startRedis } from './redis-server.js';
import { runCli } from './server-fixture.js';

/** The file's Redis tests run one at a time; without redis-server they are skipped, and a test says why. */
export function redisTests(): typeof test.serial {
  if (redisMissing) {
    test('Redis executor tests', (t) => {
      t.log(redisMissing);
      t.pass();
    });
    return test.skip as unknown as typeof test.serial;
  }
  return test.serial;
}

/** A `platform worker` named `name` on the Redis at `url`, with a 1 s lease, running in `dir`. */
export function startWorker(t: ExecutionContext, dir: string, url: string, name: string, extra: string[] = []): ReturnType<typeof runCli> {
  return runCli(t, ['worker', '--redis', url, '--name', name, '--lease', '1s', ...extra], dir);
}

/** A platform's executor on the Redis at `url`, checking for stalled runs every `stalledCheckMs`. */
export function redisExecutor(url: string, stalledCheckMs = 250): PlatformOptions['executor'] {
  return (workspaceRoot) => new RedisExecutor({ redisUrl: url, workspaceRoot, stalledCheckMs });
}

/**
 * A TCP relay on a free loopback port in front of the Redis at `redisUrl`, closed with every connection through it at
 * the test's end. `wire` joins each client to Redis as the test wants (at once, held, cut): `upstream()` opens the
 * client's own connection to Redis. `sockets` holds both ends of every connection made.
 */
export async function redisRelay(
  t: ExecutionContext,
  redisUrl: string,
  wire: (client: Socket, upstream: () => Socket) => void,
): Promise<{ url: string; sockets: ReadonlySet<Socket> }> {
  const target = Number(new URL(redisUrl).port);
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    sockets.add(client);
    wire(client, () => {
      const upstream = connect(target, '127.0.0.1');
      sockets.add(upstream);
      upstream.on('error', () => client.destroy());
      client.on('error', () => upstream.destroy());
      return upstream;
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    for (const s of sockets) s.destroy();
    server.close();
  });
  return { url: `redis://127.0.0.1:${(server.address() as AddressInfo).port}`, sockets };
}

/** The `hold` job the cancel tests run: a child in the background (its pid in child-<n>.pid) and itself, both long. */
export const HOLD_JOB = { label: 'hold', outputs: ['hold/(?<n>\\d+)'], args: ['${n}'], exec: bash('sleep 100 & echo $! > "child-$1.pid"; echo $$ >> hold.pid; sleep 100') };

/**
 * hold/1 running on worker `w1` (which reaches Redis at `workerUrl`, a relay in front of it, say), for a platform on
 * the Redis at `redisUrl`: the workspace, the platform, the want and the pid of the job's child.
 */
export async function holdRunningOnW1(t: ExecutionContext, redisUrl: string, workerUrl: string, graph: unknown) {
  const dir = makeWorkspace(t);
  killAtTeardown(t, () => [...pidsIn(dir, 'child-1.pid'), ...pidsIn(dir, 'hold.pid')]);
  const w1 = startWorker(t, dir, workerUrl, 'w1');
  await w1.waitForStdout(/takes runs/);
  const platform = await openPlatform(t, dir, graph, { executor: redisExecutor(redisUrl) });
  const w = await want(platform, ['hold/1']);
  await waitFor(platform, (s) => runsFor(s, 'hold/1')[0]?.worker === 'w1', 'hold/1 taken by w1', 15_000);
  t.true(await untilJobWrote(() => pidsIn(dir, 'child-1.pid').length > 0, () => runsFor(platform.state(), 'hold/1')[0]?.pid ?? 0), 'the job started its child');
  return { dir, platform, want: w, child: pidsIn(dir, 'child-1.pid')[0]! };
}

/** A `hold` job that only writes its pid and sleeps (HOLD_JOB's without the child). */
export const HOLD_GRAPH = { jobs: [{ label: 'hold', outputs: ['hold/(?<n>\\d+)'], exec: bash('echo $$ >> hold.pid; sleep 100') }] };

/**
 * hold/1 running on worker w1 (`extra`: its options) for a platform on the same, new Redis: the Redis, the workspace,
 * the worker, the platform, the want, the run and the job's pid.
 */
export async function holdingOnW1(t: ExecutionContext, extra: string[] = [], options: Partial<PlatformOptions> = {}) {
  const redis = await startRedis(t);
  const dir = makeWorkspace(t);
  killAtTeardown(t, () => pidsIn(dir, 'hold.pid'));
  const w1 = startWorker(t, dir, redis.url, 'w1', extra);
  await w1.waitForStdout(/takes runs/);
  const platform = await openPlatform(t, dir, HOLD_GRAPH, { executor: redisExecutor(redis.url), ...options });
  const w = await want(platform, ['hold/1']);
  const s = await waitFor(platform, (x) => runsFor(x, 'hold/1')[0]?.worker === 'w1', 'hold/1 taken by w1', 15_000);
  t.true(await poll(() => pidsIn(dir, 'hold.pid').length > 0, 20_000), 'the job runs');
  return { redis, dir, w1, platform, want: w, run: runsFor(s, 'hold/1')[0]!.job_run_id, job: pidsIn(dir, 'hold.pid')[0]! };
}
