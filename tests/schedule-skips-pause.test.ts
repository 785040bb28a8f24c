/**
 * Skipped ticks, `catchup: 0`, pause and resume, and the last tick's want status, end to end: a real Platform on a
 * real LevelDB log in a temp workspace, the real HTTP server on 127.0.0.1 port 0, the real CLI as a subprocess. Time
 * is the orchestrator's clock (helpers/shifted-clock.ts): a platform closed at 22:43:30 and opened at 22:45:30 was
 * down across two ticks, and nothing waits for them. Every answer is held to the OpenAPI document (server-fixture).
 */
import test from 'ava';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { EventView } from '../lib/api/views.js';
import type { ScheduleChangeReply, ScheduleView } from '../lib/api/schedules.js';
import type { ServerStatus } from '../lib/api/server-status.js';
import { runLogDir } from '../lib/executor/job-launch.js';
import { compactionBasePath } from '../lib/platform.js';
import type { ScheduleRecord } from '../lib/state/build-state.js';
import { compactEvents } from '../lib/state/event-compaction.js';
import { decodeSnapshotFile, encodeSnapshotFile } from '../lib/state/snapshot-file.js';
import { SNAPSHOT_FORMAT } from '../lib/state/snapshot.js';
import { TEST_GRAPH, runCli, startServer, waitFor, type ServerFixture } from './helpers/server-fixture.js';
import { ShiftedClock } from './helpers/shifted-clock.js';

const at = (iso: string) => Date.parse(iso);

const GRAPH = {
  ...TEST_GRAPH,
  schedules: [
    // Its job always fails (fail/<name> exits 3): the schedule shows it.
    { name: 'minutely', cron: '* * * * *', partitions: ['fail/m${hour}${minute}'] },
    // No missed tick is ever made.
    { name: 'strict', cron: '* * * * *', partitions: ['ok/s${hour}${minute}'], catchup: 0 },
  ],
};

/** A platform on `dir` whose clock reads `now`, served; started once the server listens (so its log sees the first step). */
async function openAt(t: Parameters<typeof startServer>[0], now: number, dir?: string, graph: unknown = GRAPH): Promise<ServerFixture> {
  const f = await startServer(t, { graph, ...(dir ? { dir } : {}), platform: { scheduler: new ShiftedClock(now), start: false } });
  f.platform.start();
  return f;
}

async function events(f: ServerFixture): Promise<EventView[]> {
  return ((await f.getJson('/api/events?limit=10000')) as { data: EventView[] }).data;
}

const scheduleWants = async (f: ServerFixture, name: string) =>
  ((await f.getJson('/api/wants?limit=1000')) as { data: Array<{ want_id: string; source: string; schedule_tick: string | null; status: string }> }).data.filter(
    (w) => w.source === `schedule:${name}`,
  );

/** The CLI against the fixture's server, in UTC (its tables show local times), to its end. */
async function cli(t: Parameters<typeof startServer>[0], f: ServerFixture, ...args: string[]) {
  const p = runCli(t, ['--server-url', f.url, ...args], f.dir, { TZ: 'UTC' });
  const { code } = await p.exited;
  return { code, stdout: p.stdout(), stderr: p.stderr() };
}

