/** The pure time arithmetic of schedules: due ticks with catch-up, the next tick, templates, and config errors. */
import test from 'ava';
import fc from 'fast-check';
import { parseGraph } from '../lib/graph/parse-graph.js';
import { checkCron, nextTick, parseOffset, templateValues, tickRefs } from '../lib/graph/schedule-time.js';
import { dueTicks } from '../lib/graph/schedule-catchup.js';

const at = (iso: string) => Date.parse(iso);
const daily = { cron: '0 3 * * *', timezone: 'UTC', catchup: 3 };

test('no tick is due until the first one after the schedule started counting', (t) => {
  t.deepEqual(dueTicks(daily, at('2026-01-05T03:30:00Z'), at('2026-01-06T02:00:00Z')), []);
  t.deepEqual(dueTicks(daily, at('2026-01-05T03:30:00Z'), at('2026-01-06T03:00:00Z')), [at('2026-01-06T03:00:00Z')]);
});

test('after downtime only the latest `catchup` missed ticks are made, oldest first; a recorded tick never again', (t) => {
  const last = at('2026-01-01T03:00:00Z');
  const now = at('2026-01-10T12:00:00Z');
  t.deepEqual(dueTicks(daily, last, now), [at('2026-01-08T03:00:00Z'), at('2026-01-09T03:00:00Z'), at('2026-01-10T03:00:00Z')]);
  t.deepEqual(dueTicks({ ...daily, catchup: 1 }, last, now), [at('2026-01-10T03:00:00Z')]);
  t.deepEqual(dueTicks(daily, at('2026-01-10T03:00:00Z'), now), [], 'the latest is on record');
});

test('property: due ticks are after the last, at most now, ascending, at most catchup, and none once recorded', (t) => {
  const cron = fc.constantFrom('*/2 * * * * *', '*/7 * * * *', '0 3 * * *', '15 */2 * * 1-5', '0 0 1 * *');
  t.notThrows(() =>
    fc.assert(
      fc.property(cron, fc.integer({ min: 1, max: 5 }), fc.integer({ min: 0, max: 40 * 86_400_000 }), fc.integer({ min: 0, max: 40 * 86_400_000 }), (c, catchup, lastOff, gap) => {
        const last = at('2026-01-01T00:00:00Z') + lastOff;
        const now = last + gap;
        const s = { cron: c, timezone: 'UTC', catchup };
        const ticks = dueTicks(s, last, now);
        if (ticks.length > catchup) return false;
        for (let i = 0; i < ticks.length; i++) if (ticks[i]! <= last || ticks[i]! > now || (i > 0 && ticks[i]! <= ticks[i - 1]!)) return false;
        // The ticks are consecutive: the next tick after each is the one that follows it.
        for (let i = 1; i < ticks.length; i++) if (nextTick(s, ticks[i - 1]!) !== ticks[i]) return false;
        // Some tick was due iff the next tick after `last` is at most now.
        if ((ticks.length > 0) !== ((nextTick(s, last) ?? Infinity) <= now)) return false;
        return ticks.length === 0 || dueTicks(s, ticks[ticks.length - 1]!, now).length === 0;
      }),
      { numRuns: 300 },
    ),
  );
});

test('templates: date, hour, minute, ISO week, month, year of the tick plus its offset, in its time zone', (t) => {
  t.deepEqual(templateValues(at('2026-01-05T07:30:00Z'), 'UTC'), { date: '2026-01-05', hour: '07', minute: '30', week: '2026-W02', month: '01', year: '2026' });
  t.is(templateValues(at('2027-01-01T12:00:00Z'), 'UTC').week, '2026-W53', 'the first days of 2027 are in the last ISO week of 2026');
  t.is(templateValues(at('2026-01-05T23:30:00Z'), 'Europe/Paris').date, '2026-01-06');
  const s = { partitions: ['daily/revenue/date=${date}', 'weekly/revenue/week=${week}'], offset_ms: parseOffset('-1d'), timezone: 'UTC' };
  t.deepEqual(tickRefs(s, at('2026-01-05T03:00:00Z')), ['daily/revenue/date=2026-01-04', 'weekly/revenue/week=2026-W01']);
  t.is(parseOffset('+2h'), 7_200_000);
  t.throws(() => parseOffset('yesterday'), { message: /not an offset like/ });
});

