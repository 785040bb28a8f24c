/** `POST /api/gc`: removes (or counts) what `retention` lets go: old job logs, old events and the history they made. */
import { Type, type Static } from '@sinclair/typebox';
import type { RetentionReport } from '../../executor/job-log-retention.js';
import type { GcReport } from '../gc.js';
import { IsoTime, Nullable, type SameType } from './common.js';

export const GcBodySchema = Type.Object(
  { dry_run: Type.Optional(Type.Boolean({ description: 'Count what a pass would remove, and remove nothing.' })) },
  { $id: 'GcBody', additionalProperties: false },
);

export const RetentionReportSchema = Type.Object(
  {
    dry_run: Type.Boolean(),
    cutoff: Nullable(IsoTime),
    removed_runs: Type.Integer({ minimum: 0 }),
    removed_bytes: Type.Integer({ minimum: 0 }),
    job_run_ids: Type.Array(Type.String(), { description: 'The first 100.' }),
  },
  { $id: 'RetentionReport', additionalProperties: false },
);
true satisfies SameType<Static<typeof RetentionReportSchema>, RetentionReport>;

const Count = Type.Integer({ minimum: 0 });

export const GcReportSchema = Type.Object(
  {
    ...RetentionReportSchema.properties,
    events: Type.Object(
      {
        keep: Nullable(Type.Integer({ minimum: 1, description: 'retention.events_keep; null: the log is kept whole.' })),
        first_event_id: Type.Integer({ minimum: 1 }),
        latest_event_id: Count,
        removed_events: Count,
        pruned: Type.Object({ wants: Count, job_runs: Count, builds: Count }, { additionalProperties: false }),
      },
      { additionalProperties: false },
    ),
  },
  { $id: 'GcReport', additionalProperties: false },
);
true satisfies SameType<Static<typeof GcReportSchema>, GcReport>;
