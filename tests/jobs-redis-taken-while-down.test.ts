/**
 * Runs handed to the Redis queue that a worker took while no daemon ran: the next daemon records when the worker took
 * each (the queue's job says: processedOn), not when it heard of it, and the run's own end stands; before, the run
 * read as started at the next daemon's start and ended then too, 0 ms (QA, session 32). And a run canceled while it
 * still waited for a worker never started: no start, no duration, no worker.
 */
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { DEFAULT_QUEUE, bullConnection } from '../lib/executor/redis/redis-names.js';
import { EventLog } from '../lib/events/event-log.js';
import type { BuildEvent } from '../lib/events/build-event.js';
import { eventSummary } from '../lib/cli/commands/events-command.js';
import { eventView, jobRunView } from '../lib/server/views.js';
import { bash, lines, makeWorkspace, openPlatform, poll, runsFor, sleep, waitFor, waitForWant, want } from './helpers/jobs-fixture.js';
import { startRedis } from './helpers/redis-server.js';
import { redisExecutor, redisTests, startWorker } from './helpers/redis-fixture.js';

// Each run says when its job began and ended (epoch ms, this machine's clock, as the worker's is).
const graph = {
  max_concurrent_job_runs: 4,
  jobs: [
    {
      label: 'marker',
      outputs: ['mark/(?<n>\\w+)'],
      exec: bash('echo "$PLATFORM_JOB_RUN_ID $(date +%s%3N)" >> begun.txt; sleep 2; echo "$PLATFORM_JOB_RUN_ID $(date +%s%3N)" >> ended.txt; echo done'),
    },
  ],
};

const redisTest = redisTests();


/** When the job of run `id` wrote its line to `file` (epoch ms). */
function markOf(dir: string, file: string, id: string): number {
  const line = lines(dir, file).find((l) => l.startsWith(`${id} `));
  if (!line) throw new Error(`${id} wrote no line to ${file}`);
  return Number(line.split(' ')[1]);
}

