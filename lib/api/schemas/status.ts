/** `GET /api/status`: who the server is and how much it holds. */
import { Type, type Static } from '@sinclair/typebox';
import type { ServerStatus } from '../server-status.js';
import { IsoTime, Nullable, type SameType } from './common.js';

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
    executor: Type.Object(
      {
        kind: Type.String({ description: "'local' (this machine, supervised), 'in-process', 'redis'." }),
        where: Type.String({ description: "'this machine', or the Redis URL (password hidden) and queue." }),
        reachable: Type.Boolean(),
        workers: Nullable(Type.Integer({ minimum: 0, description: 'Workers taking runs from the queue; null when runs do not go to workers.' })),
        problem: Nullable(Type.String({ description: 'What stops runs from running, with what to do; null when nothing does. Checked every 5 s.' })),
      },
      { additionalProperties: false },
    ),
  },
  { $id: 'ServerStatus', additionalProperties: false },
);
true satisfies SameType<Static<typeof ServerStatusSchema>, ServerStatus>;
