/**
 * Schedules with a real daemon (`platform serve`, real job processes): a 6-field schedule every 2 s makes wants
 * with the right refs and data_timestamp; after kill -9 the restarted daemon makes up the missed ticks (at most
 * `catchup`), and a second restart makes none twice; a daemon killed before a schedule's first tick makes that tick
 * when it comes back; GET /api/schedules and `platform schedules` (table and --json) show the last and next tick; a
 * daemon with schedules is never idle while one without stops; a pause holds through kill -9, and its resume skips
 * what fell due rather than catch it up.
 */
import test from 'ava';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { of } from 'rxjs';
import { createServer } from 'node:http';
import { readServerInfo } from '../lib/client/server-info.js';
import { templateValues } from '../lib/graph/schedule-time.js';
import { serverBusy$ } from '../lib/server/server-busy.js';
import { initialState } from '../lib/state/build-state.js';
import { killAtTeardown, makeWorkspace, poll, sleep } from './helpers/jobs-fixture.js';
import { until } from './helpers/until.js';

const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const BIN = join(REPO_ROOT, 'bin', 'platform');

const GRAPH = {
  jobs: [{ label: 'tick', outputs: ['tick/.*'], exec: ['true'] }],
  schedules: [{ name: 'every2s', cron: '*/2 * * * * *', partitions: ['tick/${date}T${hour}:${minute}', 'tick/week=${week}'], offset: '-1h', catchup: 2 }],
};

interface WantJson {
  want_id: string;
  source: string;
  partitions: string[];
  data_timestamp: string | null;
  comment: string;
  created_at: string;
  schedule_tick: string | null;
}

