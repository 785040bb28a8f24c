/**
 * What /metrics serves, as a prom-client registry of its own (one per server, so servers in one process never share
 * figures): the state's sizes by status (read from indexes at scrape time: O(statuses), whatever the history), job
 * runs started and finished by job and outcome with their durations, the orchestrator's step duration, the event
 * log's write (fsync) latency, open event streams, and node's default process metrics. Counters and histograms
 * count from this server's start, as Prometheus expects of a process.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { type Observable, takeUntil } from 'rxjs';
import type { BuildEvent } from '../events/build-event.js';
import type { Platform } from '../platform.js';
import { JOB_RUN_STATUSES, PARTITION_STATUSES, WANT_STATUSES, type BuildState } from '../state/build-state.js';
import type { SseClients } from './sse-clients.js';

/** Job runs take from milliseconds (a `true`) to hours (a backfill's load). */
const RUN_BUCKETS = [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600, 14400];
/** Steps and log writes take from microseconds to, on a loaded disk, tens of milliseconds. */
const FAST_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];

const ENDED: Partial<Record<BuildEvent['type'], string>> = {
  job_run_succeeded: 'succeeded',
  job_run_failed: 'failed',
  job_run_canceled: 'canceled',
  job_run_dep_missed: 'dep_missed',
};