test('ticks missed beyond catchup are recorded and shown; catchup 0 makes none of them; a failing schedule shows its failures', async (t) => {
  t.timeout(60_000);
  // Up at 22:43:30: the schedules are recorded, counting from then.
  const first = await openAt(t, at('2026-01-05T22:43:30Z'));
  await waitFor('the schedules recorded', async () => (await first.getJson('/api/schedules/minutely')).since !== null);
  await first.close();

  // Down across 22:44 and 22:45; back at 22:45:30.
  const f = await openAt(t, at('2026-01-05T22:45:30Z'), first.dir);
  const made = await waitFor('the 22:45 tick made', async () => (await scheduleWants(f, 'minutely')).find((w) => w.status === 'failed'));
  t.is(made.schedule_tick, '2026-01-05T22:45:00.000Z');
  t.deepEqual(await scheduleWants(f, 'strict'), [], 'catchup 0: no missed tick made');

  // The event log says which were skipped, how many, and why.
  const skips = (await events(f)).filter((e) => e.type === 'schedule_ticks_skipped').map((e) => (e as Extract<EventView, { type: 'schedule_ticks_skipped' }>).schedule_ticks_skipped);
  t.deepEqual(skips.find((k) => k.name === 'minutely'), {
    name: 'minutely', count: 1, count_at_least: false, first_tick: at('2026-01-05T22:44:00Z'), latest_tick: at('2026-01-05T22:44:00Z'), reason: 'catchup',
  });
  t.like(skips.find((k) => k.name === 'strict'), { count: 2, first_tick: at('2026-01-05T22:44:00Z'), latest_tick: at('2026-01-05T22:45:00Z'), reason: 'catchup' });
  // So does server.log.
  t.true(f.logLines.some((l) => /^schedule minutely: skipped 1 tick \(2026-01-05T22:44:00\.000Z\), no want made/.test(l)), f.logLines.join('\n'));

  // The API: the skips, and the last tick's want failed (1 of the last 1).
  const minutely = (await f.getJson('/api/schedules/minutely')) as ScheduleView;
  t.like(minutely, {
    last_tick: '2026-01-05T22:45:00.000Z', last_want_id: made.want_id, last_want_status: 'failed', recent_ticks: 1, recent_failed: 1,
    skipped_ticks: 1, skipped_ticks_at_least: false, last_skipped_tick: '2026-01-05T22:44:00.000Z', paused: false,
  });
  const listed = (await f.getJson('/api/schedules')) as { data: ScheduleView[] };
  t.like(listed.data.find((s) => s.name === 'strict'), { skipped_ticks: 2, last_skipped_tick: '2026-01-05T22:45:00.000Z', last_tick: null, last_want_status: null, catchup: 0 });

  // Prometheus: skips by schedule.
  const metrics = await (await f.api('/metrics')).text();
  t.regex(metrics, /^platform_schedule_ticks_skipped_total\{schedule="minutely"\} 1$/m);
  t.regex(metrics, /^platform_schedule_ticks_skipped_total\{schedule="strict"\} 2$/m);
  t.regex(metrics, /^platform_schedule_paused\{schedule="minutely"\} 0$/m);

  // The CLI: a table column each, the detail, --json.
  const table = await cli(t, f, 'schedules');
  t.is(table.code, 0, table.stderr);
  t.regex(table.stdout, /Status.*Skipped/);
  t.regex(table.stdout, /minutely .*failed \(1 of last 1 failed\).*1, latest 2026-01-05 22:44:00/);
  t.regex(table.stdout, /strict .*2, latest 2026-01-05 22:45:00/);
  const detail = await cli(t, f, 'schedules', 'minutely');
  t.is(detail.code, 0, detail.stderr);
  t.regex(detail.stdout, /its status\s+│ failed/);
  t.regex(detail.stdout, /latest ticks\s+│ 1 of the last 1 failed/);
  t.regex(detail.stdout, /skipped ticks\s+│ 1 \(missed beyond catchup, or due while paused\), the latest 2026-01-05 22:44:00/);
  const json = await cli(t, f, '--json', 'schedules', 'strict');
  t.like(JSON.parse(json.stdout), { name: 'strict', catchup: 0, skipped_ticks: 2, last_skipped_tick: '2026-01-05T22:45:00.000Z' });
  const log = await cli(t, f, 'events');
  t.regex(log.stdout, /schedule_ticks_skipped.*minutely skipped 1 tick 2026-01-05T22:44:00\.000Z \(missed beyond its catchup\)/);
});

