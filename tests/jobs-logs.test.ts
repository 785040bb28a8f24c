/**
 * Job run logs and details over HTTP with real processes: plain logs of a finished run, SSE follow of a running
 * one (live, then `end`), job run detail, status-filtered lists and partitions by prefix.
 */
import test from 'ava';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  bash,
  makeWorkspace,
  openPlatform,
  readSse,
  runsFor,
  startServer,
  waitFor,
  waitForWant,
  want,
} from './helpers/jobs-fixture.js';

const graph = {
  jobs: [
    {
      label: 'talk',
      outputs: ['talk/(?<n>\\d+)'],
      exec: bash('echo "hello $1"; echo "line two"; echo "warn $1" >&2; echo "more stderr" >&2'),
      args: ['${n}'],
    },
    {
      label: 'slowtalk',
      outputs: ['slowtalk/(?<n>\\d+)'],
      // Prints its second lines only once the test has seen the first (it creates go-<n>), or after 10 s.
      exec: bash(
        'echo "first $1"; echo "err first" >&2; for i in $(seq 200); do [ -f "go-$1" ] && break; sleep 0.05; done; echo "second $1"; echo "err second" >&2',
      ),
      args: ['${n}'],
    },
    { label: 'fail', outputs: ['fail/(?<n>\\d+)'], exec: bash('echo "failing"; exit 5') },
  ],
};

interface Frame {
  event: string;
  data: string;
  at: number;
}

test('logs of a finished run: stdout and stderr as text; unknown run or stream is 404', async (t) => {
  const dir = makeWorkspace(t);
  const platform = await openPlatform(t, dir, graph);
  const server = await startServer(t, platform);
  const w = await want(platform, ['talk/1']);
  const state = await waitForWant(platform, w);
  const [run] = runsFor(state, 'talk/1');
  const stdout = await fetch(`${server.url}/api/job_runs/${run!.job_run_id}/logs/stdout`);
  t.is(stdout.status, 200);
  t.regex(stdout.headers.get('content-type') ?? '', /text\/plain/);
  t.is(await stdout.text(), 'hello 1\nline two\n');
  const stderr = await fetch(`${server.url}/api/job_runs/${run!.job_run_id}/logs/stderr`);
  t.is(stderr.status, 200);
  t.is(await stderr.text(), 'warn 1\nmore stderr\n');

  t.is((await fetch(`${server.url}/api/job_runs/r-999/logs/stdout`)).status, 404);
  t.is((await fetch(`${server.url}/api/job_runs/${run!.job_run_id}/logs/other`)).status, 404);
});

/**
 * Follows a log over SSE until the server ends the stream; `onFrame` sees each frame as it arrives. If the stream is
 * still open 2 s after its `end` frame (or 10 s in all) the client hangs up, and `closedByServer` is false.
 */
async function follow(
  url: string,
  onFrame: (f: Frame) => void = () => {},
): Promise<{ status: number; type: string; frames: Frame[]; closedByServer: boolean }> {
  const controller = new AbortController();
  let hungUp = false;
  const hangUp = () => {
    hungUp = true;
    controller.abort();
  };
  const overall = setTimeout(hangUp, 10_000);
  let afterEnd: NodeJS.Timeout | undefined;
  const frames: Frame[] = [];
  try {
    const res = await fetch(url, { signal: controller.signal });
    try {
      await readSse(res.body!, (f) => {
        frames.push(f);
        onFrame(f);
        if (f.event === 'end') afterEnd = setTimeout(hangUp, 2000);
      });
    } catch (err) {
      if (!hungUp) throw err;
    }
    return { status: res.status, type: res.headers.get('content-type') ?? '', frames, closedByServer: !hungUp };
  } finally {
    clearTimeout(overall);
    clearTimeout(afterEnd);
  }
}

const NOT_CLOSED =
  'the server must end the SSE response after `event: end` (the log follow is over); it kept it open';

test('?follow=true streams a running job live and ends with its status and exit code', async (t) => {
  const dir = makeWorkspace(t);
  const platform = await openPlatform(t, dir, graph);
  const server = await startServer(t, platform);
  const w = await want(platform, ['slowtalk/2']);
  const running = await waitFor(
    platform,
    (s) => runsFor(s, 'slowtalk/2').some((r) => r.status === 'running'),
    'slowtalk/2 running',
  );
  const id = runsFor(running, 'slowtalk/2')[0]!.job_run_id;

  let statusAtFirstLine: string | undefined;
  const base = `${server.url}/api/job_runs/${id}/logs`;
  const [out, err] = await Promise.all([
    follow(`${base}/stdout?follow=true`, (f) => {
      if (f.event === 'log' && statusAtFirstLine === undefined) {
        statusAtFirstLine = platform.state().job_runs.get(id)!.status;
        writeFileSync(join(dir, 'go-2'), '');
      }
    }),
    follow(`${base}/stderr?follow=true`),
  ]);
  const ended = platform.state().job_runs.get(id)!;
  t.is(out.status, 200);
  t.regex(out.type, /text\/event-stream/);

  const logs = out.frames.filter((f) => f.event === 'log');
  t.deepEqual(
    logs.map((f) => f.data),
    ['first 2', 'second 2'],
  );
  // Live: the first line arrived while the job still ran (it waits for the test to have seen it before it goes on).
  t.is(statusAtFirstLine, 'running');
  t.true(logs[0]!.at <= ended.ended_at!, `first line at ${logs[0]!.at}, run ended at ${ended.ended_at}`);
  t.true(ended.ended_at! - ended.started_at! < 9000, 'the job went on because the test saw its first line, not by its 10 s limit');
  t.true(logs[1]!.at >= logs[0]!.at);
  const last = out.frames[out.frames.length - 1]!;
  t.is(last.event, 'end');
  t.deepEqual(JSON.parse(last.data), { status: 'succeeded', exit_code: 0, signal: null });
  t.is(last.data, '{"status":"succeeded","exit_code":0,"signal":null}');

  t.deepEqual(
    err.frames.filter((f) => f.event === 'log').map((f) => f.data),
    ['err first', 'err second'],
  );
  t.deepEqual(JSON.parse(err.frames[err.frames.length - 1]!.data), { status: 'succeeded', exit_code: 0, signal: null });
  t.true(out.closedByServer, NOT_CLOSED);
  t.true(err.closedByServer, NOT_CLOSED);
  await waitForWant(platform, w);
});

