/**
 * What the pure planner makes of schedules, on virtual time: a schedule is recorded before its first tick, each tick
 * makes one want (refs, data_timestamp, source, priority), a restart after downtime makes the latest `catchup` missed
 * ticks and never one twice, a cron edit does not make the new cron's past ticks, and only full scans fire. The
 * ticks it does not make are recorded as skipped (catchup 0 makes none that were missed); a paused schedule makes
 * nothing and its resume skips what fell due meanwhile; all of it survives a snapshot.
 */
import test from 'ava';
import fc from 'fast-check';
import type { BuildEvent, EventPayload, JobConfig, WantCreated } from '../lib/events/build-event.js';
import { scheduleView } from '../lib/server/schedule-queries.js';
import { parseGraph } from '../lib/graph/parse-graph.js';
import type { ScheduleDefinition } from '../lib/graph/schedule-definition.js';
import { nextTick } from '../lib/graph/schedule-time.js';
import { planStep, type StepPlan } from '../lib/orchestrator/plan-step.js';
import { initialState, type BuildState } from '../lib/state/build-state.js';
import { reduce } from '../lib/state/reduce.js';
import { fromSnapshot, snapshotFromLines, snapshotLines, toSnapshot, type SnapshotLine } from '../lib/state/snapshot.js';
import { MAX_COUNTED_TICKS } from '../lib/graph/schedule-catchup.js';
import type { Command } from '../lib/orchestrator/command.js';
import { canon } from './helpers/state-canon.js';

const at = (iso: string) => Date.parse(iso);

function schedule(fields: Record<string, unknown>): ScheduleDefinition {
  const graph = parseGraph(
    {
      jobs: [{ label: 'daily', outputs: ['daily/revenue/date=(?<date>\\d{4}-\\d{2}-\\d{2})'], exec: ['true'] }],
      schedules: [{ name: 'revenue', cron: '0 3 * * *', partitions: ['daily/revenue/date=${date}'], ...fields }],
    },
    'platform.json',
  );
  return graph.schedules[0]!;
}

/** One step at `now`: a full scan unless `narrow`, with nothing else going on. */
function step(state: BuildState, now: number, schedules: ScheduleDefinition[], narrow = false): StepPlan {
  return planStep({
    state,
    now,
    commands: [],
    started: [],
    outcomes: [],
    launched: new Set(),
    tasks: new Map(),
    policy: { max_concurrent_job_runs: 1, jobs: new Map(), schedules },
    ...(narrow ? { candidates: new Map() } : {}),
  });
}

const wantsOf = (events: readonly EventPayload[]): WantCreated[] => events.flatMap((e) => (e.type === 'want_created' ? [e.want_created] : []));

test('the first scan records the schedule counting from now and makes no want; the next tick is a deadline', (t) => {
  const s = schedule({});
  const now = at('2026-01-05T10:00:00Z');
  const plan = step(initialState(), now, [s]);
  t.deepEqual(plan.events, [
    { type: 'schedules_changed', schedules_changed: { schedules: [{ name: 'revenue', cron: '0 3 * * *', timezone: 'UTC', since: now }] } },
  ]);
  t.true(plan.deadlines.includes(at('2026-01-06T03:00:00Z')));
  t.like(plan.state.schedules.get('revenue'), { since: now, tick: 0, want_id: '' });
  // A second scan records nothing more.
  t.deepEqual(step(plan.state, now + 1000, [s]).events, []);
});

test('at its tick a schedule makes one want: refs and data_timestamp from tick + offset, its source, priority, ttl, sla', (t) => {
  // ttl and sla count from the data timestamp, a day back: more than a day, or the want is over when made.
  const s = schedule({ offset: '-1d', priority: 7, ttl_seconds: 90_000, sla_seconds: 93_600, partitions: ['daily/revenue/date=${date}'] });
  const recorded = step(initialState(), at('2026-01-05T10:00:00Z'), [s]).state;
  const tick = at('2026-01-06T03:00:00Z');
  const plan = step(recorded, tick + 15, [s]);
  const wants = wantsOf(plan.events);
  t.is(wants.length, 1);
  t.like(wants[0], {
    partitions: ['daily/revenue/date=2026-01-05'],
    data_timestamp: at('2026-01-05T03:00:00Z'),
    source: 'schedule:revenue',
    schedule_tick: tick,
    priority: 7,
    ttl_seconds: 90_000,
    sla_seconds: 93_600,
    parent_want_id: '',
  });
  t.like(plan.state.schedules.get('revenue'), { tick, want_id: wants[0]!.want_id });
  t.true(plan.deadlines.includes(at('2026-01-07T03:00:00Z')), 'the following tick wakes the loop');
  t.deepEqual(wantsOf(step(plan.state, tick + 5000, [s]).events), [], 'the tick is made once');
});

test('killed before its first tick: the start is on record, so the restarted daemon makes the missed ticks (catchup)', (t) => {
  const s = schedule({ catchup: 2 });
  const recorded = step(initialState(), at('2026-01-05T10:00:00Z'), [s]).state;
  // Down for three days: three ticks missed, the latest two made, oldest first, in the first scan.
  const plan = step(recorded, at('2026-01-08T12:00:00Z'), [s]);
  t.deepEqual(
    wantsOf(plan.events).map((w) => w.partitions[0]),
    ['daily/revenue/date=2026-01-07', 'daily/revenue/date=2026-01-08'],
  );
  // Restarting again (twice) makes none of them again.
  t.deepEqual(wantsOf(step(plan.state, at('2026-01-08T12:00:05Z'), [s]).events), []);
  t.deepEqual(wantsOf(step(plan.state, at('2026-01-08T12:00:09Z'), [s]).events), []);
});

