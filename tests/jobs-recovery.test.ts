/** Start-up recovery and graph edits, against what a previous server left in the log and the process table. */
import test from 'ava';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { EventLog } from '../lib/events/event-log.js';
import { parseGraph } from '../lib/graph/parse-graph.js';
import { Platform } from '../lib/platform.js';
import { bash, isPidAlive, killAtTeardown, makeWorkspace, poll, waitFor, waitForWant, want } from './helpers/jobs-fixture.js';

/** A detached `sleep` carrying a job run's identity, as a job of some server would. */
function fakeJob(workspace: string, job_run_id: string): number {
  const child = spawn('sleep', ['100'], {
    detached: true,
    stdio: 'ignore',
    env: { ...process.env, PLATFORM_WORKSPACE: workspace, PLATFORM_JOB_RUN_ID: job_run_id },
  });
  child.unref();
  return child.pid!;
}

/** A log that says r-1 was started and never ended: what a crashed server leaves. */
async function crashedLog(dir: string): Promise<void> {
  const log = await EventLog.open(join(dir, '.platform', 'bel'));
  const config = { outputs: ['gate/1'], inputs: [], args: [], env: {} };
  await log.append(
    [
      { type: 'want_created', want_created: { want_id: 'w-1', partitions: ['gate/1'], comment: '', data_timestamp: 0, ttl_seconds: 0, sla_seconds: 0, source: 'user', parent_want_id: '', root_want_id: 'w-1', rebuild: 'missing', priority: 0, backfill_id: '', max_concurrent_job_runs: 0, pattern: '', schedule_tick: 0 } },
      { type: 'job_run_queued', job_run_queued: { job_run_id: 'r-1', job_label: 'gate', config, want_ids: ['w-1'], attempt: 1, exec: ['true'], timeout_seconds: 0, input_builds: [], job_fingerprint: '', output_inputs: [], retry_of: '' } },
      { type: 'job_run_started', job_run_started: { job_run_id: 'r-1', pid: 1, worker: 'local', started_at: 0 } },
    ],
    Date.now(),
  );
  await log.close();
}

const graph = { jobs: [{ label: 'gate', outputs: ['gate/(?<n>\\d+)'], exec: bash('echo rebuilt > gate.out') }] };

test('recovery kills the lost run’s processes of this workspace only, then rebuilds it', async (t) => {
  const dir = makeWorkspace(t);
  const other = makeWorkspace(t);
  await crashedLog(dir);
  const mine = fakeJob(dir, 'r-1');
  const foreign = fakeJob(other, 'r-1'); // every workspace has an r-1
  killAtTeardown(t, () => [mine, foreign]);

  const platform = await Platform.open(dir, { graph: parseGraph(graph, 'test'), tickMs: 60_000 });
  t.teardown(() => platform.close());
  t.true(await poll(() => !isPidAlive(mine), 2000), 'the orphan of this workspace is killed');
  t.true(isPidAlive(foreign), 'the job of another workspace is left alone');
  const s = await waitForWant(platform, 'w-1', ['successful']);
  t.regex(s.job_runs.get('r-1')?.reason ?? '', /lost/);
  t.is(readFileSync(join(dir, 'gate.out'), 'utf8').trim(), 'rebuilt');
});

test('a platform that never started records nothing at close', async (t) => {
  const dir = makeWorkspace(t);
  await crashedLog(dir);
  const platform = await Platform.open(dir, { graph: parseGraph(graph, 'test'), start: false });
  await platform.close();
  const log = await EventLog.open(join(dir, '.platform', 'bel'));
  t.teardown(() => log.close());
  t.is(log.latestId(), 3, 'the lost run is left for a server that will really recover it');
});

test('a run queued before an edit of platform.json runs with the exec it was queued with', async (t) => {
  const dir = makeWorkspace(t);
  const graphOf = (word: string) =>
    JSON.stringify({
      max_concurrent_job_runs: 1,
      jobs: [
        {
          label: 'w',
          outputs: ['w/(?<n>\\d+)'],
          exec: bash(`while [ ! -f release ]; do sleep 0.05; done; echo ${word} > "w-$1.out"`),
          args: ['${n}'],
        },
      ],
    });
  writeFileSync(join(dir, 'platform.json'), graphOf('old'));
  const platform = await Platform.open(dir, { tickMs: 60_000 });
  t.teardown(() => platform.close());
  const id = await want(platform, ['w/1', 'w/2']);
  await waitFor(platform, (s) => s.job_runs_by_status.running.size === 1 && s.job_runs_by_status.queued.size === 1, 'one running, one queued');
  writeFileSync(join(dir, 'platform.json'), graphOf('new'));
  t.is((await platform.refreshGraph()), undefined);
  writeFileSync(join(dir, 'release'), '');
  await waitForWant(platform, id, ['successful']);
  t.is(readFileSync(join(dir, 'w-1.out'), 'utf8').trim(), 'old');
  t.is(readFileSync(join(dir, 'w-2.out'), 'utf8').trim(), 'old', 'queued before the edit: the old exec');
  const later = await want(platform, ['w/3']);
  await waitForWant(platform, later, ['successful']);
  t.true(existsSync(join(dir, 'w-3.out')));
  t.is(readFileSync(join(dir, 'w-3.out'), 'utf8').trim(), 'new', 'queued after the edit: the new exec');
});
