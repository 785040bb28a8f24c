/**
 * `retention.job_logs_days`: the logs of finished runs older than N days are removed by a pass (the daemon's hourly
 * one, `POST /api/gc`, `platform gc`); a dry run changes nothing; a run still running keeps its logs until it has
 * ended N days ago; a removed log answers 410 Gone; a bad policy in platform.json is refused saying what to write.
 */
import test from 'ava';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseGraph } from '../lib/graph/parse-graph.js';
import { GraphError } from '../lib/graph/graph-error.js';
import { bash, makeWorkspace, openPlatform, poll, runsFor, startServer, waitFor, waitForWant, want } from './helpers/jobs-fixture.js';
import { cliAgainst } from './helpers/cli-against.js';
import { checkedResponse } from './helpers/contract.js';

/** fetch, its answer checked against the served API contract (tests/helpers/contract.ts). */
const fetch = async (url: string, init?: RequestInit): Promise<Response> => checkedResponse(init?.method ?? 'GET', url, await globalThis.fetch(url, init));

const DAY = 86_400_000;

function graph(days: number, dir = '') {
  return {
    retention: { job_logs_days: days },
    jobs: [
      { label: 'talk', outputs: ['talk/(?<n>\\d+)'], exec: bash('echo "hello $1"; echo "oops" >&2'), args: ['${n}'] },
      // Runs until the test creates release-<n> in the workspace.
      {
        label: 'hold',
        outputs: ['hold/(?<n>\\d+)'],
        exec: bash(`echo started; while [ ! -f "${dir}/release-$1" ]; do sleep 0.05; done`),
        args: ['${n}'],
      },
    ],
  };
}

const logDir = (dir: string, runId: string) => join(dir, '.platform', 'logs', runId);

test('a pass removes the logs of runs that ended more than job_logs_days ago; a dry run only counts them', async (t) => {
  const dir = makeWorkspace(t);
  const platform = await openPlatform(t, dir, graph(1));
  const ids: string[] = [];
  for (const n of [1, 2, 3]) {
    const w = await want(platform, [`talk/${n}`]);
    const s = await waitForWant(platform, w);
    ids.push(runsFor(s, `talk/${n}`)[0]!.job_run_id);
  }
  for (const id of ids) t.true(existsSync(logDir(dir, id)), `${id} has its logs after it ran`);

  // Today nothing is a day old.
  const today = await platform.collectJobLogs();
  t.is(today.removed_runs, 0);
  t.not(today.cutoff, null);

  const later = Date.now() + 2 * DAY;
  const dry = await platform.collectJobLogs({ dryRun: true, now: later });
  t.true(dry.dry_run);
  t.is(dry.removed_runs, 3);
  t.deepEqual([...dry.job_run_ids].sort(), [...ids].sort());
  t.true(dry.removed_bytes > 0, 'the logs hold bytes');
  for (const id of ids) t.true(existsSync(logDir(dir, id)), `${id} kept by the dry run`);

  const real = await platform.collectJobLogs({ now: later });
  t.false(real.dry_run);
  t.is(real.removed_runs, 3);
  t.is(real.removed_bytes, dry.removed_bytes);
  for (const id of ids) t.false(existsSync(logDir(dir, id)), `${id}'s logs removed`);

  // The cursor went past them: the next pass has nothing to do.
  const again = await platform.collectJobLogs({ now: later });
  t.is(again.removed_runs, 0);
});

test('a run still running keeps its logs; once it has ended long enough, a later pass removes them', async (t) => {
  const dir = makeWorkspace(t);
  const platform = await openPlatform(t, dir, graph(1, dir));
  const w = await want(platform, ['hold/1']);
  const running = await waitFor(platform, (s) => runsFor(s, 'hold/1').some((r) => r.status === 'running'), 'hold/1 running');
  const runId = runsFor(running, 'hold/1')[0]!.job_run_id;
  t.true(await poll(() => existsSync(join(logDir(dir, runId), 'stdout.log')), 20_000), 'the running job wrote its log');

  const whileRunning = await platform.collectJobLogs({ now: Date.now() + 30 * DAY });
  t.is(whileRunning.removed_runs, 0, 'a running run is never collected');
  t.true(existsSync(logDir(dir, runId)));

  writeFileSync(join(dir, 'release-1'), '');
  await waitForWant(platform, w);
  const justEnded = await platform.collectJobLogs({ now: Date.now() + 0.5 * DAY });
  t.is(justEnded.removed_runs, 0, 'ended half a day ago: kept');
  const after = await platform.collectJobLogs({ now: Date.now() + 2 * DAY });
  t.deepEqual(after.job_run_ids, [runId], 'the run held aside is looked at again and collected');
  t.false(existsSync(logDir(dir, runId)));
});

test('without retention in platform.json nothing is removed and the report says so', async (t) => {
  const dir = makeWorkspace(t);
  const platform = await openPlatform(t, dir, { jobs: graph(1).jobs });
  const w = await want(platform, ['talk/1']);
  const s = await waitForWant(platform, w);
  const runId = runsFor(s, 'talk/1')[0]!.job_run_id;
  const report = await platform.collectJobLogs({ now: Date.now() + 365 * DAY });
  t.is(report.cutoff, null);
  t.is(report.removed_runs, 0);
  t.true(existsSync(logDir(dir, runId)));
});