test('a snapshot keeps since when a schedule counts, so a daemon opened from one still catches up', (t) => {
  const s = schedule({});
  const recorded = step(initialState(), at('2026-01-05T10:00:00Z'), [s]).state;
  const restored = fromSnapshot(JSON.parse(JSON.stringify(toSnapshot(recorded))));
  t.deepEqual(canon(restored), canon(recorded));
  t.deepEqual(wantsOf(step(restored, at('2026-01-06T04:00:00Z'), [s]).events).map((w) => w.schedule_tick), [at('2026-01-06T03:00:00Z')]);
});

test('an edited cron counts from the edit: the new cron\'s past ticks are not made; the last tick stays on record', (t) => {
  const daily = schedule({});
  let state = step(initialState(), at('2026-01-05T10:00:00Z'), [daily]).state;
  state = step(state, at('2026-01-06T03:00:01Z'), [daily]).state;
  const hourly = schedule({ cron: '30 * * * *' });
  const edit = at('2026-01-06T10:45:00Z');
  const plan = step(state, edit, [hourly]);
  t.deepEqual(plan.events.map((e) => e.type), ['schedules_changed'], 'no want for 10:30 or earlier');
  t.like(plan.state.schedules.get('revenue'), { cron: '30 * * * *', since: edit, tick: at('2026-01-06T03:00:00Z') });
  t.deepEqual(wantsOf(step(plan.state, at('2026-01-06T11:30:00Z'), [hourly]).events).map((w) => w.schedule_tick), [at('2026-01-06T11:30:00Z')]);
});

test('a log with wants of a schedule but no record of its start counts from its last tick', (t) => {
  const s = schedule({ catchup: 5 });
  const tick = at('2026-01-05T03:00:00Z');
  const legacy = reduce(initialState(), {
    event_id: 1,
    timestamp: tick,
    type: 'want_created',
    want_created: {
      want_id: 'w-1', partitions: ['daily/revenue/date=2026-01-05'], comment: '', data_timestamp: tick, ttl_seconds: 0, sla_seconds: 0,
      source: 'schedule:revenue', parent_want_id: '', root_want_id: 'w-1', rebuild: 'missing', priority: 0, backfill_id: '',
      max_concurrent_job_runs: 0, pattern: '', schedule_tick: tick,
    },
  });
  t.like(legacy.schedules.get('revenue'), { cron: '', since: 0, tick, want_id: 'w-1' });
  const plan = step(legacy, at('2026-01-07T12:00:00Z'), [s]);
  t.like(plan.events[0], { type: 'schedules_changed', schedules_changed: { schedules: [{ name: 'revenue', since: tick }] } });
  t.deepEqual(wantsOf(plan.events).map((w) => w.schedule_tick), [at('2026-01-06T03:00:00Z'), at('2026-01-07T03:00:00Z')]);
});

test('only full scans fire schedules (a deadline makes one at the tick); a narrow step leaves them alone', (t) => {
  const s = schedule({});
  const state = step(initialState(), at('2026-01-05T10:00:00Z'), [s]).state;
  t.deepEqual(step(state, at('2026-01-06T03:00:01Z'), [s], true).events, []);
});

test('property: steps at random times make each tick at most once, in order, at most catchup per step, none skipped while up', (t) => {
  const crons = fc.constantFrom('*/2 * * * * *', '*/7 * * * *', '0 3 * * *', '15 */2 * * 1-5');
  // Gaps between steps: mostly short (the daemon is up and wakes at each tick), sometimes long (it was down).
  const gaps = fc.array(fc.oneof({ weight: 4, arbitrary: fc.integer({ min: 1, max: 3_000 }) }, { weight: 1, arbitrary: fc.integer({ min: 1, max: 3 * 86_400_000 }) }), {
    minLength: 1,
    maxLength: 30,
  });
  t.notThrows(() =>
    fc.assert(
      fc.property(crons, fc.integer({ min: 1, max: 4 }), fc.integer({ min: 0, max: 86_400_000 }), gaps, (cron, catchup, start, steps) => {
        const s = schedule({ cron, catchup });
        let now = at('2026-01-05T00:00:00Z') + start;
        let state = step(initialState(), now, [s]).state;
        const made: number[] = [];
        for (const gap of steps) {
          // Up: the loop wakes at each deadline, so a step never comes later than the next tick (when the gap is
          // short); down: a long gap.
          const next = nextTick(s, now)!;
          now = gap <= 3_000 ? Math.min(now + gap, next) : now + gap;
          const plan = step(state, now, [s]);
          const ticks = wantsOf(plan.events).map((w) => w.schedule_tick);
          if (ticks.length > catchup) return false;
          // While up, a step makes exactly the tick it woke for, if it is one: none is skipped or late.
          if (gap <= 3_000 && ticks.join() !== (now === next ? [next] : []).join()) return false;
          made.push(...ticks);
          state = plan.state;
        }
        for (let i = 1; i < made.length; i++) if (made[i]! <= made[i - 1]!) return false;
        return true;
      }),
      { numRuns: 150 },
    ),
  );
});

// ---- Skipped ticks, catchup 0, pause and resume (session 23).

const skipsOf = (events: readonly EventPayload[]) => events.flatMap((e) => (e.type === 'schedule_ticks_skipped' ? [e.schedule_ticks_skipped] : []));

/** A step with one command and nothing else (not a full scan, as a command's step usually is not). */
function command(state: BuildState, now: number, schedules: ScheduleDefinition[], c: Command): StepPlan {
  return planStep({
    state,
    now,
    commands: [c],
    started: [],
    outcomes: [],
    launched: new Set(),
    tasks: new Map(),
    policy: { max_concurrent_job_runs: 1, jobs: new Map(), schedules },
    candidates: new Map(),
  });
}

