/**
 * `retention.job_logs_days`: the log directories of finished job runs (`.platform/logs/<run>/`) are removed that many
 * days after the run ended. A pass costs what it removes, not the history: a cursor walks the runs in creation
 * order and stops at the first finished run that is not old enough (runs end roughly in the order they were made);
 * runs still queued or running when the cursor passed them are kept aside and looked at again each pass. A restarted
 * daemon's first pass walks from the start again, once.
 */
import { readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { runLogDir } from './job-launch.js';
import { ACTIVE_JOB_RUN_STATUSES, type BuildState, type JobRunRecord } from '../state/build-state.js';

export interface RetentionReport {
  dry_run: boolean;
  /** Runs that ended before this (ISO) lose their logs; null when no retention is configured. */
  cutoff: string | null;
  removed_runs: number;
  removed_bytes: number;
  /** The first 100 runs whose logs were (or, in a dry run, would be) removed. */
  job_run_ids: string[];
}

const DAY_MS = 86_400_000;
const RUNS_PER_SLICE = 500;

/** The moment before which a finished run's logs are gone, under `days`. */
export function logsCutoff(days: number, now: number): number {
  return now - days * DAY_MS;
}

/** True when the run's logs are removed by now under `days` (so a missing log is gone, not unwritten). */
export function logsExpired(run: JobRunRecord, days: number | undefined, now: number): boolean {
  return days !== undefined && !ACTIVE_JOB_RUN_STATUSES.has(run.status) && run.ended_at !== null && run.ended_at < logsCutoff(days, now);
}

export class JobLogRetention {
  private cursor = 0;
  private readonly held = new Set<string>();
  private running: Promise<RetentionReport> | undefined;

  constructor(private readonly workspaceRoot: string) {}

  /** One pass at a time; a dry run counts what a pass would remove and changes nothing. */
  pass(state: BuildState, days: number | undefined, now: number, dryRun: boolean): Promise<RetentionReport> {
    if (this.running) return this.running.then(() => this.pass(state, days, now, dryRun));
    const run = this.run(state, days, now, dryRun).finally(() => (this.running = undefined));
    this.running = run;
    return run;
  }

  private async run(state: BuildState, days: number | undefined, now: number, dryRun: boolean): Promise<RetentionReport> {
    const report: RetentionReport = { dry_run: dryRun, cutoff: null, removed_runs: 0, removed_bytes: 0, job_run_ids: [] };
    if (days === undefined) return report;
    report.cutoff = new Date(logsCutoff(days, now)).toISOString();
    const held = dryRun ? new Set(this.held) : this.held;
    let cursor = this.cursor;
    const collect = (id: string) => {
      const dir = runLogDir(this.workspaceRoot, id);
      const bytes = directoryBytes(dir);
      if (bytes === undefined) return;
      if (!dryRun) rmSync(dir, { recursive: true, force: true });
      report.removed_runs++;
      report.removed_bytes += bytes;
      if (report.job_run_ids.length < 100) report.job_run_ids.push(id);
    };
    let seen = 0;
    for (const id of [...held]) {
      const r = state.job_runs.get(id);
      if (!r || logsExpired(r, days, now)) {
        if (r) collect(id);
        held.delete(id);
      }
      if (++seen % RUNS_PER_SLICE === 0) await yieldToLoop();
    }
    for (const [seq, id] of state.job_run_order.entriesFrom(cursor)) {
      const r = state.job_runs.get(id)!;
      if (ACTIVE_JOB_RUN_STATUSES.has(r.status)) held.add(id);
      else if (logsExpired(r, days, now)) collect(id);
      else break;
      cursor = seq + 1;
      if (++seen % RUNS_PER_SLICE === 0) await yieldToLoop();
    }
    if (!dryRun) this.cursor = cursor;
    return report;
  }
}

/** Bytes a run directory holds (its files), or undefined when it is not there. */
function directoryBytes(dir: string): number | undefined {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return undefined;
  }
  let bytes = 0;
  for (const name of names) {
    try {
      bytes += statSync(join(dir, name)).size;
    } catch {
      // Gone meanwhile.
    }
  }
  return bytes;
}
