/** `/api/schedules`: the schedules of platform.json with their last and next tick. */
import { Type, type Static } from '@sinclair/typebox';
import type { PauseScheduleBody, ScheduleChangeReply, ScheduleView } from '../schedules.js';
import { IsoTime, Nullable, type SameType } from './common.js';
import { PageOf } from './pages.js';
import { Comment, WantStatusSchema } from './wants.js';

export const ScheduleViewSchema = Type.Object(
  {
    name: Type.String(),
    cron: Type.String(),
    timezone: Type.String(),
    partitions: Type.Array(Type.String(), { description: 'Ref templates: ${date}, ${hour}, ${minute}, ${week}, ${month}, ${year}.' }),
    offset: Type.String(),
    priority: Type.Integer(),
    ttl_seconds: Type.Integer({ minimum: 0 }),
    sla_seconds: Type.Integer({ minimum: 0 }),
    catchup: Type.Integer({ minimum: 0 }),
    since: Nullable(IsoTime),
    last_tick: Nullable(IsoTime),
    last_want_id: Nullable(Type.String()),
    last_want_status: Nullable(WantStatusSchema),
    recent_ticks: Type.Integer({ minimum: 0, description: 'How many of its latest ticks made into wants `recent_failed` looks at (at most 10).' }),
    recent_failed: Type.Integer({ minimum: 0, description: 'Of those, how many wants failed or upstream_failed.' }),
    skipped_ticks: Type.Integer({ minimum: 0, description: 'Ticks that fell due and were not made: missed beyond `catchup`, or due while paused.' }),
    skipped_ticks_at_least: Type.Boolean({ description: 'A gap had more ticks than are counted one by one (1,000): `skipped_ticks` is a lower bound.' }),
    last_skipped_tick: Nullable(IsoTime),
    paused: Type.Boolean({ description: 'Paused: it makes no wants until resumed.' }),
    paused_at: Nullable(Type.String({ format: 'date-time', description: "When the pause was asked for (the ticks due after it are the pause's); null while it runs." })),
    paused_reason: Nullable(Type.String()),
    next_tick: Nullable(IsoTime),
    next_partitions: Type.Array(Type.String()),
  },
  { $id: 'ScheduleView', additionalProperties: false },
);
true satisfies SameType<Static<typeof ScheduleViewSchema>, ScheduleView>;

export const SchedulePageSchema = PageOf(ScheduleViewSchema, 'SchedulePage');

export const PauseScheduleBodySchema = Type.Object(
  { reason: Type.Optional(Nullable(Comment)) },
  { $id: 'PauseScheduleBody', additionalProperties: false },
);
true satisfies SameType<Static<typeof PauseScheduleBodySchema>, PauseScheduleBody>;

export const ScheduleChangeReplySchema = Type.Object(
  {
    changed: Type.Boolean({ description: 'False when the schedule already was so (nothing was recorded).' }),
    skipped_ticks: Type.Integer({ minimum: 0, description: "Ticks this request recorded as skipped: a resume's, those that fell due while paused (0 for a pause)." }),
    skipped_ticks_at_least: Type.Boolean({ description: 'More than 1,000 were: `skipped_ticks` is a lower bound.' }),
    schedule: ScheduleViewSchema,
  },
  { $id: 'ScheduleChangeReply', additionalProperties: false },
);
true satisfies SameType<Static<typeof ScheduleChangeReplySchema>, ScheduleChangeReply>;

/** A resume takes nothing: no body, or an empty object. */
export const ResumeScheduleBodySchema = Type.Object({}, { additionalProperties: false });