test('ticks missed beyond catchup are recorded as skipped (how many, first and latest), before the wants made, once', (t) => {
  // The QA pass's case: every minute, default catchup, the daemon down across 22:44 and 22:45.
  const s = schedule({ cron: '* * * * *' });
  const state = step(initialState(), at('2026-01-05T22:43:30Z'), [s]).state;
  const plan = step(state, at('2026-01-05T22:45:30Z'), [s]);
  t.deepEqual(skipsOf(plan.events), [
    { name: 'revenue', count: 1, count_at_least: false, first_tick: at('2026-01-05T22:44:00Z'), latest_tick: at('2026-01-05T22:44:00Z'), reason: 'catchup' },
  ]);
  t.deepEqual(wantsOf(plan.events).map((w) => w.schedule_tick), [at('2026-01-05T22:45:00Z')]);
  t.true(plan.events.findIndex((e) => e.type === 'schedule_ticks_skipped') < plan.events.findIndex((e) => e.type === 'want_created'), 'in the order of the ticks');
  t.like(plan.state.schedules.get('revenue'), { skipped: 1, skipped_at_least: false, skipped_tick: at('2026-01-05T22:44:00Z'), tick: at('2026-01-05T22:45:00Z') });
  t.deepEqual(step(plan.state, at('2026-01-05T22:45:40Z'), [s]).events, [], 'a later scan counts them no more');

  // Down again for ten minutes with catchup 3: seven skipped, the latest three made; the total goes on.
  const three = schedule({ cron: '* * * * *', catchup: 3 });
  const again = step(plan.state, at('2026-01-05T22:55:10Z'), [three]);
  t.like(skipsOf(again.events)[0], { count: 7, first_tick: at('2026-01-05T22:46:00Z'), latest_tick: at('2026-01-05T22:52:00Z') });
  t.deepEqual(wantsOf(again.events).map((w) => w.schedule_tick), [at('2026-01-05T22:53:00Z'), at('2026-01-05T22:54:00Z'), at('2026-01-05T22:55:00Z')]);
  t.like(again.state.schedules.get('revenue'), { skipped: 8, skipped_tick: at('2026-01-05T22:52:00Z') });
});

test('catchup 0: a tick that falls due while the daemon runs is made; every tick missed while none ran is skipped', (t) => {
  const s = schedule({ cron: '* * * * *', catchup: 0 });
  const state = step(initialState(), at('2026-01-05T22:43:30Z'), [s]).state;
  const upSince = at('2026-01-05T22:43:00Z');
  const plan = (st: BuildState, now: number, up: number) =>
    planStep({ state: st, now, upSince: up, commands: [], started: [], outcomes: [], launched: new Set(), tasks: new Map(), policy: { max_concurrent_job_runs: 1, jobs: new Map(), schedules: [s] } });
  // Up: the loop wakes at 22:44 and makes it.
  const onTime = plan(state, at('2026-01-05T22:44:00.005Z'), upSince);
  t.deepEqual(wantsOf(onTime.events).map((w) => w.schedule_tick), [at('2026-01-05T22:44:00Z')]);
  t.deepEqual(skipsOf(onTime.events), []);
  // Down across 22:45 and 22:46, started again at 22:46:30: neither is made, both are skipped.
  const restarted = at('2026-01-05T22:46:30Z');
  const back = plan(onTime.state, restarted, restarted);
  t.deepEqual(wantsOf(back.events), []);
  t.like(skipsOf(back.events)[0], { count: 2, first_tick: at('2026-01-05T22:45:00Z'), latest_tick: at('2026-01-05T22:46:00Z'), reason: 'catchup' });
  t.true(back.deadlines.includes(at('2026-01-05T22:47:00Z')), 'it wakes for its next tick');
  // The next tick falls due while it runs: made.
  const next = plan(back.state, at('2026-01-05T22:47:00.003Z'), restarted);
  t.deepEqual(wantsOf(next.events).map((w) => w.schedule_tick), [at('2026-01-05T22:47:00Z')]);
  // A scan held up across two ticks while the daemon runs is not downtime: both are made, none skipped.
  const late = plan(next.state, at('2026-01-05T22:49:00.500Z'), restarted);
  t.deepEqual(wantsOf(late.events).map((w) => w.schedule_tick), [at('2026-01-05T22:48:00Z'), at('2026-01-05T22:49:00Z')]);
  t.deepEqual(skipsOf(late.events), []);
});

test('a scan takes at most its budget of cron steps over all schedules; the rest wait for the next scan, and every gap is counted once', (t) => {
  // Twenty schedules ticking every minute, down for a day: 20 x 1,000 counted steps in one scan before.
  const many = Array.from({ length: 20 }, (_, i) => ({ ...schedule({ cron: '* * * * *' }), name: `m${i}` }));
  let state = step(initialState(), at('2026-01-05T00:00:30Z'), many).state;
  const now = at('2026-01-06T00:00:30Z');
  const scans: number[] = [];
  const recorded = new Set<string>();
  for (let i = 0; i < 40 && recorded.size < many.length; i++) {
    const plan = step(state, now, many);
    const skips = skipsOf(plan.events);
    for (const k of skips) {
      t.false(recorded.has(k.name), `${k.name} counted once`);
      recorded.add(k.name);
    }
    scans.push(skips.length);
    if (recorded.size < many.length) t.true(plan.deadlines.includes(now + 1), 'a scan that stopped short asks for the next at once');
    state = plan.state;
  }
  t.is(recorded.size, many.length, 'every schedule had its gap counted');
  t.true(scans[0]! < many.length && scans[0]! >= 1, `the first scan stopped short (${scans[0]} of ${many.length})`);
  for (const s of many) t.like(state.schedules.get(s.name), { skipped: 1000, skipped_at_least: true });
});

