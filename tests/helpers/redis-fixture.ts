/**
 * What the Redis executor's tests share: their test function (serial, or skipped where redis-server is missing, with
 * a test that says so), a `platform worker` on a Redis, and the executor option of a platform on it.
 */
import test, { type ExecutionContext } from 'ava';
import { RedisExecutor } from '../../lib/executor/redis/redis-executor.js';
import type { PlatformOptions } from '../../lib/platform.js';
import { redisMissing } from './redis-server.js';
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
