/** `/api/job_runs`: job runs, and the query of their logs. */
import { Type, type Static } from '@sinclair/typebox';
import { JOB_RUN_STATUSES } from '../../state/build-state.js';
import type { JobRunView } from '../views.js';
import type { LogEnd } from '../job-run-log.js';
import { IsoTime, Nullable, OneOf, WholeNumber, type SameType } from './common.js';
import { ListQuery, PageOf } from './pages.js';
import { MAX_TAIL_LINES } from '../job-run-log.js';

/** Most lines `?tail=` may ask for. */
export { MAX_TAIL_LINES };

export const JobRunStatusSchema = OneOf(JOB_RUN_STATUSES, { $id: 'JobRunStatus' });

export const JobConfigSchema = Type.Object(
  {
    outputs: Type.Array(Type.String()),
    inputs: Type.Array(Type.Object({ dep_type: OneOf(['QUERY', 'MATERIALIZE'] as const), partition_ref: Type.String() }, { additionalProperties: false })),
    args: Type.Array(Type.String()),
    env: Type.Record(Type.String(), Type.String()),
  },
  { $id: 'JobConfig', additionalProperties: false },
);

const Ids = Type.Array(Type.String());
const EXIT_CODE = "The job's exit code; null while it runs, and when it gave none: killed by a signal (`signal` names it), or never started (`reason` says why).";
const SIGNAL = "The signal that killed the job, e.g. 'SIGKILL' (a cancel or timeout's kill, the OOM killer, a person's kill -9); null when it exited.";

export const JobRunViewSchema = Type.Object(
  {
    job_run_id: Type.String(),
    job_label: Type.String(),
    status: JobRunStatusSchema,
    outputs: Type.Array(Type.String(), { description: 'The first 1,000 (in a list of runs, 20); `outputs_total` counts them all.' }),
    outputs_total: Type.Integer({ minimum: 0 }),
    config: JobConfigSchema,
    inputs_total: Type.Integer({ minimum: 0, description: 'Its inputs; `config.inputs` lists the first 1,000 (in a list, 20).' }),
    env_total: Type.Integer({ minimum: 0, description: 'Its environment variables; `config.env` holds the first 1,000 (in a list, 20).' }),
    truncated: Type.Boolean({ description: "Some list of it (config's outputs, inputs, args, env, or missing) holds only its first entries." }),
    want_ids: Type.Array(Type.String(), { description: 'The wants it serves, oldest first: the first 100; `wants_total` counts them all.' }),
    wants_total: Type.Integer({ minimum: 0 }),
    attempt: Type.Integer({ minimum: 0 }),
    exec: Ids,
    timeout_seconds: Type.Number({ minimum: 0 }),
    pid: Nullable(Type.Integer()),
    worker: Nullable(Type.String()),
    exit_code: Nullable(Type.Integer({ description: EXIT_CODE })),
    signal: Nullable(Type.String({ description: SIGNAL })),
    reason: Nullable(Type.String()),
    missing: Type.Array(Type.String(), { description: 'The inputs it reported missing: the first 1,000 (in a list, 20).' }),
    retry_at: Nullable(IsoTime),
    retried_by: Nullable(
      Type.String({ description: 'Once its retry was queued: the attempt that retried it, its next (for a batch retried in halves, the half with its first output).' }),
    ),
    queued_at: IsoTime,
    started_at: Nullable(
      Type.String({
        format: 'date-time',
        description:
          'When it started; null if it never did (canceled while queued, or while it waited in a queue for a worker). While it waits in a queue for a worker (`worker` `redis:<queue>`), when it was handed to the queue; a worker taking it sets it again, to when it took it (read from the queue when that was while no daemon ran).',
      }),
    ),
    ended_at: Nullable(IsoTime),
    duration_ms: Nullable(Type.Number({ minimum: 0 })),
    priority: Type.Integer(),
  },
  { $id: 'JobRunView', additionalProperties: false },
);
true satisfies SameType<Static<typeof JobRunViewSchema>, JobRunView>;

export const JobRunPageSchema = PageOf(JobRunViewSchema, 'JobRunPage');

export const JobRunListQuerySchema = ListQuery({
  status: Type.Optional(JobRunStatusSchema),
  want_id: Type.Optional(
    Type.String({ minLength: 1, description: 'Only the runs of this want (those it queued and those it joined), in the order it got them.' }),
  ),
});

export const LogStreamSchema = OneOf(['stdout', 'stderr'] as const);

export const LogQuerySchema = Type.Object({
  follow: Type.Optional(
    OneOf(['true', 'false', '1', '0'] as const, {
      description: 'true: Server-Sent Events, `log` per line (its `id:` the byte offset after the line), then `end` with a LogEnd.',
    }),
  ),
  tail: Type.Optional(WholeNumber(1, MAX_TAIL_LINES, 'Only the last N lines; with follow, the follow starts there (Last-Event-ID wins).')),
});

/** What EventSource sends when it reconnects to a followed log: the `id:` of the last line it saw, a byte offset. */
export const LogOffsetSchema = Type.String({ pattern: '^\\d+$', maxLength: 16, 'x-expects': "a byte offset in the log (the `id:` of a line the follow sent)" });

/** The data of a followed log's `end` message. */
export const LogEndSchema = Type.Object(
  { status: Type.Union([JobRunStatusSchema, Type.Literal('unknown')]), exit_code: Nullable(Type.Integer({ description: EXIT_CODE })), signal: Nullable(Type.String({ description: SIGNAL })) },
  { $id: 'LogEnd', additionalProperties: false },
);
true satisfies SameType<Static<typeof LogEndSchema>, LogEnd>;