test('a gap of more ticks than are counted one by one records a lower bound, with its first and latest tick', (t) => {
  const s = schedule({ cron: '*/2 * * * * *' });
  const state = step(initialState(), at('2026-01-05T00:00:00.500Z'), [s]).state;
  const plan = step(state, at('2026-01-06T00:00:01Z'), [s]);
  t.deepEqual(skipsOf(plan.events), [
    { name: 'revenue', count: MAX_COUNTED_TICKS, count_at_least: true, first_tick: at('2026-01-05T00:00:02Z'), latest_tick: at('2026-01-05T23:59:58Z'), reason: 'catchup' },
  ]);
  t.deepEqual(wantsOf(plan.events).map((w) => w.schedule_tick), [at('2026-01-06T00:00:00Z')]);
  t.like(plan.state.schedules.get('revenue'), { skipped: MAX_COUNTED_TICKS, skipped_at_least: true });
  // Exactly the bound is exact: 1,000 ticks counted to the last.
  const exact = step(state, at('2026-01-05T00:33:22Z'), [s]);
  t.like(skipsOf(exact.events)[0], { count: 1000, count_at_least: false, latest_tick: at('2026-01-05T00:33:20Z') });
});

test('a paused schedule makes no want and sets no deadline, at its tick or after downtime; a second pause records nothing', (t) => {
  const s = schedule({ cron: '* * * * *' });
  const state = step(initialState(), at('2026-01-05T22:43:30Z'), [s]).state;
  const paused = command(state, at('2026-01-05T22:43:40Z'), [s], { kind: 'pause_schedule', name: 'revenue', reason: 'feed down' });
  t.deepEqual(paused.replies, [{ ok: true, status: 200, want_id: '', schedule: { name: 'revenue', changed: true, skipped: 0, skipped_at_least: false } }]);
  // A command that does not say when it was asked for is taken as asked for at the step's time.
  t.deepEqual(paused.events, [{ type: 'schedule_paused', schedule_paused: { name: 'revenue', reason: 'feed down', requested_at: at('2026-01-05T22:43:40Z') } }]);
  t.like(paused.state.schedules.get('revenue'), { paused: true, paused_at: at('2026-01-05T22:43:40Z'), paused_reason: 'feed down' });
  const again = command(paused.state, at('2026-01-05T22:43:50Z'), [s], { kind: 'pause_schedule', name: 'revenue', reason: 'other' });
  t.deepEqual(again.events, []);
  t.like(again.replies[0], { ok: true, status: 200, schedule: { changed: false } });
  for (const now of [at('2026-01-05T22:44:00.001Z'), at('2026-01-06T10:00:00Z')]) {
    const scan = step(paused.state, now, [s]);
    t.deepEqual(scan.events, [], 'no want, no skip while paused');
    t.deepEqual(scan.deadlines, [], 'no wake-up for its ticks');
  }
});

test('resume: the ticks due while paused are skipped (counted, reason paused), none is made, the next tick is', (t) => {
  const s = schedule({ cron: '* * * * *', catchup: 5 });
  let state = step(initialState(), at('2026-01-05T22:43:30Z'), [s]).state;
  state = command(state, at('2026-01-05T22:43:40Z'), [s], { kind: 'pause_schedule', name: 'revenue', reason: '' }).state;
  state = step(state, at('2026-01-05T23:00:00Z'), [s]).state;
  const resumed = command(state, at('2026-01-05T23:10:30Z'), [s], { kind: 'resume_schedule', name: 'revenue' });
  t.deepEqual(resumed.replies, [{ ok: true, status: 200, want_id: '', schedule: { name: 'revenue', changed: true, skipped: 27, skipped_at_least: false } }]);
  t.deepEqual(resumed.events, [
    { type: 'schedule_resumed', schedule_resumed: { name: 'revenue' } },
    { type: 'schedule_ticks_skipped', schedule_ticks_skipped: { name: 'revenue', count: 27, count_at_least: false, first_tick: at('2026-01-05T22:44:00Z'), latest_tick: at('2026-01-05T23:10:00Z'), reason: 'paused' } },
  ]);
  t.true(resumed.deadlines.includes(at('2026-01-05T23:11:00Z')));
  t.like(resumed.state.schedules.get('revenue'), { paused: false, paused_at: 0, paused_reason: '', skipped: 27 });
  // A full scan right after makes nothing (catchup 5 does not bring the paused ticks back); the next tick is made.
  t.deepEqual(step(resumed.state, at('2026-01-05T23:10:31Z'), [s]).events, []);
  t.deepEqual(wantsOf(step(resumed.state, at('2026-01-05T23:11:00.002Z'), [s]).events).map((w) => w.schedule_tick), [at('2026-01-05T23:11:00Z')]);
  // Resuming a running schedule changes nothing.
  const twice = command(resumed.state, at('2026-01-05T23:10:40Z'), [s], { kind: 'resume_schedule', name: 'revenue' });
  t.deepEqual(twice.events, []);
  t.like(twice.replies[0], { ok: true, schedule: { changed: false } });
});

