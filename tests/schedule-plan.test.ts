/**
 * What the pure planner makes of schedules, on virtual time: a schedule is recorded before its first tick, each tick
 * makes one want (refs, data_timestamp, source, priority), a restart after downtime makes the latest `catchup` missed
 * ticks and never one twice, a cron edit does not make the new cron's past ticks, and only full scans fire.
 */
import test from 'ava';
import fc from 'fast-check';
import type { EventPayload, WantCreated } from '../lib/events/build-event.js';
import { parseGraph } from '../lib/graph/parse-graph.js';
import type { ScheduleDefinition } from '../lib/graph/schedule-definition.js';
import { nextTick } from '../lib/graph/schedule-time.js';
import { planStep, type StepPlan } from '../lib/orchestrator/plan-step.js';
import { initialState, type BuildState } from '../lib/state/build-state.js';
import { reduce } from '../lib/state/reduce.js';
import { fromSnapshot, toSnapshot } from '../lib/state/snapshot.js';
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
  const s = schedule({ offset: '-1d', priority: 7, ttl_seconds: 600, sla_seconds: 7200, partitions: ['daily/revenue/date=${date}'] });
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
    ttl_seconds: 600,
    sla_seconds: 7200,
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
