/**
 * Every operation the daemon serves, with the schemas of what it takes and answers (lib/api/schemas): the table
 * the OpenAPI document is printed from (openapi.ts). The routes validate with the same schemas, and the contract
 * test compares this table with the routes express really has, so neither can change without the other.
 */
import { Type, type TObject, type TSchema } from '@sinclair/typebox';
import { BackfillPageSchema, BackfillViewSchema, CreateBackfillBodySchema, CreateBackfillReplySchema } from '../api/schemas/backfills.js';
import { ErrorBodySchema } from '../api/schemas/errors.js';
import { EventIdSchema, EventListQuerySchema, EventPageSchema, EventStreamQuerySchema, EventViewSchema, LastEventIdSchema } from '../api/schemas/events.js';
import { GcBodySchema, GcReportSchema } from '../api/schemas/gc.js';
import { JobRunListQuerySchema, JobRunPageSchema, JobRunViewSchema, LogOffsetSchema, LogQuerySchema, LogStreamSchema } from '../api/schemas/job-runs.js';
import { LoginQuerySchema, UiLinkBodySchema, UiLinkReplySchema } from '../api/schemas/login.js';
import { PageQuerySchema } from '../api/schemas/pages.js';
import {
  LineageQuerySchema,
  LineageReplySchema,
  PartitionDetailQuerySchema,
  PartitionDetailSchema,
  PartitionListQuerySchema,
  PartitionLookupBodySchema,
  PartitionLookupReplySchema,
  PartitionPageSchema,
} from '../api/schemas/partitions.js';
import { PARTITION_LOOKUP_EXAMPLE, PARTITION_LOOKUP_MAX } from '../api/partition-lookup.js';
import { GraphAnalyzeResponseSchema, JobConfigResponseSchema, OutputRefsRequestSchema } from '../api/schemas/platform-service.js';
import { PauseScheduleBodySchema, ResumeScheduleBodySchema, ScheduleChangeReplySchema, SchedulePageSchema, ScheduleViewSchema } from '../api/schemas/schedules.js';
import { ServerStatusSchema } from '../api/schemas/status.js';
import { CreateTaintBodySchema, TaintDetailQuerySchema, TaintPageSchema, TaintReplySchema, TaintViewSchema } from '../api/schemas/taints.js';
import { CreateWantBodySchema, CreateWantReplySchema, WantListQuerySchema, WantTreeQuerySchema, WantTreeReplySchema, WantViewSchema } from '../api/schemas/wants.js';
import { WantPageSchema } from '../api/schemas/wants.js';
import { PLATFORM_SERVICE } from '../proto/schema.js';
import { RPC_GRAPH_BUDGET } from '../api/platform-service.js';
import { groupDigits } from '../group-digits.js';
import { maxHeaderSize } from 'node:http';
import { MAX_REF_LENGTH } from '../api/schemas/common.js';


export type Method = 'get' | 'post' | 'delete';

/** One answer: a JSON body of a schema, or text of a media type (a log, metrics, an event stream, a page). */
export type Answer =
  | { description: string; json: TSchema }
  | { description: string; text: ReadonlyArray<'text/plain' | 'text/event-stream' | 'text/html' | 'application/proto'>; json?: TSchema }
  | { description: string; empty: true };

export interface Operation {
  method: Method;
  /** As express spells it: `/api/wants/:id`. */
  path: string;
  summary: string;
  /** Path parameters by name; a `:name` of the path without one here is a plain string. */
  pathParams?: Record<string, TSchema>;
  query?: TObject;
  headers?: Record<string, { schema: TSchema; description: string }>;
  /**
   * The body it takes, and a JSON one that would do: the OpenAPI document shows it, and a body sent as anything but
   * JSON is refused with it (json-body.ts). An operation without one takes no body.
   */
  body?: { schema: TSchema; media?: ReadonlyArray<'application/json' | 'application/proto'>; required: boolean; example: string };
  responses: Record<number, Answer>;
  /** Reached without the token (the token guard lets these through). */
  open?: boolean;
  /** The errors are the Connect protocol's, not `ErrorBody`. */
  connect?: boolean;
}

const json = (description: string, schema: TSchema): Answer => ({ description, json: schema });
const text = (description: string): Answer => ({ description, text: ['text/plain'] });
const sse = (description: string): Answer => ({ description, text: ['text/event-stream'] });

const COMPACTED = 'retention.events_keep compacted those events away; `first_event_id` is the first still in the log.';

const PartitionRefParam = Type.String({ description: "The ref URL-encoded as one segment ('/' as %2F)." });