test('a pause in the first step after downtime: the ticks missed while down are decided first (catchup), then it pauses; the resume skips only what fell due while paused', (t) => {
  const s = schedule({ cron: '* * * * *' });
  const recorded = step(initialState(), at('2026-01-05T22:43:30Z'), [s]).state;
  // Down across 22:44 and 22:45; the first step of the next daemon, at 22:45:30, is a full scan with a pause in it.
  const back = at('2026-01-05T22:45:30Z');
  const first = planStep({
    state: recorded, now: back, upSince: back, commands: [{ kind: 'pause_schedule', name: 'revenue', reason: 'feed down', requested_at: back }],
    started: [], outcomes: [], launched: new Set(), tasks: new Map(), policy: { max_concurrent_job_runs: 1, jobs: new Map(), schedules: [s] },
  });
  t.deepEqual(first.events.map((e) => e.type), ['schedule_ticks_skipped', 'want_created', 'schedule_paused'], 'caught up as the scan would have, then paused');
  t.like(skipsOf(first.events)[0], { count: 1, first_tick: at('2026-01-05T22:44:00Z'), latest_tick: at('2026-01-05T22:44:00Z'), reason: 'catchup' });
  t.deepEqual(wantsOf(first.events).map((w) => w.schedule_tick), [at('2026-01-05T22:45:00Z')], 'catchup 1: the latest missed tick is made');
  t.like(first.replies[0], { ok: true, schedule: { changed: true } });
  t.like(first.state.schedules.get('revenue'), { paused: true, tick: at('2026-01-05T22:45:00Z'), skipped: 1 });
  // Resumed at 23:00:30: only 22:46 to 23:00 fell due while it was paused.
  const resumed = command(first.state, at('2026-01-05T23:00:30Z'), [s], { kind: 'resume_schedule', name: 'revenue' });
  t.deepEqual(skipsOf(resumed.events), [
    { name: 'revenue', count: 15, count_at_least: false, first_tick: at('2026-01-05T22:46:00Z'), latest_tick: at('2026-01-05T23:00:00Z'), reason: 'paused' },
  ]);
  t.like(resumed.state.schedules.get('revenue'), { skipped: 16 });

  // catchup 0: the missed ticks are skipped as missed (reason catchup), not as paused.
  const strict = schedule({ cron: '* * * * *', catchup: 0 });
  const strictFirst = planStep({
    state: step(initialState(), at('2026-01-05T22:43:30Z'), [strict]).state, now: back, upSince: back,
    commands: [{ kind: 'pause_schedule', name: 'revenue', reason: '' }],
    started: [], outcomes: [], launched: new Set(), tasks: new Map(), policy: { max_concurrent_job_runs: 1, jobs: new Map(), schedules: [strict] },
  });
  t.deepEqual(strictFirst.events.map((e) => e.type), ['schedule_ticks_skipped', 'schedule_paused']);
  t.like(skipsOf(strictFirst.events)[0], { count: 2, latest_tick: at('2026-01-05T22:45:00Z'), reason: 'catchup' });
});

test('a pause planned in a step after it was asked for: a tick due before the request is made, one due after it is the pause\'s (skipped as paused at the resume)', (t) => {
  const s = schedule({ cron: '* * * * *' });
  const state = step(initialState(), at('2026-01-05T22:43:30Z'), [s]).state;
  // Asked for at 22:44:59.990, planned at 22:45:00.010 with the 22:45 deadline in the same batch (a full scan).
  const asked = at('2026-01-05T22:44:59.990Z');
  const plan = planStep({
    state, now: at('2026-01-05T22:45:00.010Z'), upSince: at('2026-01-05T22:43:00Z'), commands: [{ kind: 'pause_schedule', name: 'revenue', reason: '', requested_at: asked }],
    started: [], outcomes: [], launched: new Set(), tasks: new Map(), policy: { max_concurrent_job_runs: 1, jobs: new Map(), schedules: [s] },
  });
  t.deepEqual(plan.events.map((e) => e.type), ['want_created', 'schedule_paused'], 'the 22:44 tick, due before the request, is made');
  t.deepEqual(wantsOf(plan.events).map((w) => w.schedule_tick), [at('2026-01-05T22:44:00Z')]);
  // Paused since it was asked for, before the 22:45 tick it stops: not since the step that recorded it, after that tick.
  t.like(plan.events.find((e) => e.type === 'schedule_paused'), { schedule_paused: { requested_at: asked } });
  t.is(plan.state.schedules.get('revenue')?.paused_at, asked);
  t.is(scheduleView(plan.state, s, at('2026-01-05T22:45:00.020Z')).paused_at, '2026-01-05T22:44:59.990Z');
  // The same through a snapshot (the record keeps the time as it is).
  t.is(fromSnapshot(JSON.parse(JSON.stringify(toSnapshot(plan.state)))).schedules.get('revenue')?.paused_at, asked);
  const resumed = command(plan.state, at('2026-01-05T22:45:10Z'), [s], { kind: 'resume_schedule', name: 'revenue' });
  t.like(skipsOf(resumed.events)[0], { count: 1, first_tick: at('2026-01-05T22:45:00Z'), reason: 'paused' });
});

test('a schedule_paused of a log written before requested_at (0 on the wire) is paused since the event\'s time', (t) => {
  const s = schedule({ cron: '* * * * *' });
  const state = step(initialState(), at('2026-01-05T22:43:30Z'), [s]).state;
  const id = state.last_event_id + 1;
  const old = reduce(state, { event_id: id, timestamp: at('2026-01-05T22:43:40Z'), type: 'schedule_paused', schedule_paused: { name: 'revenue', reason: '', requested_at: 0 } });
  t.like(old.schedules.get('revenue'), { paused: true, paused_at: at('2026-01-05T22:43:40Z') });
  const asked = reduce(state, { event_id: id, timestamp: at('2026-01-05T22:43:40Z'), type: 'schedule_paused', schedule_paused: { name: 'revenue', reason: '', requested_at: at('2026-01-05T22:43:39.5Z') } });
  t.like(asked.schedules.get('revenue'), { paused: true, paused_at: at('2026-01-05T22:43:39.5Z') });
});

test('pause and resume of a name platform.json has no schedule of are 404s that record nothing; a schedule not yet recorded is, first', (t) => {
  const s = schedule({});
  for (const kind of ['pause_schedule', 'resume_schedule'] as const) {
    const plan = command(initialState(), at('2026-01-05T10:00:00Z'), [s], kind === 'pause_schedule' ? { kind, name: 'nope', reason: '' } : { kind, name: 'nope' });
    t.like(plan.replies[0], { ok: false, status: 404 });
    t.regex((plan.replies[0] as { error: string }).error, /No schedule named 'nope' in platform\.json/);
    t.deepEqual(plan.events, []);
  }
  // Paused before any scan recorded it: it counts its ticks from now, and is paused.
  const plan = command(initialState(), at('2026-01-05T10:00:00Z'), [s], { kind: 'pause_schedule', name: 'revenue', reason: '' });
  t.deepEqual(plan.events.map((e) => e.type), ['schedules_changed', 'schedule_paused']);
  t.like(plan.state.schedules.get('revenue'), { since: at('2026-01-05T10:00:00Z'), paused: true });
});

