/** `/api/schedules`: the schedules of platform.json with their last and next tick. */
import { Type, type Static } from '@sinclair/typebox';
import type { ScheduleView } from '../schedules.js';
import { IsoTime, Nullable, type SameType } from './common.js';
import { PageOf } from './pages.js';

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
    next_tick: Nullable(IsoTime),
    next_partitions: Type.Array(Type.String()),
  },
  { $id: 'ScheduleView', additionalProperties: false },
);
true satisfies SameType<Static<typeof ScheduleViewSchema>, ScheduleView>;

export const SchedulePageSchema = PageOf(ScheduleViewSchema, 'SchedulePage');
