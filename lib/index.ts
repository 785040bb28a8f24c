/** The embedding API: open a platform on a workspace, use its streams, optionally serve it over HTTP. */
export { Platform, type PlatformOptions } from './platform.js';
export type { Executor, Placement, Reattached } from './executor/executor-port.js';
export type { JobLaunch, JobOutcome } from './executor/job-launch.js';
export { ProcessExecutor } from './executor/process-executor.js';
export { SupervisedExecutor } from './executor/supervised-executor.js';
export type { ServerStatus, StatusCounts, StateStart, ExecutorHealth } from './api/server-status.js';
export type { StartProgress } from './state/store-start.js';
export { startHttpServer, type HttpServerOptions, type RunningServer } from './server/http-server.js';
export type { BuildEvent, BuildInput, EventPayload, EventType, JobConfig, DataDep, DepType, RebuildPolicy, JobRunStarted, SchedulesChanged, ScheduleSince, ScheduleTicksSkipped, SchedulePaused, ScheduleResumed } from './events/build-event.js';
export { BACKFILL_POLICIES } from './orchestrator/command.js';
export type {
  BuildState,
  WantRecord,
  WantStatus,
  PartitionRecord,
  PartitionStatus,
  JobRunRecord,
  JobRunStatus,
  ScheduleRecord,
  ScheduleTickWant,
} from './state/build-state.js';
export type { WantInput, BackfillInput, TaintInput } from './orchestrator/request-defaults.js';
export type { CreateWantRequest, CreateTaintRequest, CreateBackfillRequest, BackfillPolicy, BackfillReply, CommandResult, ScheduleReply, TaintReply } from './orchestrator/command.js';
export { backfillView, backfillWant, listBackfills } from './server/backfill-queries.js';
export type { BackfillView, BackfillCounts, CreateBackfillBody, CreateBackfillReply } from './api/backfills.js';
export { QueueFullError, QueueClosedError } from './orchestrator/command-queue.js';
export { reduce } from './state/reduce.js';
/** A want's `job_run_ids` and `child_want_ids` are append-lists (append-list.ts): read them through these. */
export { lastItems, listArray, listItems, listLength, listSlice, listSome, type AppendList } from './state/append-list.js';
export {
  activeWantsOn,
  initialState,
  wantsOfRun,
  WANT_STATUSES,
  TERMINAL_WANT_STATUSES,
  JOB_RUN_STATUSES,
  ACTIVE_JOB_RUN_STATUSES,
  PARTITION_STATUSES,
  type BuildRecord,
  type TaintRecord,
} from './state/build-state.js';
export { EVENT_TYPES, REBUILD_POLICIES, type WantSource } from './events/build-event.js';
export { GraphError } from './graph/graph-error.js';
export { EARLIER_BUILDS_SEARCHED, LINEAGE_MAX_NODES, type DetailQuery } from './server/lineage-queries.js';
export { wantView, partitionView, jobRunView, eventView } from './server/views.js';
export { listJobRuns, listPartitions, listWants, lookupPartitions, type PageQuery } from './server/queries.js';
export { PARTITION_LOOKUP_MAX, type PartitionLookupBody, type PartitionLookupReply } from './api/partition-lookup.js';
export type { EventView, JobRunView, PartitionView, WantView } from './api/views.js';
export type { Page } from './api/page.js';
export { parseGraph } from './graph/parse-graph.js';
export type { GraphDefinition, JobDefinition } from './graph/graph-definition.js';
export { RPC_GRAPH_BUDGET } from './api/platform-service.js';
export type { GraphBudget } from './graph/graph-budget.js';
export type { AnalyzeOptions } from './graph/job-resolver.js';
export { WorkPacer } from './system/work-pacer.js';
export { wantTree } from './server/want-tree-queries.js';
export type { WantTreeNode, WantTreeReply } from './api/want-tree.js';
export { partitionDetail, lineage, listTaints, taintView } from './server/lineage-queries.js';
export type { PartitionDetailView, LineageNode, LineageReply, TaintView, BuildView, CreateTaintBody } from './api/partitions-change.js';
export { staleFromScratch } from './state/staleness.js';
export { expandPattern, expandPatterns, patternSize, PatternError, MAX_EXPANSION } from './graph/partition-pattern.js';
export { listSchedules, scheduleView } from './server/schedule-queries.js';
export type { PauseScheduleBody, ScheduleChangeReply, ScheduleView } from './api/schedules.js';
export type { ScheduleDefinition } from './graph/schedule-definition.js';
export { firstTickAfter, nextTick, tickRefs, templateValues } from './graph/schedule-time.js';
export { catchUp, dueTicks, ticksBetween, MAX_COUNTED_TICKS, type CatchUp, type SkippedTicks } from './graph/schedule-catchup.js';
export type { GcReport, EventCompactionReport } from './api/gc.js';
export type { RetentionOptions } from './retention-options-check.js';
export type { RetentionReport } from './executor/job-log-retention.js';
export { EventsCompactedError } from './events/events-compacted-error.js';