test('pause and resume over REST and the CLI: no wants while paused, through a restart and a snapshot; a resume skips what fell due', async (t) => {
  t.timeout(120_000);
  const graph = { ...TEST_GRAPH, schedules: [{ name: 'minutely', cron: '* * * * *', partitions: ['ok/m${hour}${minute}'], catchup: 5 }, { name: 'control', cron: '* * * * *', partitions: ['ok/c${hour}${minute}'] }] };
  const f = await openAt(t, at('2026-01-05T22:43:30Z'), undefined, graph);
  const post = (path: string, body?: string) =>
    f.api(path, { method: 'POST', ...(body !== undefined ? { body, headers: { 'content-type': 'application/json' } } : {}) });

  // REST: a pause with its reason; a second one changes nothing.
  const paused = await post('/api/schedules/minutely/pause', '{"reason": "feed down"}');
  t.is(paused.status, 200);
  const pausedBody = (await paused.json()) as ScheduleChangeReply;
  t.like(pausedBody, { changed: true, skipped_ticks: 0, schedule: { name: 'minutely', paused: true, paused_reason: 'feed down', next_tick: null, next_partitions: [] } });
  t.is(pausedBody.schedule.paused_at?.slice(0, 16), '2026-01-05T22:43');
  const again = await post('/api/schedules/minutely/pause');
  t.is(again.status, 200);
  t.like(await again.json(), { changed: false, schedule: { paused: true, paused_reason: 'feed down' } });

  // Bad input is a clear 4xx that records nothing.
  const before = f.platform.log.latestId();
  for (const [path, body, status, error] of [
    ['/api/schedules/nope/pause', undefined, 404, /No schedule named 'nope' in platform\.json/],
    ['/api/schedules/nope/resume', undefined, 404, /No schedule named 'nope'/],
    ['/api/schedules/minutely/pause', '{"reason": 5}', 400, /reason/],
    ['/api/schedules/minutely/pause', '{"why": "x"}', 400, /why/],
    ['/api/schedules/minutely/pause', '{"reason": ', 400, /./],
  ] as const) {
    const res = await post(path, body);
    t.is(res.status, status, `${path} ${body ?? ''}`);
    t.regex(((await res.json()) as { error: string }).error, error);
  }
  t.is(f.platform.log.latestId(), before, 'nothing recorded');

  // The CLI: pausing a paused one says so, --json too; an unknown name is an error naming it, exit 1.
  const cliAgain = await cli(t, f, 'schedules', 'pause', 'minutely');
  t.is(cliAgain.code, 0, cliAgain.stderr);
  t.regex(cliAgain.stdout, /minutely: already paused since 2026-01-05 22:43:\d\d: feed down/);
  const cliJson = await cli(t, f, '--json', 'schedules', 'pause', 'minutely');
  t.like(JSON.parse(cliJson.stdout), { changed: false, schedule: { paused: true } });
  const unknown = await cli(t, f, '--json', 'schedules', 'resume', 'nope');
  t.is(unknown.code, 1);
  t.like(JSON.parse(unknown.stderr), { status: 404, exit_code: 1 });
  const usage = await cli(t, f, 'schedules', 'pause');
  t.is(usage.code, 2, 'no name: a usage error');
  const table = await cli(t, f, 'schedules');
  t.regex(table.stdout, /minutely\s+│ paused/);
  t.regex(await (await f.api('/metrics')).text(), /^platform_schedule_paused\{schedule="minutely"\} 1$/m);

  // A snapshot, a close, and a start ten minutes later: still paused, none of its ticks made; the other's is.
  const pauseView = (await events(f)).find((e) => e.type === 'schedule_paused') as Extract<EventView, { type: 'schedule_paused' }>;
  const pauseEvent = pauseView.event_id;
  // Paused since the pause was asked for, as its event says (recorded in a step after it).
  t.is(pauseView.schedule_paused.requested_at, Date.parse(pausedBody.schedule.paused_at!));
  t.true(Date.parse(pauseView.timestamp) >= pauseView.schedule_paused.requested_at);
  t.true(await f.platform.store.saveSnapshot(join(f.dir, '.platform', 'snapshot.bin'), 0));
  await f.close();
  t.true(existsSync(join(f.dir, '.platform', 'snapshot.bin')));
  const g = await openAt(t, at('2026-01-05T22:53:50Z'), f.dir, graph);
  // The pause came through the snapshot, not through a replay of the log: the state was read from a snapshot that
  // holds the pause's event (server.log and /metrics say so), and the events replayed after it are later ones.
  const started = g.logLines.find((l) => l.startsWith('State: '));
  t.regex(started ?? '', /^State: from the snapshot at event [\d,]+, then \d+ events? of the log replayed$/);
  const startMetrics = await (await g.api('/metrics')).text();
  t.regex(startMetrics, /^platform_start_state_source\{source="snapshot"\} 1$/m);
  t.regex(startMetrics, /^platform_start_state_source\{source="log"\} 0$/m);
  const atEvent = Number(/^platform_start_state_event_id (\d+)$/m.exec(startMetrics)?.[1]);
  t.true(atEvent >= pauseEvent, `the snapshot (at event ${atEvent}) holds the pause (event ${pauseEvent})`);
  t.is(Number(/^platform_start_events_replayed (\d+)$/m.exec(startMetrics)?.[1]), g.platform.store.start.events_replayed);
  // `GET /api/status` and `platform status --json` say the same start.
  const { start } = (await g.getJson('/api/status')) as ServerStatus;
  t.like(start, { source: 'snapshot', at_event: atEvent, events_replayed: g.platform.store.start.events_replayed });
  const statusJson = await cli(t, g, '--json', 'status');
  t.is(statusJson.code, 0, statusJson.stderr);
  t.deepEqual((JSON.parse(statusJson.stdout) as ServerStatus).start, start);
  await waitFor('the control schedule made its tick', async () => (await scheduleWants(g, 'control')).length > 0);
  t.like(await g.getJson('/api/schedules/minutely'), { paused: true, paused_at: pausedBody.schedule.paused_at, paused_reason: 'feed down', next_tick: null });
  t.deepEqual(await scheduleWants(g, 'minutely'), [], 'no want while paused, across the restart');

  // Resume with the CLI: the ticks due while paused are skipped, not caught up (catchup 5 notwithstanding).
  const resumed = await cli(t, g, '--json', 'schedules', 'resume', 'minutely');
  t.is(resumed.code, 0, resumed.stderr);
  const reply = JSON.parse(resumed.stdout) as ScheduleChangeReply;
  t.true(reply.changed);
  t.false(reply.schedule.paused);
  const skip = (await events(g))
    .filter((e) => e.type === 'schedule_ticks_skipped')
    .map((e) => (e as Extract<EventView, { type: 'schedule_ticks_skipped' }>).schedule_ticks_skipped)
    .find((k) => k.name === 'minutely')!;
  t.like(skip, { reason: 'paused', first_tick: at('2026-01-05T22:44:00Z'), count_at_least: false });
  // 22:44 up to the minute of the resume, every one of them.
  t.is(skip.count, (skip.latest_tick - at('2026-01-05T22:44:00Z')) / 60_000 + 1);
  t.true(skip.count >= 10);
  t.is(reply.skipped_ticks, skip.count);
  t.like(reply.schedule, { skipped_ticks: skip.count, last_skipped_tick: new Date(skip.latest_tick).toISOString() });
  // The next tick after the resume is made, and no earlier one ever.
  // (At 22:54, or at 22:55 if the resume came after 22:54 on a slow machine.)
  const next = await waitFor('the first tick after the resume', async () => (await scheduleWants(g, 'minutely'))[0], { timeoutMs: 75_000, intervalMs: 100 });
  t.is(Date.parse(next.schedule_tick!), skip.latest_tick + 60_000);
  const human = await cli(t, g, 'schedules', 'resume', 'minutely');
  t.regex(human.stdout, /minutely: not paused, nothing to resume/);
});