/** The registry; what feeds it stops with `shutdown$`. */
export function platformMetrics(platform: Platform, sse: SseClients, shutdown$: Observable<void>): Registry {
  const registry = new Registry();
  // node's process metrics, less the gauges prom-client names like counters (`nodejs_active_handles_total`...),
  // which `promtool check metrics` rejects; the same figures stay as `nodejs_active_handles` etc.
  const defaults = new Registry();
  collectDefaultMetrics({ register: defaults });
  for (const { name, type } of defaults.getMetricsAsArray()) {
    const metric = defaults.getSingleMetric(name);
    if (metric && !(name.endsWith('_total') && String(type) !== 'counter')) registry.registerMetric(metric);
  }
  const state = () => platform.state();
  const total = (name: string, help: string, value: () => number) =>
    new Counter({
      name,
      help,
      registers: [registry],
      collect() {
        this.reset();
        this.inc(value());
      },
    });
  total('platform_wants_total', 'Total number of wants.', () => state().created.wants);
  total('platform_job_runs_total', 'Total number of job runs.', () => state().created.job_runs);
  total('platform_wants_sla_missed_total', 'Wants not successful by their sla deadline.', () => state().wants_sla_missed);
  total('platform_builds_total', 'Times a partition became live (builds).', () => state().created.builds);
  total('platform_taints_total', 'Taints created.', () => state().created.taints);
  total('platform_events_total', 'Events in the build event log.', () => platform.log.latestId());
  // Per schedule of platform.json: a handful of series, read off the records at scrape time (no walk of any history).
  // The log keeps the records of schedules removed since; a series for each would report a pause for ever.
  const scheduleRecords = () => {
    const s = state();
    return platform.resolver.graph.schedules.flatMap((d) => s.schedules.get(d.name) ?? []);
  };
  new Counter({
    name: 'platform_schedule_ticks_skipped_total',
    help: "Schedule ticks that fell due and made no want (missed beyond catchup, or due while paused), by schedule; a gap too long to count adds its lower bound.",
    labelNames: ['schedule'],
    registers: [registry],
    collect() {
      this.reset();
      for (const r of scheduleRecords()) this.inc({ schedule: r.name }, r.skipped);
    },
  });
  new Gauge({
    name: 'platform_schedule_paused',
    help: 'A schedule paused (1: it makes no wants until resumed) or running (0).',
    labelNames: ['schedule'],
    registers: [registry],
    collect() {
      this.reset();
      for (const r of scheduleRecords()) this.set({ schedule: r.name }, r.paused ? 1 : 0);
    },
  });
  const byStatus = <S extends string>(name: string, help: string, statuses: readonly S[], size: (s: S) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ['status'],
      registers: [registry],
      collect() {
        for (const s of statuses) this.set({ status: s }, size(s));
      },
    });
  byStatus('platform_wants', 'Wants by status.', WANT_STATUSES, (s) => state().wants_by_status[s].size);
  byStatus('platform_job_runs', 'Job runs by status.', JOB_RUN_STATUSES, (s) => state().job_runs_by_status[s].size);
  byStatus('platform_partitions', 'Partitions by status.', PARTITION_STATUSES, (s) => state().partitions_by_status[s].size);
  const gauge = (name: string, help: string, value: () => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(value());
      },
    });
  gauge('platform_command_queue_depth', 'Write commands waiting for the orchestrator.', () => platform.queue.size);
  gauge('platform_command_queue_capacity', 'Capacity of the command queue.', () => platform.queue.capacity);
  gauge('platform_sse_clients', 'Event and log streams (SSE) open now.', () => sse.count);
  gauge('platform_sse_unread_bytes', 'Bytes written to the open event and log streams (SSE) that their clients have not read yet.', () => sse.unreadBytes);
  gauge('platform_snapshot_writing', 'A snapshot of the state is being written now (1) or not (0).', () => (platform.store.writingSnapshot ? 1 : 0));
  gauge('platform_snapshots_written', 'Snapshots of the state (whole images) written since this server started.', () => platform.store.snapshotsWritten);
  gauge('platform_snapshot_deltas_written', 'Deltas of the state since its last image written since this server started.', () => platform.store.deltasWritten);
  // How this server's state was read at start: from the snapshot (the usual), the compaction base, or the whole log.
  const opened = platform.store.start;
  const source = new Gauge({
    name: 'platform_start_state_source',
    help: 'Where the state was read from at start (1 for the one used): snapshot, compaction_base or log (a replay from the first event).',
    labelNames: ['source'],
    registers: [registry],
  });
  for (const from of ['snapshot', 'compaction_base', 'log'] as const) source.set({ source: from }, opened.source === from ? 1 : 0);
  gauge('platform_start_state_event_id', 'The last event the state read at start held (0 when read from the log alone).', () => opened.at_event);
  gauge('platform_start_events_replayed', 'Events of the log folded at start onto the state read.', () => opened.events_replayed);
  gauge('platform_start_state_duration_seconds', 'How long reading the state took at start (the snapshot or base, and the replay).', () => opened.duration_ms / 1000);

  const started = new Counter({ name: 'platform_job_runs_started_total', help: 'Job runs started since this server started, by job.', labelNames: ['job'], registers: [registry] });
  const finished = new Counter({
    name: 'platform_job_runs_finished_total',
    help: 'Job runs that ended since this server started, by job and outcome (succeeded, failed, canceled, dep_missed).',
    labelNames: ['job', 'outcome'],
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'platform_job_run_duration_seconds',
    help: 'How long job runs ran, from start to end, by job and outcome.',
    labelNames: ['job', 'outcome'],
    buckets: RUN_BUCKETS,
    registers: [registry],
  });
  const steps = new Histogram({ name: 'platform_step_duration_seconds', help: 'Orchestrator steps, from planning to launches.', buckets: FAST_BUCKETS, registers: [registry] });
  const writes = new Histogram({
    name: 'platform_log_write_duration_seconds',
    help: 'Event log batch writes; synced="true" is the fsync latency.',
    labelNames: ['synced'],
    buckets: FAST_BUCKETS,
    registers: [registry],
  });

  // Each event is counted against a state that holds it: the state moves once a batch (events$ may run ahead of it
  // within one), and a run ended in the batch that started it read no end, so its duration went unobserved (QA,
  // session 32: 12 of 20 runs in the histogram, 20 finished). Events wait here until a state holds them.
  const waiting: BuildEvent[] = [];
  let head = 0;
  const count = (e: BuildEvent, s: BuildState): void => {
    if (e.type === 'job_run_started') {
      const run = s.job_runs.get(e.job_run_started.job_run_id);
      if (run) started.inc({ job: run.job_label });
      return;
    }
    const outcome = ENDED[e.type];
    if (!outcome) return;
    const id = (e as unknown as Record<string, { job_run_id: string }>)[e.type]!.job_run_id;
    const run = s.job_runs.get(id);
    if (!run) return;
    finished.inc({ job: run.job_label, outcome });
    if (run.started_at !== null && run.ended_at !== null) duration.observe({ job: run.job_label, outcome }, Math.max(0, run.ended_at - run.started_at) / 1000);
  };
  const countHeld = (s: BuildState): void => {
    while (head < waiting.length && waiting[head]!.event_id <= s.last_event_id) count(waiting[head++]!, s);
    if (head === waiting.length) {
      waiting.length = 0;
      head = 0;
    }
  };
  platform.log.appended$.pipe(takeUntil(shutdown$)).subscribe((e) => {
    if (e.type !== 'job_run_started' && !ENDED[e.type]) return;
    waiting.push(e);
    countHeld(state());
  });
  platform.state$.pipe(takeUntil(shutdown$)).subscribe(countHeld);
  platform.orchestrator.steps$.pipe(takeUntil(shutdown$)).subscribe((s) => steps.observe(s.seconds));
  platform.log.writes$.pipe(takeUntil(shutdown$)).subscribe((w) => writes.observe({ synced: String(w.synced) }, w.seconds));
  return registry;
}