function serve(
  t: Parameters<typeof killAtTeardown>[0],
  dir: string,
  idleTimeout = '1h',
): { child: ChildProcess; exited: Promise<void>; stderr: () => string } {
  const child = spawn(process.execPath, [BIN, '-C', dir, 'serve', '--port', '0', '--idle-timeout', idleTimeout], {
    cwd: dir,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  killAtTeardown(t, () => (child.exitCode === null && child.signalCode === null ? [child.pid ?? 0] : []));
  return { child, exited, stderr: () => err };
}

async function scheduledWants(url: string): Promise<WantJson[]> {
  const page = (await (await fetch(`${url}/api/wants?limit=1000`)).json()) as { data: WantJson[] };
  return page.data.filter((w) => w.source === 'schedule:every2s');
}

/** The tick a want was made for: its data timestamp minus the schedule's offset of -1h. */
const tickOf = (w: WantJson) => Date.parse(w.data_timestamp!) + 3_600_000;

test.serial('a schedule every 2 s makes wants with the right refs and data_timestamp; kill -9 and restarts catch up once', async (t) => {
  const dir = makeWorkspace(t);
  writeFileSync(join(dir, 'platform.json'), JSON.stringify(GRAPH));
  const first = serve(t, dir);
  t.true(await poll(() => readServerInfo(dir)?.pid === first.child.pid, 10_000, 50), 'serve started');
  let url = `http://127.0.0.1:${readServerInfo(dir)!.port}`;

  let wants: WantJson[] = [];
  for (let i = 0; i < 200 && wants.length < 3; i++) {
    wants = await scheduledWants(url);
    if (wants.length < 3) await sleep(50);
  }
  t.true(wants.length >= 3, `three ticks made wants (${wants.length})`);
  const ticks = wants.map(tickOf).sort((a, b) => a - b);
  for (const w of wants) {
    const tick = tickOf(w);
    t.is(tick % 2000, 0, 'ticks fall on even seconds');
    const v = templateValues(tick - 3_600_000, 'UTC');
    t.deepEqual(w.partitions, [`tick/${v.date}T${v.hour}:${v.minute}`, `tick/week=${v.week}`], 'refs templated from the tick minus one hour');
    t.regex(w.comment, /^schedule every2s, tick /);
    t.is(w.schedule_tick, new Date(tick).toISOString(), 'the want detail names its tick');
  }
  for (let i = 1; i < ticks.length; i++) t.is(ticks[i]! - ticks[i - 1]!, 2000, 'one want per tick, none skipped');

  // GET /api/schedules and the CLI show the last tick and the next.
  const listed = (await (await fetch(`${url}/api/schedules`)).json()) as { data: Array<{ name: string; last_tick: string; last_want_id: string; next_tick: string }> };
  t.is(listed.data[0]!.name, 'every2s');
  t.true(Date.parse(listed.data[0]!.next_tick) > Date.parse(listed.data[0]!.last_tick));
  const cli = spawnSync(process.execPath, [BIN, '--server-url', url, '--json', 'schedules'], { encoding: 'utf8' });
  t.is(cli.status, 0, cli.stderr);
  t.like(JSON.parse(cli.stdout).data[0], { name: 'every2s', cron: '*/2 * * * * *', offset: '-1h', catchup: 2 });
  const table = spawnSync(process.execPath, [BIN, '--server-url', url, 'schedules'], { encoding: 'utf8' });
  t.is(table.status, 0, table.stderr);
  t.regex(table.stdout, /every2s/);
  t.regex(table.stdout, /\*\/2 \* \* \* \* \*/);
  const one = spawnSync(process.execPath, [BIN, '--server-url', url, '--json', 'schedules', 'every2s'], { encoding: 'utf8' });
  t.is(one.status, 0, one.stderr);
  const detail = JSON.parse(one.stdout) as { name: string; since: string; last_tick: string; next_partitions: string[] };
  t.is(detail.name, 'every2s');
  t.true(Date.parse(detail.since) < Date.parse(detail.last_tick), 'it counts its ticks from when the daemon first ran with it');
  t.is(detail.next_partitions.length, 2);
  // A page past the end says how many there are, not that there are none.
  const past = spawnSync(process.execPath, [BIN, '--server-url', url, 'schedules', '--offset', '10'], { encoding: 'utf8' });
  t.is(past.status, 0, past.stderr);
  t.is(past.stdout, 'no schedules at offset 10 (there is 1; use a smaller --offset)\n');
  const unknown = spawnSync(process.execPath, [BIN, '--server-url', url, 'schedules', 'nope'], { encoding: 'utf8' });
  t.not(unknown.status, 0);
  t.regex(unknown.stderr, /No schedule named 'nope'/);

  // Crash it and stay down for 7 s (at least three ticks missed), then start again: the latest two missed ticks
  // (catchup: 2) are made up, once each; the older ones are not.
  const killedAt = Date.now();
  first.child.kill('SIGKILL');
  await first.exited;
  await sleep(7_000);
  const second = serve(t, dir);
  t.true(await poll(() => readServerInfo(dir)?.pid === second.child.pid, 10_000, 50), 'serve started again');
  url = `http://127.0.0.1:${readServerInfo(dir)!.port}`;
  let after: WantJson[] = [];
  let lastBefore = 0;
  for (let i = 0; i < 200; i++) {
    const all = await scheduledWants(url);
    // What the first daemon made (before it was killed), and what the second made since it started.
    lastBefore = Math.max(...all.filter((w) => Date.parse(w.created_at) < killedAt).map(tickOf));
    after = all.filter((w) => Date.parse(w.created_at) > killedAt);
    if (after.length >= 3) break;
    await sleep(50);
  }
  // The first step of the restarted daemon made the catch-up wants: one batch of events, one timestamp.
  const firstStep = Math.min(...after.map((w) => Date.parse(w.created_at)));
  const late = after.filter((w) => Date.parse(w.created_at) === firstStep).map(tickOf).sort((a, b) => a - b);
  t.is(late.length, 2, `two missed ticks made up at start (${late.map((x) => new Date(x).toISOString()).join(', ')})`);
  t.is(late[1]! - late[0]!, 2000, 'the latest two, consecutive');
  const firstAfter = Math.min(...after.map(tickOf));
  t.is(firstAfter, late[0], 'nothing older than them was made');
  t.true((firstAfter - lastBefore) / 2000 - 1 >= 1, 'at least one missed tick was left out (more were missed than catchup)');

  // A second crash right away and a restart: no tick is made twice.
  second.child.kill('SIGKILL');
  await second.exited;
  const third = serve(t, dir);
  t.true(await poll(() => readServerInfo(dir)?.pid === third.child.pid, 10_000, 50), 'serve started a third time');
  url = `http://127.0.0.1:${readServerInfo(dir)!.port}`;
  // Until the third daemon has made a tick of its own: by then its start-up scan (which would make a duplicate) is over.
  const thirdStarted = Date.now();
  let all: WantJson[] = [];
  for (let i = 0; i < 200 && !all.some((w) => Date.parse(w.created_at) >= thirdStarted); i++) {
    all = await scheduledWants(url);
    await sleep(50);
  }
  t.true(all.some((w) => Date.parse(w.created_at) >= thirdStarted), 'the third daemon made a tick');
  const ticksMade = all.map(tickOf);
  t.is(new Set(ticksMade).size, ticksMade.length, 'every tick made one want, across restarts');
  third.child.kill('SIGTERM');
  await third.exited;
});

test.serial('a pause survives kill -9: the next daemon makes no wants for it; the resume skips what fell due and makes none of it', async (t) => {
  const dir = makeWorkspace(t);
  writeFileSync(join(dir, 'platform.json'), JSON.stringify(GRAPH));
  const first = serve(t, dir);
  t.true(await poll(() => readServerInfo(dir)?.pid === first.child.pid, 10_000, 50), 'serve started');
  let url = `http://127.0.0.1:${readServerInfo(dir)!.port}`;
  await until(() => scheduledWants(url), (ws) => ws.length > 0, 'a first tick made');
  const pause = spawnSync(process.execPath, [BIN, '--server-url', url, '--json', 'schedules', 'pause', 'every2s', '--reason', 'maintenance'], { encoding: 'utf8' });
  t.is(pause.status, 0, pause.stderr);
  t.like(JSON.parse(pause.stdout), { changed: true, schedule: { paused: true, paused_reason: 'maintenance' } });
  const madeBefore = (await scheduledWants(url)).length;

  first.child.kill('SIGKILL');
  await first.exited;
  const second = serve(t, dir);
  t.true(await poll(() => readServerInfo(dir)?.pid === second.child.pid, 10_000, 50), 'serve started again');
  url = `http://127.0.0.1:${readServerInfo(dir)!.port}`;
  t.like(await (await fetch(`${url}/api/schedules/every2s`)).json(), { paused: true, paused_reason: 'maintenance', next_tick: null });
  // Three ticks' worth of time: none is made while it is paused.
  await sleep(6_000);
  t.is((await scheduledWants(url)).length, madeBefore, 'no want while paused, after kill -9');

  const resume = spawnSync(process.execPath, [BIN, '--server-url', url, '--json', 'schedules', 'resume', 'every2s'], { encoding: 'utf8' });
  t.is(resume.status, 0, resume.stderr);
  const reply = JSON.parse(resume.stdout) as { changed: boolean; skipped_ticks: number; schedule: { paused: boolean; last_skipped_tick: string } };
  t.true(reply.changed);
  t.false(reply.schedule.paused);
  t.true(reply.skipped_ticks >= 3, `the ticks due while paused are counted as skipped (${reply.skipped_ticks})`);
  const resumedUpTo = Date.parse(reply.schedule.last_skipped_tick);
  // Ticks after the resume are made again; none of those that fell due while it was paused ever is.
  const after = await until(() => scheduledWants(url), (ws) => ws.length > madeBefore, 'a tick made after the resume');
  const newTicks = after.slice(madeBefore).map(tickOf);
  t.true(newTicks.length <= 2 && newTicks.every((tick) => tick > resumedUpTo), `only ticks after the resume (${newTicks.map((x) => new Date(x).toISOString()).join(', ')})`);
  second.child.kill('SIGTERM');
  await second.exited;
});

test.serial('a daemon killed before a schedule\'s first tick makes that tick when it comes back', async (t) => {
  const dir = makeWorkspace(t);
  // Once a minute, at a second about 9 s from now: the daemon starts and records the schedule well before it.
  const tick = Math.ceil((Date.now() + 9_000) / 1000) * 1000;
  const graph = {
    jobs: [{ label: 'tick', outputs: ['tick/.*'], exec: ['true'] }],
    schedules: [{ name: 'minutely', cron: `${new Date(tick).getUTCSeconds()} * * * * *`, partitions: ['tick/${date}T${hour}:${minute}'] }],
  };
  writeFileSync(join(dir, 'platform.json'), JSON.stringify(graph));
  const first = serve(t, dir);
  t.true(await poll(() => readServerInfo(dir)?.pid === first.child.pid, 10_000, 50), 'serve started');
  const url = () => `http://127.0.0.1:${readServerInfo(dir)!.port}`;
  let since: string | null = null;
  for (let i = 0; i < 100 && since === null; i++) {
    since = ((await (await fetch(`${url()}/api/schedules/minutely`)).json()) as { since: string | null }).since;
    if (since === null) await sleep(50);
  }
  t.truthy(since, 'the daemon recorded the schedule');
  first.child.kill('SIGKILL');
  await first.exited;
  if (Date.now() >= tick) return t.fail('the daemon took more than 9 s to record its schedule; the tick passed while it was up');
  // Down while the tick passes.
  await poll(() => Date.now() > tick + 100, 15_000, 50);
  const second = serve(t, dir);
  t.true(await poll(() => readServerInfo(dir)?.pid === second.child.pid, 10_000, 50), 'serve started again');
  const made = await until(
    async () => ((await (await fetch(`${url()}/api/wants?limit=1000`)).json()) as { data: WantJson[] }).data,
    (ws) => ws.some((w) => w.source === 'schedule:minutely'),
    'the missed tick made into a want',
  );
  const scheduled = made.filter((w) => w.source === 'schedule:minutely');
  t.is(scheduled.length, 1);
  t.is(scheduled[0]!.schedule_tick, new Date(tick).toISOString());
  const v = templateValues(tick, 'UTC');
  t.deepEqual(scheduled[0]!.partitions, [`tick/${v.date}T${v.hour}:${v.minute}`]);
  second.child.kill('SIGTERM');
  await second.exited;
});

test.serial('a daemon with schedules never stops for being idle, while one without does; it says why on stderr', async (t) => {
  const scheduledDir = makeWorkspace(t);
  writeFileSync(
    join(scheduledDir, 'platform.json'),
    JSON.stringify({ jobs: [{ label: 'r', outputs: ['report/.*'], exec: ['true'] }], schedules: [{ name: 'yearly', cron: '0 0 1 1 *', partitions: ['report/${year}'] }] }),
  );
  const plainDir = makeWorkspace(t);
  writeFileSync(join(plainDir, 'platform.json'), JSON.stringify({ jobs: [{ label: 'r', outputs: ['report/.*'], exec: ['true'] }] }));
  // The daemon with schedules starts first, so it has been idle longer than the other when that one stops.
  const scheduled = serve(t, scheduledDir, '1s');
  t.true(await poll(() => readServerInfo(scheduledDir)?.pid === scheduled.child.pid, 10_000, 50), 'the daemon with schedules started');
  const plain = serve(t, plainDir, '1s');
  t.true(await poll(() => plain.child.exitCode !== null, 20_000, 50), 'the daemon without schedules stopped after its idle second');
  t.regex(plain.stderr(), /idle/);
  t.is(scheduled.child.exitCode, null, 'the daemon with schedules still runs');
  t.is(scheduled.child.signalCode, null);
  t.is(await (await fetch(`http://127.0.0.1:${readServerInfo(scheduledDir)!.port}/health`)).text(), 'OK');
  t.regex(scheduled.stderr(), /platform\.json has schedules: this daemon makes their wants, so it does not stop when idle/);
  scheduled.child.kill('SIGTERM');
  await scheduled.exited;
});

test('a daemon with schedules is busy even with nothing in flight, so the idle timeout never stops it', async (t) => {
  const server = createServer();
  const seen: boolean[] = [];
  const sub = serverBusy$(server, of(initialState()), of(true)).subscribe((b) => seen.push(b));
  sub.unsubscribe();
  t.deepEqual(seen, [true]);
  const seenWithout: boolean[] = [];
  serverBusy$(server, of(initialState()), of(false)).subscribe((b) => seenWithout.push(b)).unsubscribe();
  t.deepEqual(seenWithout, [false]);
});