test('a pause in the first step after downtime: the ticks missed while down are caught up (or skipped as missed) first; the resume skips none as paused', async (t) => {
  t.timeout(60_000);
  const first = await openAt(t, at('2026-01-05T22:43:30Z'));
  await waitFor('the schedules recorded', async () => (await first.getJson('/api/schedules/strict')).since !== null);
  await first.close();

  // Down across 22:44 and 22:45; back at 22:45:30 with both pauses in the loop's first step (its batch is cut when
  // the step starts, a turn after start()).
  const f = await startServer(t, { graph: GRAPH, dir: first.dir, platform: { scheduler: new ShiftedClock(at('2026-01-05T22:45:30Z')), start: false } });
  f.platform.start();
  const replies = await Promise.all([f.platform.pauseSchedule('minutely', 'feed down'), f.platform.pauseSchedule('strict', 'feed down')]);
  for (const r of replies) t.like(r, { ok: true, schedule: { changed: true } });
  const log = await events(f);
  const pausedAt = log.findIndex((e) => e.type === 'schedule_paused');
  // A step's events carry its time: the first step of this daemon is the one that recorded the pauses.
  const firstStep = log.filter((e) => e.timestamp === log[pausedAt]!.timestamp);
  t.deepEqual(firstStep.map((e) => e.type), ['schedule_ticks_skipped', 'want_created', 'schedule_paused', 'schedule_ticks_skipped', 'schedule_paused'], 'one step, in this order');
  t.is(log.filter((e) => Date.parse(e.timestamp) >= at('2026-01-05T22:45:30Z'))[0], firstStep[0], 'the daemon\'s first step');
  const skips = log.filter((e) => e.type === 'schedule_ticks_skipped').map((e) => (e as Extract<EventView, { type: 'schedule_ticks_skipped' }>).schedule_ticks_skipped);
  // catchup 1: 22:44 skipped as missed, 22:45 made; catchup 0: both skipped as missed. Then paused.
  t.deepEqual(skips.map((k) => [k.name, k.count, k.reason]), [['minutely', 1, 'catchup'], ['strict', 2, 'catchup']]);
  t.deepEqual((await scheduleWants(f, 'minutely')).map((w) => w.schedule_tick), ['2026-01-05T22:45:00.000Z'], 'the missed tick catchup makes up for, made before the pause');
  t.true(log.findIndex((e) => e.type === 'want_created') < pausedAt, 'decided before the pause');
  t.like(await f.getJson('/api/schedules/minutely'), { paused: true, last_tick: '2026-01-05T22:45:00.000Z', skipped_ticks: 1 });

  // Resumed at once: nothing fell due while paused, so nothing is skipped as paused.
  for (const name of ['minutely', 'strict']) {
    const resumed = await cli(t, f, 'schedules', 'resume', name);
    t.is(resumed.code, 0, resumed.stderr);
    t.regex(resumed.stdout, new RegExp(`^${name}: resumed; next tick`), 'no skipped ticks said');
  }
  t.false((await events(f)).some((e) => e.type === 'schedule_ticks_skipped' && e.schedule_ticks_skipped.reason === 'paused'), 'no tick labelled paused');
  t.like(await f.getJson('/api/schedules/strict'), { paused: false, skipped_ticks: 2, last_skipped_tick: '2026-01-05T22:45:00.000Z' });
});