const rpc = (name: string, summary: string, reply: TSchema): Operation => ({
  method: 'post',
  path: `/${PLATFORM_SERVICE}/${name}`,
  summary,
  connect: true,
  body: { schema: OutputRefsRequestSchema, media: ['application/json', 'application/proto'], required: true, example: '{"outputRefs": ["daily/revenue/date=2026-01-05"]}' },
  responses: { 200: { description: 'The reply (canonical proto3 JSON, or protobuf binary for application/proto).', text: ['application/proto'], json: reply } },
});

export const OPERATIONS: readonly Operation[] = [
  { method: 'get', path: '/health', summary: 'Liveness: answers OK, without the token.', open: true, responses: { 200: text('`OK`.') } },
  { method: 'get', path: '/', summary: 'The dashboard (and any other non-API path a browser asks for).', responses: { 200: { description: 'Its page.', text: ['text/html'] }, 503: text('The dashboard is not built.') } },
  { method: 'get', path: '/login', summary: "Redeems `platform ui`'s one-time link: sets the token cookie and redirects to the dashboard.", open: true, query: LoginQuerySchema, responses: { 303: { description: 'To the dashboard, with the cookie set.', empty: true } } },
  { method: 'get', path: '/metrics', summary: 'Prometheus text exposition.', responses: { 200: text('Metrics (prom-client).') } },
  { method: 'get', path: '/api/openapi.json', summary: 'This document.', responses: { 200: json('The OpenAPI 3.1 document of the API.', Type.Object({ openapi: Type.String() })) } },
  {
    method: 'post',
    path: '/api/ui_link',
    summary: "The dashboard's URL for `platform ui`.",
    body: { schema: UiLinkBodySchema, required: false, example: '{}' },
    responses: { 200: json('A one-time link (with a token) or the dashboard.', UiLinkReplySchema) },
  },

  { method: 'get', path: '/api/wants', summary: 'Wants, oldest first.', query: WantListQuerySchema, responses: { 200: json('A page of wants.', WantPageSchema) } },
  {
    method: 'post',
    path: '/api/wants',
    summary: 'Wants partitions: builds what they need.',
    body: { schema: CreateWantBodySchema, required: true, example: '{"partitions": ["daily/revenue/date=2026-01-05"]}' },
    responses: { 201: json('The want.', CreateWantReplySchema) },
  },
  { method: 'get', path: '/api/wants/:id', summary: 'A want.', responses: { 200: json('The want.', WantViewSchema) } },
  { method: 'get', path: '/api/wants/:id/tree', summary: 'A want and the wants derived from it, breadth first.', query: WantTreeQuerySchema, responses: { 200: json('At most `limit` wants of the tree.', WantTreeReplySchema) } },
  { method: 'delete', path: '/api/wants/:id', summary: 'Cancels a want.', responses: { 200: json('The want, canceled.', WantViewSchema) } },

  { method: 'get', path: '/api/partitions', summary: 'Partitions by ref.', query: PartitionListQuerySchema, responses: { 200: json('A page of partitions.', PartitionPageSchema) } },
  {
    method: 'post',
    path: '/api/partitions/lookup',
    summary: `Many partitions by ref, in one read (at most ${PARTITION_LOOKUP_MAX} refs; it changes nothing).`,
    body: { schema: PartitionLookupBodySchema, required: true, example: PARTITION_LOOKUP_EXAMPLE },
    responses: { 200: json('The partitions seen, in the order asked, and the refs never seen (`unknown`).', PartitionLookupReplySchema) },
  },
  { method: 'get', path: '/api/partitions/:ref', summary: 'A partition, its builds and what consumed it.', pathParams: { ref: PartitionRefParam }, query: PartitionDetailQuerySchema, responses: { 200: json('The partition.', PartitionDetailSchema) } },
  { method: 'get', path: '/api/partitions/:ref/lineage', summary: 'Its lineage tree, upstream or downstream.', pathParams: { ref: PartitionRefParam }, query: LineageQuerySchema, responses: { 200: json('At most 500 nodes.', LineageReplySchema) } },

  { method: 'get', path: '/api/taints', summary: 'Taints (the first 20 refs of each).', query: PageQuerySchema, responses: { 200: json('A page of taints.', TaintPageSchema) } },
  { method: 'post', path: '/api/taints', summary: 'Marks built partitions for rebuild.', body: { schema: CreateTaintBodySchema, required: true, example: '{"partitions": ["raw/orders/date=2026-01-05"], "reason": "late rows", "downstream": true}' }, responses: { 201: json('The taint, the first 1,000 refs it tainted and how many in all (GET /api/taints/:id pages them).', TaintReplySchema) } },
  { method: 'get', path: '/api/taints/:id', summary: 'A taint, with a page of its partitions.', query: TaintDetailQuerySchema, responses: { 200: json('The taint.', TaintViewSchema) } },

  { method: 'get', path: '/api/backfills', summary: 'Backfills.', query: PageQuerySchema, responses: { 200: json('A page of backfills.', BackfillPageSchema) } },
  { method: 'post', path: '/api/backfills', summary: 'Builds a range of partitions as one want.', body: { schema: CreateBackfillBodySchema, required: true, example: '{"pattern": "daily/revenue/date={2026-01-01..2026-03-31}", "policy": "missing", "max_concurrent_job_runs": 2}' }, responses: { 201: json('The backfill.', CreateBackfillReplySchema) } },
  { method: 'get', path: '/api/backfills/:id', summary: 'A backfill and its progress.', responses: { 200: json('The backfill.', BackfillViewSchema) } },
  { method: 'delete', path: '/api/backfills/:id', summary: 'Cancels a backfill (a second cancel is a no-op).', responses: { 200: json('The backfill, canceled.', BackfillViewSchema) } },

  { method: 'get', path: '/api/schedules', summary: 'The schedules of platform.json.', query: PageQuerySchema, responses: { 200: json('A page of schedules.', SchedulePageSchema) } },
  { method: 'get', path: '/api/schedules/:name', summary: 'A schedule, its last and next tick.', responses: { 200: json('The schedule.', ScheduleViewSchema) } },
  {
    method: 'post',
    path: '/api/schedules/:name/pause',
    summary: 'Pauses a schedule: it makes no wants until resumed (recorded in the log, so it holds across restarts). Pausing a paused one is a no-op (`changed: false`).',
    body: { schema: PauseScheduleBodySchema, required: false, example: '{"reason": "the upstream feed is down"}' },
    responses: { 200: json('The schedule, paused.', ScheduleChangeReplySchema) },
  },
  {
    method: 'post',
    path: '/api/schedules/:name/resume',
    summary: 'Resumes a paused schedule: the ticks that fell due while it was paused are recorded as skipped, not made. Resuming a running one is a no-op (`changed: false`).',
    body: { schema: ResumeScheduleBodySchema, required: false, example: '{}' },
    responses: { 200: json('The schedule, running.', ScheduleChangeReplySchema) },
  },

  { method: 'get', path: '/api/job_runs', summary: 'Job runs, oldest first; with `want_id`, the runs of that want.', query: JobRunListQuerySchema, responses: { 200: json('A page of job runs.', JobRunPageSchema) } },
  { method: 'get', path: '/api/job_runs/:id', summary: 'A job run.', responses: { 200: json('The job run.', JobRunViewSchema) } },
  {
    method: 'get',
    path: '/api/job_runs/:id/logs/:stream',
    summary:
      "A job run's stdout or stderr: the log so far, its tail, or followed as SSE (`log` per line, its `id:` the byte offset after it, a line over 256 KiB cut and marked, then `end` with a LogEnd); a follow starts `tail` lines from the end, or resumes after Last-Event-ID.",
    pathParams: { stream: LogStreamSchema },
    query: LogQuerySchema,
    headers: {
      'Last-Event-ID': {
        schema: LogOffsetSchema,
        description: 'With follow: resume after the line whose `id:` this is (what EventSource sends on reconnect); wins over `tail`. Past the end of the log, or not the end of a line: 400.',
      },
    },
    responses: {
      200: { description: 'The log (text), or with follow=true its Server-Sent Events.', text: ['text/plain', 'text/event-stream'] },
      410: json('retention.job_logs_days removed it, or the finished run\'s log directory is gone (the run itself stays). Only under an executor that makes each run\'s log directory as it starts (the built-in ones): under an embedder\'s that does not say so (Executor.keepsRunLogs), a missing directory reads as empty logs.', ErrorBodySchema),
    },
  },

  {
    method: 'post',
    path: '/api/gc',
    summary: 'Removes (or with dry_run counts) what `retention` lets go: old job logs, events before the newest events_keep, the history that ended before them.',
    body: { schema: GcBodySchema, required: false, example: '{"dry_run": true}' },
    responses: { 200: json('What was (or would be) removed.', GcReportSchema) },
  },

  {
    method: 'get',
    path: '/api/events',
    summary: 'Events by id after `offset` (default: from the first event still in the log); a page ends early past 4 MiB of JSON, one event at least: read on from its last id.',
    query: EventListQuerySchema,
    responses: { 200: json('Events, the first and the latest id.', EventPageSchema), 410: json(COMPACTED, ErrorBodySchema) },
  },
  {
    method: 'get',
    path: '/api/events/stream',
    summary: 'New events as Server-Sent Events (`id:` the event id); resumes after Last-Event-ID or `after`.',
    query: EventStreamQuerySchema,
    headers: { 'Last-Event-ID': { schema: LastEventIdSchema, description: 'Resume after this event id (what EventSource sends on reconnect).' } },
    responses: { 200: sse('One message per event, its data an EventView.'), 410: json(COMPACTED, ErrorBodySchema) },
  },
  {
    method: 'get',
    path: '/api/events/:id',
    summary: 'One event.',
    pathParams: { id: EventIdSchema },
    responses: { 200: json('The event.', EventViewSchema), 410: json(COMPACTED, ErrorBodySchema) },
  },

  { method: 'get', path: '/api/status', summary: 'Who the server is and how much it holds.', responses: { 200: json('Pid, port, workspace, version, counts, where runs go, where the state came from at start.', ServerStatusSchema) } },

  rpc('GetJobConfigs', 'The job configs that produce the refs (Connect unary).', JobConfigResponseSchema),
  rpc('AnalyzeGraph', 'The job graph that builds the refs (Connect unary).', GraphAnalyzeResponseSchema),
];

