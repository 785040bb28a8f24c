/**
 * Cron schedules in a step: their ticks that fell due made into wants (the latest `catchup` of them after downtime,
 * the older ones recorded as skipped), their next tick a deadline, and the pause and resume commands.
 */
import type { ScheduleRecord } from '../state/build-state.js';
import { SCHEDULE_SOURCE_PREFIX, scheduleAfter } from '../state/build-state.js';
import type { ScheduleDefinition } from '../graph/schedule-definition.js';
import { firstTickAfter, tickRefs } from '../graph/schedule-time.js';
import { CRON_STEPS_PER_SCAN, catchUp, ticksBetween, type CronBudget } from '../graph/schedule-catchup.js';
import type { CommandDecision } from './command.js';
import { textProblem, typeName } from './request-checks.js';
import type { StepDraft } from './step-draft.js';
import { createRootWant } from './want-creation.js';

/**
 * A want for each schedule tick that fell due and is not on record yet: after downtime (or a scan that came late)
 * the latest `catchup` of them, the older ones recorded as skipped (schedule-catchup.ts); the next tick is a
 * deadline, so the loop wakes for it. A paused schedule makes nothing and sets no deadline: its resume does.
 * Done in full scans (ticks, deadlines).
 */
export function fireSchedules(d: StepDraft): void {
  const { now } = d.input;
  const schedules = d.input.policy.schedules ?? [];
  recordScheduleStarts(d, schedules);
  const budget: CronBudget = { left: CRON_STEPS_PER_SCAN };
  for (const s of schedules) {
    const known = d.state.schedules.get(s.name);
    if (known?.paused) continue;
    if (budget.left <= 0) {
      // Spent on the gaps of the schedules before it: the next scan, a turn of the loop later, goes on.
      d.deadlines.push(now + 1);
      break;
    }
    const after = known ? scheduleAfter(known) : now;
    const next = firstTickAfter(s, after);
    if (next === undefined) continue;
    if (next > now) {
      d.deadlines.push(next);
      continue;
    }
    makeDueTicks(d, s, after, now, budget);
    const following = firstTickAfter(s, now);
    if (following !== undefined) d.deadlines.push(following);
  }
}

/**
 * Schedules the log has not seen with their cron and zone, recorded counting from now: a new schedule (or an edited
 * cron) does not make ticks from before it existed, and a daemon killed before a schedule's first tick still makes
 * that tick when it comes back, since the start is on record and not the daemon's own start time.
 */
function recordScheduleStarts(d: StepDraft, schedules: readonly ScheduleDefinition[]): void {
  const changed = schedules.flatMap((s) => {
    const known = d.state.schedules.get(s.name);
    if (known && known.cron === s.cron && known.timezone === s.timezone) return [];
    if (known && known.cron !== '') settleEditedCron(d, s, known);
    // A record with no cron but a tick: only wants of it on record (a log from before schedules were recorded), so
    // it counts from its last tick. One made by a pause or a skip alone (no tick) counts from now, as a new one.
    const since = known && known.cron === '' && known.tick > 0 ? known.tick : d.input.now;
    return [{ name: s.name, cron: s.cron, timezone: s.timezone, since }];
  });
  if (changed.length > 0) d.emit({ type: 'schedules_changed', schedules_changed: { schedules: changed } });
}

/**
 * The ticks the cron on record had due when an edit of it is seen (the daemon was down, or the schedule paused): they
 * are decided under the cron they fell due under, before the edit counts from now. Paused, they are the pause's
 * (skipped, as its resume would have counted them); else made up to `catchup` and the rest skipped, as a start after
 * downtime would have. Counting from the edit alone dropped them, recorded nowhere.
 */
function settleEditedCron(d: StepDraft, s: ScheduleDefinition, known: ScheduleRecord): void {
  const old: ScheduleDefinition = { ...s, cron: known.cron, timezone: known.timezone };
  const after = scheduleAfter(known);
  // A cron on record that this program cannot read (a log written by another version) has no ticks to settle: a step
  // must not fail on it, every turn.
  if (firstTickOrNone(old, after) === undefined) return;
  if (known.paused) {
    const skipped = ticksBetween(old, after, d.input.now);
    if (skipped) d.emit({ type: 'schedule_ticks_skipped', schedule_ticks_skipped: { name: s.name, ...skipped, reason: 'paused' } });
    return;
  }
  // Unbudgeted, as a pause's: one schedule's gap, at most catchup + MAX_COUNTED_TICKS cron steps. Not served since
  // any time the step knows of (the old cron left platform.json): its due ticks are missed ones, so `catchup: 0`
  // makes none of them, where "served since the daemon started" made every tick of a schedule's absence.
  makeDueTicks(d, old, after, d.input.now, { left: Infinity }, d.input.now);
}

function firstTickOrNone(s: ScheduleDefinition, after: number): number | undefined {
  try {
    return firstTickAfter(s, after);
  } catch {
    return undefined;
  }
}