test('a pause, the skips and the latest ticks\' statuses survive a snapshot; an edited cron keeps the pause', (t) => {
  const s = schedule({ cron: '* * * * *' });
  let state = step(initialState(), at('2026-01-05T22:43:30Z'), [s]).state;
  state = step(state, at('2026-01-05T22:45:30Z'), [s]).state;
  state = command(state, at('2026-01-05T22:45:40Z'), [s], { kind: 'pause_schedule', name: 'revenue', reason: 'why' }).state;
  const restored = fromSnapshot(JSON.parse(JSON.stringify(toSnapshot(state))));
  t.deepEqual(canon(restored), canon(state));
  t.like(restored.schedules.get('revenue'), { paused: true, skipped: 1, recent: [{ want_id: 'w-1', status: 'idle' }] });
  t.deepEqual(step(restored, at('2026-01-05T23:00:00Z'), [s]).events, [], 'still paused after the restore');
  const edited = step(restored, at('2026-01-05T23:00:00Z'), [schedule({ cron: '*/5 * * * *' })]);
  // The old cron's ticks due while it was paused (22:46 to 23:00) are the pause's, counted at the edit.
  t.deepEqual(edited.events.map((e) => e.type), ['schedule_ticks_skipped', 'schedules_changed']);
  t.like(edited.state.schedules.get('revenue'), { cron: '*/5 * * * *', paused: true, skipped: 1 + 15 });
});

test('a compaction base of format 7 (schedule records without the new fields) loads them running, nothing skipped', (t) => {
  const s = schedule({});
  const state = step(initialState(), at('2026-01-05T10:00:00Z'), [s]).state;
  const snap = JSON.parse(JSON.stringify(toSnapshot(state))) as { schedules: Array<Record<string, unknown>> };
  const old = { name: 'revenue', cron: '0 3 * * *', timezone: 'UTC', since: at('2026-01-05T10:00:00Z'), tick: 0, want_id: '' };
  const lines: SnapshotLine[] = [['schedule', old as never]];
  const loaded = snapshotFromLines(snap.schedules.length, lines).schedules[0]!;
  t.deepEqual(loaded, state.schedules.get('revenue'));
  t.deepEqual(Object.keys(loaded), Object.keys(state.schedules.get('revenue')!), 'in the fold\'s field order');
});

test('property: every tick that fell due is made once or counted as skipped once, never both, whatever the gaps and pauses', (t) => {
  const crons = fc.constantFrom('*/7 * * * *', '0 3 * * *', '15 */2 * * 1-5', '0 0 1 * *');
  // A step: the loop woke after a gap (up: short; down: long), maybe with a pause or a resume.
  const steps = fc.array(
    fc.record({
      gap: fc.oneof({ weight: 4, arbitrary: fc.integer({ min: 1, max: 600_000 }) }, { weight: 1, arbitrary: fc.integer({ min: 1, max: 3 * 86_400_000 }) }),
      restart: fc.boolean(),
      toggle: fc.oneof({ weight: 4, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.constantFrom('pause_schedule' as const, 'resume_schedule' as const) }),
      // The pause or resume in the step's own batch (before its scan, as commands are), or in a step of its own after.
      together: fc.boolean(),
    }),
    { minLength: 1, maxLength: 15 },
  );
  t.notThrows(() =>
    fc.assert(
      fc.property(crons, fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 86_400_000 }), steps, (cron, catchup, start, plan) => {
        const s = schedule({ cron, catchup });
        let now = at('2026-01-05T00:00:00Z') + start;
        let upSince = now;
        let state = step(initialState(), now, [s]).state;
        const since = now;
        const made: number[] = [];
        let skipped = 0;
        // A gap of more than MAX_COUNTED_TICKS is counted as a lower bound.
        let exact = true;
        // Skips said to be the pause's whose ticks fell due before it (a truthful reason: checked at the end).
        let mislabelled = 0;
        const count = (events: readonly EventPayload[]) => {
          for (const k of skipsOf(events)) {
            skipped += k.count;
            if (k.count_at_least) exact = false;
            const pausedAt = pauses[pauses.length - 1]?.[0];
            if (k.reason === 'paused' && (pausedAt === undefined || k.first_tick <= pausedAt)) mislabelled++;
          }
        };
        // [paused at, resumed at]: no tick in between may be made, then or later (a resume must not flood).
        const pauses: Array<[number, number]> = [];
        for (const { gap, restart, toggle, together } of plan) {
          const next = nextTick(s, now)!;
          // Up: the loop never sleeps past a deadline; down (or restarted): any gap.
          now = gap <= 600_000 && !restart ? Math.min(now + gap, next) : now + gap;
          if (restart) upSince = now;
          const toggleCommand: Command | undefined =
            toggle === undefined ? undefined : toggle === 'pause_schedule' ? { kind: toggle, name: 'revenue', reason: '' } : { kind: toggle, name: 'revenue' };
          const inStep = together && toggleCommand ? [toggleCommand] : [];
          const p = planStep({ state, now, upSince, commands: inStep, started: [], outcomes: [], launched: new Set(), tasks: new Map(), policy: { max_concurrent_job_runs: 1, jobs: new Map(), schedules: [s] } });
          made.push(...wantsOf(p.events).map((w) => w.schedule_tick));
          count(p.events);
          state = p.state;
          if (inStep.length > 0) {
            // Decided before the pause: the ticks due by now (the pause is asked for at now), so none after it.
            if (p.events.some((e) => e.type === 'schedule_paused')) pauses.push([now, Infinity]);
            if (p.events.some((e) => e.type === 'schedule_resumed')) pauses[pauses.length - 1]![1] = now;
          } else if (toggle) {
            const c = command(state, now, [s], toggle === 'pause_schedule' ? { kind: toggle, name: 'revenue', reason: '' } : { kind: toggle, name: 'revenue' });
            count(c.events);
            if (wantsOf(c.events).length > 0) return false;
            if (c.events.some((e) => e.type === 'schedule_paused')) pauses.push([now, Infinity]);
            if (c.events.some((e) => e.type === 'schedule_resumed')) pauses[pauses.length - 1]![1] = now;
            state = c.state;
          }
        }
        // Every tick after `since` up to the cursor is accounted for exactly once.
        const cursor = Math.max(state.schedules.get('revenue')!.tick, state.schedules.get('revenue')!.skipped_tick);
        let all = 0;
        for (let tick = nextTick(s, since)!; tick <= cursor; tick = nextTick(s, tick)!) all++;
        for (let i = 1; i < made.length; i++) if (made[i]! <= made[i - 1]!) return false;
        if (made.some((tick) => pauses.some(([from, to]) => tick > from && tick <= to))) return false;
        const record = state.schedules.get('revenue')!;
        if (mislabelled > 0) return false;
        if (record.skipped !== skipped || record.skipped_at_least === exact) return false;
        return exact ? made.length + skipped === all : made.length + skipped < all;
      }),
      { numRuns: 120 },
    ),
  );
});

