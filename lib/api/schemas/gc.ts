/** `POST /api/gc`: removes (or counts) the job logs `retention` lets go. */
import { Type, type Static } from '@sinclair/typebox';
import type { RetentionReport } from '../../executor/job-log-retention.js';
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