/**
 * The ticks of `s` after `after` that fell due by `upTo`: the latest `catchup` made into wants, the older ones
 * recorded as skipped (reason `catchup`: missed while no daemon ran, or beyond what catchup makes up for).
 */
function makeDueTicks(d: StepDraft, s: ScheduleDefinition, after: number, upTo: number, budget: CronBudget, servedSince?: number): void {
  const served = servedSince ?? d.input.schedulesUpSince?.get(`${s.name}\0${s.cron}\0${s.timezone}`);
  const upSince = Math.max(d.input.upSince ?? d.input.now, served ?? Number.NEGATIVE_INFINITY);
  const { make, skipped } = catchUp(s, after, upTo, upSince, budget);
  if (skipped) d.emit({ type: 'schedule_ticks_skipped', schedule_ticks_skipped: { name: s.name, ...skipped, reason: 'catchup' } });
  for (const tick of make) {
    createRootWant(d, {
      partitions: tickRefs(s, tick),
      comment: `schedule ${s.name}, tick ${new Date(tick).toISOString()}`,
      data_timestamp: tick + s.offset_ms,
      ttl_seconds: s.ttl_seconds,
      sla_seconds: s.sla_seconds,
      source: `${SCHEDULE_SOURCE_PREFIX}${s.name}`,
      priority: s.priority,
      schedule_tick: tick,
    });
  }
}

/** The schedule of platform.json by that name, recorded in the log if it was not yet; undefined if there is none. */
function knownSchedule(d: StepDraft, name: string): { definition: ScheduleDefinition; record: ScheduleRecord } | undefined {
  const definition = d.input.policy.schedules?.find((s) => s.name === name);
  if (!definition) return undefined;
  recordScheduleStarts(d, [definition]);
  return { definition, record: d.state.schedules.get(name)! };
}

/**
 * Pauses a schedule: it makes no wants until resumed. The ticks due before it was requested are made (or skipped as
 * missed) first. Pausing a paused one changes nothing (and records nothing).
 */
export function pauseSchedule(d: StepDraft, name: string, reason: string, requestedAt: number | undefined): CommandDecision {
  // The embedding API's reason is not checked by the JSON API's schema.
  const problem = textProblem(reason, 'reason');
  if (problem) return { ok: false, status: 400, error: problem, want_id: '' };
  const known = knownSchedule(d, name);
  if (!known) return unknownSchedule(name);
  if (known.record.paused) return { ok: true, status: 200, want_id: '', schedule: { name, changed: false, skipped: 0, skipped_at_least: false } };
  // The ticks that fell due before the pause was asked for were due while it ran: they are decided first, as the
  // step's scan would have (made up to `catchup`, the rest skipped as missed), so none of them is later counted
  // as skipped for the pause. Commands come before the scan in a step, and the first step after downtime (or one
  // that woke late) is where such ticks wait. Only the ticks that fall due after the request are the pause's.
  // Unbudgeted: one schedule's gap, at most catchup + MAX_COUNTED_TICKS cron steps, as a scan's first schedule.
  const asked = Math.min(requestedAt ?? d.input.now, d.input.now);
  makeDueTicks(d, known.definition, scheduleAfter(known.record), asked, { left: Infinity });
  // Paused from when it was asked for, as the ticks were just decided: `paused_at` is that time, not the step's.
  d.emit({ type: 'schedule_paused', schedule_paused: { name, reason, requested_at: asked } });
  return { ok: true, status: 200, want_id: '', schedule: { name, changed: true, skipped: 0, skipped_at_least: false } };
}

/**
 * Resumes a paused schedule: the ticks that fell due while it was paused are recorded as skipped, never made (a
 * resume after a week must not flood the queue), and its next tick is a deadline again. Resuming a running one
 * changes nothing.
 */
export function resumeSchedule(d: StepDraft, name: string): CommandDecision {
  const known = knownSchedule(d, name);
  if (!known) return unknownSchedule(name);
  if (!known.record.paused) return { ok: true, status: 200, want_id: '', schedule: { name, changed: false, skipped: 0, skipped_at_least: false } };
  const { now } = d.input;
  d.emit({ type: 'schedule_resumed', schedule_resumed: { name } });
  const skipped = ticksBetween(known.definition, scheduleAfter(known.record), now);
  if (skipped) d.emit({ type: 'schedule_ticks_skipped', schedule_ticks_skipped: { name, ...skipped, reason: 'paused' } });
  const following = firstTickAfter(known.definition, now);
  if (following !== undefined) d.deadlines.push(following);
  return { ok: true, status: 200, want_id: '', schedule: { name, changed: true, skipped: skipped?.count ?? 0, skipped_at_least: skipped?.count_at_least ?? false } };
}

/** A pause or resume of a schedule platform.json does not have (or of a name that is no string: JavaScript). */
function unknownSchedule(name: unknown): CommandDecision {
  if (typeof name !== 'string') return { ok: false, status: 400, error: `A schedule's name must be a string like 'nightly', got ${typeName(name)}.` };
  return { ok: false, status: 404, error: `No schedule named '${name}' in platform.json. List them: platform schedules (GET /api/schedules).` };
}