test("a schedule's view gives its last tick's want status and how many of its last 10 failed, kept as the wants move", (t) => {
  // Daily, so each tick wants a partition of its own.
  const s = schedule({});
  let state = step(initialState(), at('2026-01-01T00:00:00Z'), [s]).state;
  let id = state.last_event_id;
  const fold = (payload: EventPayload) => (state = reduce(state, { event_id: ++id, timestamp: at('2026-01-20T00:00:00Z'), ...payload } as BuildEvent));
  const config = (ref: string): JobConfig => ({ outputs: [ref], inputs: [], args: [], env: {} });
  for (let i = 1; i <= 12; i++) {
    const plan = step(state, at('2026-01-01T03:00:00.001Z') + i * 86_400_000, [s]);
    state = plan.state;
    id = state.last_event_id;
    const want = wantsOf(plan.events)[0]!;
    const ref = want.partitions[0]!;
    fold({ type: 'job_run_queued', job_run_queued: { job_run_id: `r-${i}`, job_label: 'daily', config: config(ref), want_ids: [want.want_id], attempt: 1, exec: ['true'], timeout_seconds: 0, input_builds: [], job_fingerprint: '', output_inputs: [], retry_of: '' } });
    // Every third tick's job fails for good; the rest succeed, but the last, still building.
    if (i === 12) break;
    if (i % 3 === 0) fold({ type: 'job_run_failed', job_run_failed: { job_run_id: `r-${i}`, exit_code: 1, signal: '', reason: 'boom', retry_at: 0, ended_at: 0 } });
    else fold({ type: 'job_run_succeeded', job_run_succeeded: { job_run_id: `r-${i}`, builds: [{ partition_ref: ref, build_id: `b-${i}` }], ended_at: 0 } });
  }
  const record = state.schedules.get('revenue')!;
  t.is(record.recent.length, 10, 'the latest 10 ticks');
  t.deepEqual(record.recent.map((x) => x.want_id), ['w-3', 'w-4', 'w-5', 'w-6', 'w-7', 'w-8', 'w-9', 'w-10', 'w-11', 'w-12']);
  let view = scheduleView(state, s, at('2026-01-20T00:00:00Z'));
  t.like(view, { last_want_id: 'w-12', last_want_status: 'building', recent_ticks: 10, recent_failed: 3 });
  fold({ type: 'job_run_failed', job_run_failed: { job_run_id: 'r-12', exit_code: 1, signal: '', reason: 'boom', retry_at: 0, ended_at: 0 } });
  view = scheduleView(state, s, at('2026-01-20T00:00:00Z'));
  t.like(view, { last_want_status: 'failed', recent_failed: 4 });
  t.deepEqual(canon(fromSnapshot(JSON.parse(JSON.stringify(toSnapshot(state))))), canon(state), 'as a snapshot keeps it');

  // A compaction base of format 7 kept no latest ticks: they are found again among the wants it holds.
  const format7 = (keep: (line: SnapshotLine) => boolean = () => true) =>
    fromSnapshot(
      snapshotFromLines(
        state.last_event_id,
        [...snapshotLines(state)].filter(keep).map((line): SnapshotLine => {
          if (line[0] !== 'schedule') return line;
          const { name, cron, timezone, since, tick, want_id } = line[1];
          return ['schedule', { name, cron, timezone, since, tick, want_id } as never];
        }),
      ),
    );
  // As the fold keeps it, but for the skipped tick (of Jan 1), which a log of format 7's time did not record.
  t.deepEqual(format7().schedules.get('revenue'), { ...record, recent: state.schedules.get('revenue')!.recent, skipped: 0, skipped_tick: 0 }, 'the latest 10 ticks and their statuses');
  t.like(scheduleView(format7(), s, at('2026-01-20T00:00:00Z')), { last_want_status: 'failed', recent_ticks: 10, recent_failed: 4 });
  // A base whose older ticks' wants were pruned: those still held.
  const older = new Set(['w-1', 'w-2', 'w-3', 'w-4', 'w-5']);
  const pruned = format7((line) => !(line[0] === 'want' && older.has(line[1].want_id)));
  t.deepEqual(pruned.schedules.get('revenue')!.recent.map((x) => x.want_id), ['w-6', 'w-7', 'w-8', 'w-9', 'w-10', 'w-11', 'w-12']);
  t.like(scheduleView(pruned, s, at('2026-01-20T00:00:00Z')), { last_want_status: 'failed', recent_ticks: 7, recent_failed: 3 });
  // One whose latest tick's want was pruned: none, rather than ticks that are not the latest.
  const noLatest = format7((line) => !(line[0] === 'want' && line[1].want_id === 'w-12'));
  t.deepEqual(noLatest.schedules.get('revenue')!.recent, []);
  t.like(scheduleView(noLatest, s, at('2026-01-20T00:00:00Z')), { last_want_id: 'w-12', last_want_status: null, recent_ticks: 0 });
});