test('a compaction base of format 7 (its schedule records kept no latest ticks): the latest ticks and their statuses are found again among its wants', async (t) => {
  t.timeout(60_000);
  const graph = { ...TEST_GRAPH, schedules: [{ name: 'minutely', cron: '* * * * *', partitions: ['fail/m${hour}${minute}'], catchup: 12 }] };
  const first = await openAt(t, at('2026-01-05T22:43:30Z'), undefined, graph);
  await waitFor('the schedule recorded', async () => (await first.getJson('/api/schedules/minutely')).since !== null);
  await first.close();
  // Back at 22:56:30: 22:45 to 22:56 made (catchup 12), each want failing.
  const f = await openAt(t, at('2026-01-05T22:56:30Z'), first.dir, graph);
  await waitFor('12 ticks failed', async () => (await scheduleWants(f, 'minutely')).filter((w) => w.status === 'failed').length === 12, { timeoutMs: 30_000 });
  const before = (await f.getJson('/api/schedules/minutely')) as ScheduleView;
  t.like(before, { recent_ticks: 10, recent_failed: 10, last_want_status: 'failed' });
  // Compacted by the real code: the first daemon's events go, the wants (ended after the cutoff) stay in the base.
  const since = (await events(f)).find((e) => Date.parse(e.timestamp) >= at('2026-01-05T22:56:30Z'))!.event_id;
  const paths = { base: compactionBasePath(f.dir), snapshot: join(f.dir, '.platform', 'snapshot.bin'), runLogs: (id: string) => runLogDir(f.dir, id) };
  const report = await compactEvents(f.platform.log, f.platform.store, paths, f.platform.log.latestId() - since + 1, false);
  t.true(report.removed_events > 0);
  await f.close();
  // The base as a version of format 7 wrote it: schedule records without the fields of 8. No snapshot: the base is
  // what the next start loads.
  const file = decodeSnapshotFile(readFileSync(paths.base));
  t.is(file.header.format, SNAPSHOT_FORMAT);
  const lines = file.lines.map((line) => {
    if (line[0] !== 'schedule') return line;
    const { name, cron, timezone, since: from, tick, want_id } = line[1] as ScheduleRecord;
    return ['schedule', { name, cron, timezone, since: from, tick, want_id }];
  });
  writeFileSync(paths.base, encodeSnapshotFile({ header: { ...file.header, format: 7 }, lines: lines as typeof file.lines }));
  rmSync(paths.snapshot);

  const g = await openAt(t, at('2026-01-05T22:56:40Z'), f.dir, graph);
  t.true(g.platform.log.firstId() > 1, 'started from the base: the log alone cannot');
  t.regex(await (await g.api('/metrics')).text(), /^platform_start_state_source\{source="compaction_base"\} 1$/m);
  t.true(g.logLines.some((l) => /^State: from the compaction base at event \d+, then \d+ events? of the log replayed \(no snapshot used: there is none\)$/.test(l)), g.logLines.join('\n'));
  const after = (await g.getJson('/api/schedules/minutely')) as ScheduleView;
  t.like(after, { last_tick: before.last_tick, last_want_id: before.last_want_id, last_want_status: 'failed', recent_ticks: 10, recent_failed: 10 });
  const detail = await cli(t, g, 'schedules', 'minutely');
  t.regex(detail.stdout, /latest ticks\s+│ 10 of the last 10 failed/);
});