const D_JOB = { label: 'd', outputs: ['d/(?<date>\\d{4}-\\d{2}-\\d{2})'], exec: ['true'] };

test('bad schedules are refused at load, naming the schedule and the field', (t) => {
  const graph = (schedule: Record<string, unknown>) => () => parseGraph({ jobs: [], schedules: [{ name: 'daily', cron: '0 3 * * *', partitions: ['d/${date}'], ...schedule }] }, 'platform.json');
  t.throws(graph({ cron: '61 * * * *' }), { message: /schedules\[0\] \(schedule "daily"\)\.cron: "61 \* \* \* \*" is not a cron expression/ });
  t.throws(graph({ cron: '* * *' }), { message: /has 3 fields; a cron has 5/ });
  // A step wider than its field was read as the field's first value alone (minute 0): refused, naming the field.
  t.throws(graph({ cron: '*/61 * * * *' }), { message: /its minute field '\*\/61' steps by 61; a step there is 1 to 59/ });
  t.throws(graph({ cron: '0 */25 * * *' }), { message: /its hour field '\*\/25' steps by 25; a step there is 1 to 23/ });
  t.throws(graph({ cron: '*/90 0 3 * * *' }), { message: /its second field '\*\/90' steps by 90/ });
  t.notThrows(() => checkCron('*/59 */23 1-31/2 */12 */7', 'UTC'));
  t.throws(graph({ partitions: ['d/${day}'] }), { message: /\$\{day\} is not a schedule variable; use \$\{date\}/ });
  t.throws(graph({ offset: 'soon' }), { message: /offset: "soon" is not an offset/ });
  t.throws(graph({ catchup: -1 }), { message: /catchup: must be a whole number from 0 to 1000/ });
  t.throws(graph({ catchup: 1.5 }), { message: /catchup: must be a whole number from 0/ });
  t.throws(graph({ timezone: 'Mars/Olympus' }), { message: /IANA time zone/ });
  t.throws(graph({ every: 'day' }), { message: /every: unknown key/ });
  t.throws(() => parseGraph({ jobs: [], schedules: [{ name: 'a', cron: '0 3 * * *', partitions: ['x'] }, { name: 'a', cron: '0 4 * * *', partitions: ['y'] }] }, 'p'), {
    message: /duplicate name "a"/,
  });
  const ok = parseGraph({ jobs: [D_JOB], schedules: [{ name: 'daily', cron: '0 3 * * *', partitions: ['d/${date}'], offset: '-1d' }] }, 'p');
  t.like(ok.schedules[0], { name: 'daily', timezone: 'UTC', catchup: 1, offset_ms: -86_400_000, priority: 0 });
});

test('a schedule whose refs no job produces, or two jobs do, is refused at load with a sample ref', (t) => {
  const graph = (partitions: string[], jobs: unknown[] = [D_JOB]) => () =>
    parseGraph({ jobs, schedules: [{ name: 'daily', cron: '0 3 * * *', partitions, offset: '-1d' }] }, 'platform.json');
  t.throws(graph(['d/${date}', 'dd/${date}']), {
    message: /^platform\.json: schedules\[0\] \(schedule "daily"\)\.partitions\[1\]: "dd\/\$\{date\}" wants refs such as "dd\/2025-12-31" \(its tick 2026-01-01T03:00:00\.000Z\), which no job produces: No job produces ref "dd\/2025-12-31"/,
  });
  t.throws(graph(['d/${date}'], [D_JOB, { label: 'also_d', outputs: ['d/.*'], exec: ['true'] }]), {
    message: /partitions\[0\]: .* which more than one job produces: Ref "d\/2025-12-31" is produced by two jobs/,
  });
  t.notThrows(graph(['d/${date}']));
});