test('catchup 0: a schedule served only since it was added back counts the ticks before that as missed, not as due while up', (t) => {
  const s = schedule({ cron: '0 * * * *', catchup: 0 });
  const key = `${s.name}\0${s.cron}\0${s.timezone}`;
  const daemonUp = at('2026-01-05T10:00:00Z');
  const plan = (st: BuildState, now: number, served?: number) =>
    planStep({
      state: st,
      now,
      upSince: daemonUp,
      ...(served !== undefined ? { schedulesUpSince: new Map([[key, served]]) } : {}),
      commands: [],
      started: [],
      outcomes: [],
      launched: new Set(),
      tasks: new Map(),
      policy: { max_concurrent_job_runs: 1, jobs: new Map(), schedules: [s] },
    });
  let state = plan(initialState(), at('2026-01-05T13:30:00Z')).state;
  state = plan(state, at('2026-01-05T14:00:00.010Z')).state;
  // Removed from platform.json at 14:30, added back at 16:30: 15:00 and 16:00 fell due while no one served it.
  const back = plan(state, at('2026-01-05T16:30:00Z'), at('2026-01-05T16:30:00Z'));
  t.deepEqual(wantsOf(back.events), [], 'no old tick is made');
  t.like(skipsOf(back.events)[0], { count: 2, first_tick: at('2026-01-05T15:00:00Z'), latest_tick: at('2026-01-05T16:00:00Z') });
  // Without it, the daemon's start would have counted them as due while up.
  t.is(wantsOf(plan(state, at('2026-01-05T16:30:00Z')).events).length, 2);
});

test("a cron edited while ticks of the old one were due is decided under the old one first: made up to catchup after downtime, skipped as paused while paused; none dropped unrecorded", (t) => {
  const daily = schedule({ catchup: 1 });
  const hourly = schedule({ cron: '30 * * * *' });
  let state = step(initialState(), at('2026-01-05T10:00:00Z'), [daily]).state;
  // Down from then; back on 01-08 at 10:45 with the cron edited: the old cron's 01-06, 01-07 and 01-08 03:00 were due.
  const back = step(state, at('2026-01-08T10:45:00Z'), [hourly]);
  t.deepEqual(back.events.map((e) => e.type), ['schedule_ticks_skipped', 'want_created', 'schedules_changed']);
  t.deepEqual(wantsOf(back.events).map((w) => w.schedule_tick), [at('2026-01-08T03:00:00Z')], 'the latest, as catchup 1 makes');
  t.like(back.state.schedules.get('revenue'), { cron: '30 * * * *', skipped: 2, skipped_tick: at('2026-01-07T03:00:00Z'), since: at('2026-01-08T10:45:00Z') });
  t.deepEqual(wantsOf(step(back.state, at('2026-01-08T11:30:00Z'), [hourly]).events).map((w) => w.schedule_tick), [at('2026-01-08T11:30:00Z')], 'then the new cron');

  // Paused, the old cron's tick that fell due while it was: skipped as paused at the edit; the resume counts the new cron's after it.
  state = step(initialState(), at('2026-01-05T10:00:00Z'), [daily]).state;
  state = planStep({ state, now: at('2026-01-05T11:00:00Z'), commands: [{ kind: 'pause_schedule', name: 'revenue', reason: '', requested_at: at('2026-01-05T11:00:00Z') }], started: [], outcomes: [], launched: new Set(), tasks: new Map(), policy: { max_concurrent_job_runs: 1, jobs: new Map(), schedules: [daily] } }).state;
  const edited = step(state, at('2026-01-06T10:45:00Z'), [hourly]);
  const skips = edited.events.flatMap((e) => (e.type === 'schedule_ticks_skipped' ? [e.schedule_ticks_skipped] : []));
  t.like(skips[0], { name: 'revenue', count: 1, reason: 'paused', latest_tick: at('2026-01-06T03:00:00Z') });
  t.deepEqual(wantsOf(edited.events), []);
  const resumed = planStep({ state: edited.state, now: at('2026-01-06T12:00:00Z'), commands: [{ kind: 'resume_schedule', name: 'revenue' }], started: [], outcomes: [], launched: new Set(), tasks: new Map(), policy: { max_concurrent_job_runs: 1, jobs: new Map(), schedules: [hourly] } });
  const atResume = resumed.events.flatMap((e) => (e.type === 'schedule_ticks_skipped' ? [e.schedule_ticks_skipped] : []));
  t.like(atResume[0], { count: 1, reason: 'paused', first_tick: at('2026-01-06T11:30:00Z') }, "the new cron's 11:30, after the edit");
  t.is(resumed.state.schedules.get('revenue')!.skipped, 2);
});

test('catchup 0: a cron edited while its old ticks were due makes none of them (they were missed), and counts them skipped', (t) => {
  const daily = schedule({ catchup: 0 });
  const hourly = schedule({ cron: '30 * * * *', catchup: 0 });
  const state = step(initialState(), at('2026-01-05T10:00:00Z'), [daily]).state;
  // Seen a week later with another cron, on a daemon up all along (upSince: its start, before any of those ticks).
  const plan = planStep({
    state,
    now: at('2026-01-12T10:45:00Z'),
    upSince: at('2026-01-05T09:00:00Z'),
    commands: [],
    started: [],
    outcomes: [],
    launched: new Set(),
    tasks: new Map(),
    policy: { max_concurrent_job_runs: 1, jobs: new Map(), schedules: [hourly] },
  });
  t.deepEqual(wantsOf(plan.events), [], 'none of the old cron\'s seven ticks made');
  t.like(plan.state.schedules.get('revenue'), { skipped: 7, skipped_tick: at('2026-01-12T03:00:00Z') });
});