redisTest('runs a worker took and finished while no daemon ran keep their own start and end: the next daemon reads them from the queue', async (t) => {
  const redis = await startRedis(t);
  const dir = makeWorkspace(t);
  // No worker yet: the runs wait in the queue when the daemon goes.
  const first = await openPlatform(t, dir, graph, { executor: redisExecutor(redis.url), cancelRunsOnClose: false });
  const w = await want(first, ['mark/k1', 'mark/k2', 'mark/k3']);
  await waitFor(first, (s) => ['mark/k1', 'mark/k2', 'mark/k3'].every((ref) => runsFor(s, ref)[0]?.worker.startsWith('redis:')), 'the three runs handed to the queue', 15_000);
  // The start is recorded as the add is sent: the daemon goes once the three are in the queue.
  const queue = new Queue(DEFAULT_QUEUE, { connection: bullConnection(redis.url) });
  t.true(await poll(async () => (await queue.getWaitingCount()) === 3, 10_000), 'the three wait in the queue');
  await queue.close();
  await first.close();

  // The worker's takes and ends are bounded by what the test saw, not by fixed times: on a loaded machine a job's start
  // (a spawn, a bash, a date) took more than the second a bound gave it, and a run more than 3.5 s in all.
  const workerStartedAt = Date.now();
  const w4 = startWorker(t, dir, redis.url, 'w4', ['--concurrency', '4']);
  await w4.waitForStdout(/takes runs/);
  t.true(await poll(() => lines(dir, 'ended.txt').length === 3, 20_000), 'the worker ran the three, no daemon running');
  const finished = new Queue(DEFAULT_QUEUE, { connection: bullConnection(redis.url) });
  t.teardown(() => finished.close());
  t.true(await poll(async () => (await finished.getCompletedCount()) === 3, 20_000), 'the worker finished the three');
  const seenFinishedAt = Date.now();
  await sleep(1500);
  const reopenedAt = Date.now();
  const second = await openPlatform(t, dir, graph, { executor: redisExecutor(redis.url) });
  const s = await waitForWant(second, w, ['successful'], 20_000);

  for (const ref of ['mark/k1', 'mark/k2', 'mark/k3']) {
    const run = runsFor(s, ref)[0]!;
    t.like(run, { status: 'succeeded', worker: 'w4' }, ref);
    const begun = markOf(dir, 'begun.txt', run.job_run_id);
    const ended = markOf(dir, 'ended.txt', run.job_run_id);
    // The worker took it (processedOn), then its shell wrote the mark: after the worker started, before the mark; not
    // when it was handed to the queue (before the worker started), nor at the reopening (after the mark).
    t.true(run.started_at! >= workerStartedAt && run.started_at! <= begun, `${run.job_run_id} started ${begun - run.started_at!} ms before its job wrote its start, ${run.started_at! - workerStartedAt} ms after the worker was started`);
    // The worker finished it (finishedOn) after the job's last line, and before the test saw it finished.
    t.true(run.ended_at! >= ended && run.ended_at! <= seenFinishedAt, `${run.job_run_id} ended ${run.ended_at! - ended} ms after its job's last line, ${seenFinishedAt - run.ended_at!} ms before it was seen finished`);
    t.true(run.ended_at! < reopenedAt, 'before the next daemon opened');
    const view = jobRunView(s, run);
    // The job's ~2 s: its sleep at least, and no more than the worker ran.
    t.is(view.duration_ms, run.ended_at! - run.started_at!, `${run.job_run_id}: duration_ms from its start and end`);
    t.true(view.duration_ms! >= 2000 && view.duration_ms! <= seenFinishedAt - workerStartedAt, `${run.job_run_id}: duration_ms ${view.duration_ms}, the job's ~2 s`);
  }
  await second.close();
  // The log says when the worker took it, on the placement the next daemon recorded.
  const log = await EventLog.open(join(dir, '.platform', 'bel'));
  const placed: BuildEvent[] = [];
  for await (const batch of log.replay(1)) for (const e of batch) if (e.type === 'job_run_placed') placed.push(e);
  await log.close();
  t.is(placed.length, 3);
  for (const e of placed) {
    if (e.type !== 'job_run_placed') continue;
    const at = e.job_run_placed.started_at;
    t.true(at > 0 && at < reopenedAt, 'job_run_placed carries the start');
    // As /api/events and `platform events` show it.
    const view = eventView(e);
    t.is(view.type === 'job_run_placed' ? view.job_run_placed.started_at : 0, at);
    t.is(eventSummary(view), `${e.job_run_placed.job_run_id} taken by w4, pid ${e.job_run_placed.pid} (at ${new Date(at).toISOString()}, while no daemon ran)`);
  }
});

redisTest('a run canceled while it waited in the queue for a worker never started: no start, no duration, no worker', async (t) => {
  const redis = await startRedis(t);
  const dir = makeWorkspace(t);
  const platform = await openPlatform(t, dir, graph, { executor: redisExecutor(redis.url) });
  const w = await want(platform, ['mark/c1']);
  await waitFor(platform, (s) => runsFor(s, 'mark/c1')[0]?.worker.startsWith('redis:') === true, 'handed to the queue', 15_000);
  await sleep(300);
  await platform.cancelWant(w);
  const s = await waitFor(platform, (x) => runsFor(x, 'mark/c1')[0]?.status === 'canceled', 'the run canceled', 10_000);
  const run = runsFor(s, 'mark/c1')[0]!;
  t.like(run, { started_at: null, worker: '', pid: 0 });
  t.like(jobRunView(s, run), { started_at: null, duration_ms: null, worker: null });
  // Nothing was left in the queue to run it: a worker started now takes nothing.
  const w1 = startWorker(t, dir, redis.url, 'w1');
  await w1.waitForStdout(/takes runs/);
  await sleep(1000);
  t.deepEqual(lines(dir, 'begun.txt'), [], 'it never ran');
  t.like(platform.state().job_runs.get(run.job_run_id)!, { status: 'canceled', started_at: null, worker: '' });
});