test('?follow=true on a run that already ended replays the log and ends at once', async (t) => {
  const dir = makeWorkspace(t);
  const platform = await openPlatform(t, dir, graph);
  const server = await startServer(t, platform);
  const w = await want(platform, ['fail/3']);
  const state = await waitForWant(platform, w);
  const [run] = runsFor(state, 'fail/3');
  const out = await follow(`${server.url}/api/job_runs/${run!.job_run_id}/logs/stdout?follow=true`);
  t.deepEqual(
    out.frames.map((f) => [f.event, f.data]),
    [
      ['log', 'failing'],
      ['end', '{"status":"failed","exit_code":5,"signal":null}'],
    ],
  );
  t.true(out.closedByServer, NOT_CLOSED);
});

test('GET /api/job_runs/:id has config, want ids, times, exit code and attempt; lists filter by status', async (t) => {
  const dir = makeWorkspace(t);
  const platform = await openPlatform(t, dir, graph);
  const server = await startServer(t, platform);
  const ok = await want(platform, ['talk/4', 'talk/5']);
  const bad = await want(platform, ['fail/6']);
  await waitForWant(platform, ok);
  const state = await waitForWant(platform, bad);
  const talk4 = runsFor(state, 'talk/4')[0]!;

  const res = await fetch(`${server.url}/api/job_runs/${talk4.job_run_id}`);
  t.is(res.status, 200);
  const detail = (await res.json()) as Record<string, unknown>;
  t.is(detail.job_run_id, talk4.job_run_id);
  t.is(detail.job_label, 'talk');
  t.is(detail.status, 'succeeded');
  t.deepEqual(detail.config, { outputs: ['talk/4'], inputs: [], args: ['4'], env: {} });
  t.deepEqual(detail.want_ids, [ok]);
  t.is(detail.exit_code, 0);
  t.is(detail.attempt, 1);
  t.is(typeof detail.pid, 'number');
  for (const key of ['queued_at', 'started_at', 'ended_at'] as const) {
    t.regex(String(detail[key]), /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/, key);
  }
  t.true(Date.parse(detail.queued_at as string) <= Date.parse(detail.started_at as string));
  t.true(Date.parse(detail.started_at as string) <= Date.parse(detail.ended_at as string));

  const failed = runsFor(state, 'fail/6')[0]!;
  const failedDetail = (await (await fetch(`${server.url}/api/job_runs/${failed.job_run_id}`)).json()) as Record<string, unknown>;
  t.is(failedDetail.status, 'failed');
  t.is(failedDetail.exit_code, 5);
  t.regex(String(failedDetail.reason), /code 5/);
  t.deepEqual(failedDetail.want_ids, [bad]);
  t.is((await fetch(`${server.url}/api/job_runs/r-404`)).status, 404);

  type List = { data: Array<{ job_run_id: string; status: string }>; total: number };
  const all = (await (await fetch(`${server.url}/api/job_runs`)).json()) as List;
  t.is(all.total, 3);
  const onlyFailed = (await (await fetch(`${server.url}/api/job_runs?status=failed`)).json()) as List;
  t.deepEqual(
    onlyFailed.data.map((r) => r.job_run_id),
    [failed.job_run_id],
  );
  t.is(onlyFailed.total, 1);
  const succeeded = (await (await fetch(`${server.url}/api/job_runs?status=succeeded`)).json()) as List;
  t.is(succeeded.total, 2);
  t.true(succeeded.data.every((r) => r.status === 'succeeded'));
  t.is((await fetch(`${server.url}/api/job_runs?status=bogus`)).status, 400);
});

test('GET /api/partitions?prefix= lists only the partitions under the prefix', async (t) => {
  const dir = makeWorkspace(t, { 'go-9': '' });
  const platform = await openPlatform(t, dir, graph);
  const server = await startServer(t, platform);
  const w = await want(platform, ['talk/7', 'talk/8', 'slowtalk/9', 'fail/1']);
  await waitForWant(platform, w, undefined, 8000);

  type List = { data: Array<{ partition_ref: string; status: string }>; total: number };
  const get = async (query: string) => (await (await fetch(`${server.url}/api/partitions${query}`)).json()) as List;
  const talk = await get('?prefix=talk/');
  t.deepEqual(
    talk.data.map((p) => p.partition_ref),
    ['talk/7', 'talk/8'],
  );
  t.is(talk.total, 2);
  t.true(talk.data.every((p) => p.status === 'live'));
  const slow = await get('?prefix=slowtalk/');
  t.deepEqual(
    slow.data.map((p) => p.partition_ref),
    ['slowtalk/9'],
  );
  const failedOnes = await get('?status=failed');
  t.deepEqual(
    failedOnes.data.map((p) => p.partition_ref),
    ['fail/1'],
  );
  t.is((await get('')).total, 4);
  t.is((await get('?prefix=none/')).total, 0);
});
