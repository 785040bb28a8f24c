/** `GET /api/status`: who the server is and how much it holds. */
import { Type, type Static } from '@sinclair/typebox';
import type { ServerStatus } from '../server-status.js';
import { IsoTime, Nullable, OneOf, type SameType } from './common.js';

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
        launcher: Nullable(
          OneOf(['native', 'shell', 'direct'] as const, {
            description:
              "How runs on this machine are started: 'native' (the compiled launcher), 'shell' (a /bin/sh a run: no C compiler built the native one, or PLATFORM_LAUNCHER=shell), 'direct' (children of the daemon); null when runs go to workers or run in-process.",
          }),
        ),
      },
      { additionalProperties: false },
    ),
    executor_config: Type.Optional(
      Nullable(
        Type.Object(
          {
            in_use: Type.String({ description: "Where this daemon hands runs: 'local', 'in-process', or the Redis URL (password hidden) and queue." }),
            configured: Type.String({ description: 'What is configured now, in the same words: what a daemon started now would use.' }),
            configured_by: OneOf(['option', 'environment', 'platform.json', 'default'] as const, {
              description: "Where that comes from: the daemon's --executor, its $PLATFORM_EXECUTOR, platform.json's \"executor\" (read again as the file is edited), or the default (local).",
            }),
            differs: Type.Boolean({ description: 'in_use is not what is configured: restart the daemon to use that (an executor is not changed live).' }),
            held_runs: Nullable(
              Type.Integer({
                minimum: 0,
                description:
                  'The daemon kept in_use at its start because job runs were in flight on it, placed by an earlier daemon: how many of them have not ended yet. null when it did not keep it for that.',
              }),
            ),
            note: Nullable(Type.String({ description: 'What is going on and what to do, in words; null when in_use is what is configured.' })),
          },
          {
            additionalProperties: false,
            description:
              "The executor in use against the one configured now. null for a server given its executor (an embedder's Platform). A daemon takes its executor once, at its start, and keeps the one its runs in flight were placed on until they end (docs/scale-out.md).",
          },
        ),
      ),
    ),
    start: Type.Object(
      {
        source: OneOf(['snapshot', 'compaction_base', 'log'] as const, {
          description:
            "Where the state was read from when this server started: 'snapshot' (the usual), 'compaction_base' (a compacted log whose snapshot could not be used) or 'log' (a replay from the first event: a fresh workspace, or a snapshot that could not be used).",
        }),
        at_event: Type.Integer({ minimum: 0, description: 'The last event the state read held (0 when read from the log alone).' }),
        events_replayed: Type.Integer({ minimum: 0, description: 'Events of the log folded onto it at start, after at_event.' }),
        duration_ms: Type.Integer({ minimum: 0, description: 'How long reading the state took: the snapshot or base, and the replay.' }),
        snapshot_unused: Nullable(
          Type.String({
            description:
              "Why the snapshot was not used (null when it was): 'missing' (there is none: none was written yet, a clean stop writing one past 1,000 new events, or it was removed), 'written by another version of platform' (after an upgrade, when its records could not be read either: see snapshot_other_version), 'cut short', 'damaged', 'not of this log (...)', 'unreadable: ...'.",
          }),
        ),
        snapshot_delta: Nullable(
          Type.Object(
            {
              image_at_event: Type.Integer({ minimum: 0, description: 'The event the snapshot (the image) itself holds the state at.' }),
              at_event: Nullable(Type.Integer({ minimum: 0, description: 'The event the delta holds the state at (at_event above), or null when it was not used.' })),
              unused: Nullable(
                Type.String({
                  description:
                    "Why the delta was not used (null when it was): 'of another snapshot' (left from before the last image), 'written by another version of platform', 'cut short', 'damaged', 'not of this log (...)', 'unreadable: ...'.",
                }),
              ),
            },
            {
              additionalProperties: false,
              description:
                'The delta beside the snapshot (snapshot-delta.bin: what changed since it, written every quarter of its interval, so a restart after a crash replays fewer events), when there was one and the snapshot was used; null otherwise.',
            },
          ),
        ),
        snapshot_other_version: Type.Boolean({
          description:
            "The snapshot was written by another version of platform (after an upgrade): its records were read and every index built again, instead of a replay of the whole log; its delta, if any, is not read. An image of this version is written at once.",
        }),
      },
      { additionalProperties: false, description: 'Where the state came from at start (also in server.log and /metrics).' },
    ),
    graph_problem: Nullable(
      Type.String({
        description:
          "Why platform.json as it is on disk was refused (it does not parse, a field is wrong, it was removed), naming the file and the place; null when it is the graph in use. Looked at for this request. While it is refused the daemon goes on with the last valid graph (server.log says so once an edit): what the refused edit added (a job, a schedule) does not exist for it.",
      }),
    ),
  },
  { $id: 'ServerStatus', additionalProperties: false },
);
true satisfies SameType<Static<typeof ServerStatusSchema>, ServerStatus>;