test('POST /api/gc removes old logs; their GET answers 410 naming the policy; platform gc --dry-run --json; bad bodies are 400', async (t) => {
  const dir = makeWorkspace(t);
  // About a second of retention, so the run is old enough a moment after it ended.
  const platform = await openPlatform(t, dir, graph(1 / 86_400));
  const server = await startServer(t, platform);
  const cli = cliAgainst(() => server.url);
  const w = await want(platform, ['talk/7']);
  const s = await waitForWant(platform, w);
  const runId = runsFor(s, 'talk/7')[0]!.job_run_id;
  t.is((await fetch(`${server.url}/api/job_runs/${runId}/logs/stdout`)).status, 200);
  const endedAt = s.job_runs.get(runId)!.ended_at!;
  await new Promise((r) => setTimeout(r, Math.max(0, endedAt + 1100 - Date.now())));

  const dry = await cli('gc', '--dry-run', '--json');
  t.is(dry.code, 0, dry.stderr);
  const dryReport = JSON.parse(dry.stdout) as { dry_run: boolean; removed_runs: number; job_run_ids: string[] };
  t.true(dryReport.dry_run);
  t.deepEqual(dryReport.job_run_ids, [runId]);
  t.true(existsSync(logDir(dir, runId)));

  const gc = await fetch(`${server.url}/api/gc`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  t.is(gc.status, 200);
  const report = (await gc.json()) as { removed_runs: number; job_run_ids: string[] };
  t.deepEqual(report.job_run_ids, [runId]);
  t.false(existsSync(logDir(dir, runId)));

  const gone = await fetch(`${server.url}/api/job_runs/${runId}/logs/stdout`);
  t.is(gone.status, 410);
  const body = (await gone.json()) as { error: string };
  t.regex(body.error, new RegExp(`logs of job run ${runId} were removed`));
  t.regex(body.error, /retention\.job_logs_days/);
  // The run itself is still there.
  t.is((await fetch(`${server.url}/api/job_runs/${runId}`)).status, 200);

  const human = await cli('gc');
  t.is(human.code, 0, human.stderr);
  t.regex(human.stdout, /0 runs/);
  // Its cutoff as every table writes a time, not raw ISO.
  t.regex(human.stdout, /runs ended before\s+│ \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\s/);
  t.notRegex(human.stdout, /\d{2}:\d{2}:\d{2}\.\d{3}Z/);

  for (const bad of ['{"dry_run": "yes"}', '{"force": true}', '[]']) {
    const r = await fetch(`${server.url}/api/gc`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: bad });
    t.is(r.status, 400, bad);
    t.truthy(((await r.json()) as { error?: string }).error);
  }
});

test('a directory that belongs to no run is left alone; a log file missing before expiry reads as empty, a log directory missing as gone (410)', async (t) => {
  const dir = makeWorkspace(t);
  const platform = await openPlatform(t, dir, graph(1));
  const server = await startServer(t, platform);
  const w = await want(platform, ['talk/2']);
  const s = await waitForWant(platform, w);
  const runId = runsFor(s, 'talk/2')[0]!.job_run_id;
  mkdirSync(logDir(dir, 'r-not-a-run'), { recursive: true });
  t.is((await platform.collectJobLogs({ now: Date.now() + 2 * DAY, dryRun: true })).removed_runs, 1);
  rmSync(join(logDir(dir, runId), 'stderr.log'));
  const missing = await fetch(`${server.url}/api/job_runs/${runId}/logs/stderr`);
  t.is(missing.status, 200, 'not expired: a missing log is an empty one, not a removed one');
  t.is(await missing.text(), '');
  // Its whole log directory gone (a gc under a shorter retention than today's, or by hand): gone, not empty.
  rmSync(logDir(dir, runId), { recursive: true });
  for (const stream of ['stdout', 'stderr']) {
    const gone = await fetch(`${server.url}/api/job_runs/${runId}/logs/${stream}`);
    t.is(gone.status, 410, stream);
    const error = ((await gone.json()) as { error: string }).error;
    t.regex(error, new RegExp(`logs of job run ${runId} are gone: its log directory .* is not there`));
    t.notRegex(error, /keep their logs/, 'not the retention of today, which would keep them');
  }
});

test('platform.json: retention must be an object of known keys with a positive number of days', (t) => {
  const jobs = graph(1).jobs;
  const message = (retention: unknown) => {
    const err = t.throws(() => parseGraph({ jobs, retention }, 'platform.json'), { instanceOf: GraphError });
    return err?.message ?? '';
  };
  t.regex(message({ job_logs_days: 0 }), /retention\.job_logs_days.*above 0/);
  t.regex(message({ job_logs_days: '30' }), /retention\.job_logs_days/);
  t.regex(message({ logs: 3 }), /retention\.logs.*unknown key/);
  t.regex(message([]), /retention.*object/);
  t.is(parseGraph({ jobs, retention: { job_logs_days: 0.5 } }, 'platform.json').retention?.job_logs_days, 0.5);
});