test('pause and resume refuse a body they do not take: a resume with fields, a pause sent as text; nothing is recorded', async (t) => {
  const f = await openAt(t, at('2026-01-05T10:00:30Z'));
  const resume = await f.api('/api/schedules/minutely/resume', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"anything":[1,2,3]}' });
  t.is(resume.status, 400);
  t.regex(((await resume.json()) as { error: string }).error, /Unknown field 'anything'/);
  const text = await f.api('/api/schedules/minutely/pause', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'hello' });
  t.is(text.status, 415);
  t.regex(((await text.json()) as { error: string }).error, /must be JSON, sent with Content-Type: application\/json/);
  // The platform's own scans record meanwhile (a schedule's start): what must not be there is a pause or a resume.
  t.false((await events(f)).some((e) => e.type === 'schedule_paused' || e.type === 'schedule_resumed'), 'nothing recorded');
  t.false(f.platform.state().schedules.get('minutely')?.paused ?? false);
  // With no body at all, both are fine.
  t.is((await f.api('/api/schedules/minutely/pause', { method: 'POST' })).status, 200);
  t.is((await f.api('/api/schedules/minutely/resume', { method: 'POST' })).status, 200);
});

test("a schedule removed from platform.json while paused has no metrics series any more; it keeps its record in the log", async (t) => {
  const f = await openAt(t, at('2026-01-05T10:00:30Z'));
  t.is((await f.api('/api/schedules/minutely/pause', { method: 'POST' })).status, 200);
  t.regex(await (await f.api('/metrics')).text(), /^platform_schedule_paused\{schedule="minutely"\} 1$/m);
  await f.close();
  const without = { ...GRAPH, schedules: GRAPH.schedules.filter((s) => s.name !== 'minutely') };
  const again = await openAt(t, at('2026-01-05T10:01:30Z'), f.dir, without);
  const metrics = await (await again.api('/metrics')).text();
  t.notRegex(metrics, /schedule="minutely"/);
  t.regex(metrics, /^platform_schedule_paused\{schedule="strict"\} 0$/m);
  t.true(again.platform.state().schedules.get('minutely')?.paused, 'its record stays: added back, it is still paused');
});

