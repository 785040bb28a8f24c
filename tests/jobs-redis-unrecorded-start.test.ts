/**
 * A daemon on the Redis executor killed between handing a run to the queue and recording its start leaves the run
 * `queued` in the log while a worker runs it (or has finished it). The next daemon starts the run again: BullMQ
 * dedups the add on the job id, so that start must follow the run already there, ended included, rather than wait
 * for a completion that was told while no daemon listened (the run would read running for ever).
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EventLog } from '../lib/events/event-log.js';
import { bash, lines, makeWorkspace, openPlatform, runsFor, waitForWant } from './helpers/jobs-fixture.js';
import { startRedis } from './helpers/redis-server.js';
import { redisExecutor, redisTests, startWorker } from './helpers/redis-fixture.js';

const CRASHER = join(dirname(fileURLToPath(import.meta.url)), 'helpers', 'crash-before-redis-start-recorded.js');
const graph = { jobs: [{ label: 'quick', outputs: ['quick/(?<n>\\d+)'], exec: bash('echo "$PLATFORM_JOB_RUN_ID $$" >> ran.txt; echo done') }] };

const redisTest = redisTests();

redisTest('a run a killed daemon handed to the queue without recording its start, finished since, is recorded by the next daemon, not left running', async (t) => {
  const redis = await startRedis(t);
  const dir = makeWorkspace(t);
  writeFileSync(join(dir, 'platform.json'), JSON.stringify(graph));
  const w1 = startWorker(t, dir, redis.url, 'w1');
  await w1.waitForStdout(/takes runs/);
  const crasher = spawn(process.execPath, [CRASHER, dir, redis.url, 'quick/1'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let crashErr = '';
  crasher.stderr!.on('data', (c: Buffer) => (crashErr += c.toString()));
  const signal = await new Promise<NodeJS.Signals | null>((resolve) => crasher.once('exit', (_code, sig) => resolve(sig)));
  t.is(signal, 'SIGKILL', `the first daemon died with its run handed over: ${crashErr}`);
  const log = await EventLog.open(join(dir, '.platform', 'bel'));
  const types: string[] = [];
  for await (const batch of log.replay(1)) for (const e of batch) types.push(e.type);
  await log.close();
  t.false(types.includes('job_run_started'), 'the log has the run queued, its start unrecorded');
  t.deepEqual(lines(dir, 'ran.txt'), ['r-1 ' + lines(dir, 'ran.txt')[0]!.split(' ')[1]], 'r-1 ran while no daemon was there');

  const platform = await openPlatform(t, dir, graph, { executor: redisExecutor(redis.url) });
  const s = await waitForWant(platform, 'w-1', ['successful'], 15_000);
  t.deepEqual(runsFor(s, 'quick/1').map((r) => [r.job_run_id, r.status, r.worker]), [['r-1', 'succeeded', 'w1']]);
  t.is(lines(dir, 'ran.txt').length, 1, 'run once');
});
