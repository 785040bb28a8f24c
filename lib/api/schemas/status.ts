/** `GET /api/status`: who the server is and how much it holds. */
import { Type, type Static } from '@sinclair/typebox';
import type { ServerStatus } from '../server-status.js';
import { IsoTime, type SameType } from './common.js';

const Count = Type.Integer({ minimum: 0 });

export const ServerStatusSchema = Type.Object(
  {
    pid: Type.Integer({ minimum: 1 }),
    port: Type.Integer({ minimum: 0, maximum: 65535 }),
    started_at: IsoTime,
    uptime_seconds: Count,
    workspace_root: Type.String(),
    version: Type.String(),
    counts: Type.Object(
      { wants: Count, job_runs: Count, partitions: Count, running_job_runs: Count, queued_commands: Count },
      { additionalProperties: false },
    ),
  },
  { $id: 'ServerStatus', additionalProperties: false },
);
true satisfies SameType<Static<typeof ServerStatusSchema>, ServerStatus>;