test('schedules named like the subcommands (pause, resume, show) are read with `platform schedules show <name>`; the bare subcommand says so', async (t) => {
  t.timeout(60_000);
  const yearly = (name: string) => ({ name, cron: '0 0 1 1 *', partitions: [`ok/${name}\${year}`] });
  const graph = { ...TEST_GRAPH, schedules: ['pause', 'resume', 'show', 'nightly'].map(yearly) };
  const f = await openAt(t, at('2026-01-05T10:00:30Z'), undefined, graph);
  await waitFor('the schedules recorded', async () => (await f.getJson('/api/schedules/show')).since !== null);

  // `show <name>` reads any one, whatever its name, as a table or --json.
  for (const name of ['pause', 'resume', 'show', 'nightly']) {
    const one = await cli(t, f, 'schedules', 'show', name);
    t.is(one.code, 0, one.stderr);
    t.regex(one.stdout, new RegExp(`schedule\\s+│ ${name}\\s`), name);
    t.regex(one.stdout, /next tick\s+│ 2027-01-01 00:00:00/);
    const json = await cli(t, f, '--json', 'schedules', 'show', name);
    t.is(json.code, 0, json.stderr);
    t.like(JSON.parse(json.stdout), { name, cron: '0 0 1 1 *' });
  }
  // The bare form still reads a name that is no subcommand.
  t.regex((await cli(t, f, 'schedules', 'nightly')).stdout, /schedule\s+│ nightly\s/);
  const missing = await cli(t, f, 'schedules', 'show', 'nope');
  t.is(missing.code, 1);
  t.regex(missing.stderr, /No schedule named 'nope'/);

  // A subcommand without its name is a usage error that says what to type, and how to read the schedule of that name.
  for (const word of ['pause', 'resume', 'show']) {
    const bare = await cli(t, f, 'schedules', word);
    t.is(bare.code, 2, word);
    t.regex(bare.stderr, new RegExp(`'${word}' needs a schedule's name: platform schedules ${word} <name>`));
    t.true(bare.stderr.includes(`To show a schedule named '${word}': platform schedules show ${word}.`), bare.stderr);
    const json = await cli(t, f, '--json', 'schedules', word);
    t.is(json.code, 2);
    t.like(JSON.parse(json.stderr), { exit_code: 2 });
    t.regex(JSON.parse(json.stderr).error, new RegExp(`platform schedules show ${word}`));
  }
  t.false((await events(f)).some((e) => e.type === 'schedule_paused' || e.type === 'schedule_resumed'), 'none paused or resumed');

  // The list says how to read each such schedule; the help says how to read any.
  const table = await cli(t, f, 'schedules');
  t.is(table.code, 0, table.stderr);
  for (const word of ['pause', 'resume', 'show']) t.true(table.stdout.includes(`schedule '${word}' in detail: platform schedules show ${word}`), table.stdout);
  t.false(table.stdout.includes("schedule 'nightly' in detail"));
  const help = await cli(t, f, 'schedules', '--help');
  t.is(help.code, 0);
  t.regex(help.stdout, /show <name>\s+one schedule in detail, whatever its name/);
  t.regex(help.stdout, /platform schedules show\s+<name>, which works whatever the name/);

  // Pausing the schedule named pause, and showing it paused.
  const paused = await cli(t, f, 'schedules', 'pause', 'pause', '--reason', 'named so');
  t.is(paused.code, 0, paused.stderr);
  t.regex(paused.stdout, /^pause: paused;/);
  t.regex((await cli(t, f, 'schedules', 'show', 'pause')).stdout, /state\s+│ paused since .*: named so \(platform schedules resume pause\)/);
});