/** The errors an operation may answer besides its own, all `{"error", "want_id"?}` (or Connect errors for the RPCs). */
export function errorStatuses(op: Operation): Record<number, string> {
  const tooLarge = `The request's headers, its URL included, are over ${Math.floor(maxHeaderSize / 1024)} KiB (an id or ref is at most ${MAX_REF_LENGTH} characters).`;
  const stopping = 'The server is stopping: the request was not carried out and nothing of it recorded (`stopping`: true; Connect `unavailable`); run it again, against a new server.';
  if (op.path === '/health') return { 403: 'The Host is not a loopback name.', 431: tooLarge, 503: stopping };
  const out: Record<number, string> = {
    400: 'Bad input: a parameter or body that does not fit its schema, or a malformed request.',
    401: 'The daemon requires its token (Authorization: Bearer, or the dashboard cookie).',
    403: 'The Host is not a loopback name, or a write came from a foreign Origin.',
    431: tooLarge,
    500: 'An internal fault (logged by the server).',
    503: stopping,
  };
  if (op.path.includes(':') || (op.path.startsWith('/api/partitions/') && op.method === 'get')) out[404] = 'No such resource.';
  if (op.path === '/api/job_runs') out[404] = 'No want with the `want_id` asked for (its id is in the body).';
  if (op.method !== 'get') {
    if (!op.connect) out[400] = 'Bad input: a parameter or body that does not fit its schema, a body that does not decompress as its Content-Encoding says, or a malformed request.';
    out[413] = 'The body is over 1 MiB.';
    out[415] = 'The body is not in a supported encoding or media type.';
    out[503] = `The command queue is full, or writing the log failed: retry after Retry-After. Or: ${stopping.replace(/^The/, 'the')}`;
    out[507] = 'The disk holding the log is full: nothing was recorded.';
  }
  if (op.method === 'delete') out[409] = 'It ended otherwise already (a second cancel of a canceled one is a no-op, 200); or, for a want, it was derived for a parent that still needs it (cancel the want or backfill the 409 names).';
  if (op.path === '/api/wants' && op.method === 'post') out[409] = 'A conflict with the state.';
  if (op.path === '/login') {
    delete out[400];
    out[401] = 'The link was used already or is over a minute old.';
  }
  if (op.connect) {
    delete out[413];
    out[503] = stopping;
    delete out[507];
    out[404] = 'The service has no such method (Connect `unimplemented`).';
    out[405] = 'Not POST (Connect `unimplemented`).';
    out[501] = 'A Content-Encoding other than gzip or identity (Connect `unimplemented`).';
    out[429] =
      `The body is too large, or the graph asked for is over the budget of one request: ${groupDigits(RPC_GRAPH_BUDGET.maxPartitions)} ` +
      `partitions, ${groupDigits(RPC_GRAPH_BUDGET.maxInputs)} inputs in the configs of the answer (Connect \`resource_exhausted\`; ` +
      'the message says how to ask for less).';
    out[504] = 'The call took longer than its Connect-Timeout-Ms, and stopped (Connect `deadline_exceeded`).';
  }
  return out;
}
