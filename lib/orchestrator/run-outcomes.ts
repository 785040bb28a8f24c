/**
 * What the executor tells of runs, recorded: a start, a placement on a worker, an end (succeeded, failed, missed
 * inputs, canceled). A failure is retried up to its job's `retries` with backoff: `retry_at` is decided here, and the
 * next attempt is queued by scheduling once it is due (retryRun), a batch then split in halves.
 */
import type { JobOutcome } from '../executor/job-launch.js';
import { LOST_RUN_REASON } from '../executor/lost-runs.js';
import { listSome } from '../state/append-list.js';
import type { JobRunRecord, WantRecord } from '../state/build-state.js';
import { ACTIVE_JOB_RUN_STATUSES, wantsOfRun } from '../state/build-state.js';
import { halves, joinTasks } from './batch-runs.js';
import { foundInputs, queueRun } from './queue-run.js';
import type { StepDraft } from './step-draft.js';
import type { TaskResolution } from './step-input.js';

/**
 * Runs of one partition lost in a row (their worker or supervisor died under them), the last of them recorded as a
 * failure. A lost run is rebuilt without spending the job's retries, since the machine is at fault, not the job; but a
 * job that kills its worker (or has it killed: out of memory) is lost each time, and was run again for ever as long as
 * a worker came back (a supervisor restarting it). The third in a row is taken for the job's doing: a failure, retried
 * by its `retries` like any other, then final.
 */
export const LOST_IN_A_ROW_LIMIT = 3;

/** How many of a want's latest runs are looked at for the runs of a partition lost before (`lostBefore`). */
const LOST_RUNS_LOOKED_AT = 4_096;

const BACKOFF_BASE_MS = 1000;
const BACKOFF_MAX_MS = 60_000;

export function retryDelayMs(attempt: number): number {
  return Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** Math.max(0, attempt - 1));
}

export function recordStarted(d: StepDraft, job_run_id: string, pid: number, worker: string, started_at = 0): void {
  const run = d.state.job_runs.get(job_run_id);
  // Canceled while it was launched, it ran for a moment: recorded, so that a run that reads as never started never ran.
  const startedLate = run?.status === 'canceled' && run.started_at === null && pid > 0;
  if (run?.status !== 'queued' && !startedLate) return;
  d.emit({ type: 'job_run_started', job_run_started: { job_run_id, pid, worker, started_at } });
}

export function recordPlaced(d: StepDraft, job_run_id: string, pid: number, worker: string, started_at = 0): void {
  const run = d.state.job_runs.get(job_run_id);
  // Canceled while it waited for a worker, yet one had taken it: recorded, so that a run that reads as never started
  // never ran (as recordStarted does for a local run canceled while it was launched).
  const takenLate = run?.status === 'canceled' && run.started_at === null;
  // Told again (a restarted daemon reads it back from the queue): nothing new to record.
  if (!run || (run.status !== 'running' && !takenLate) || (run.worker === worker && run.pid === pid)) return;
  d.emit({ type: 'job_run_placed', job_run_placed: { job_run_id, worker, pid, started_at } });
}

export function recordOutcome(d: StepDraft, o: JobOutcome): void {
  const run = d.state.job_runs.get(o.job_run_id);
  if (!run || !ACTIVE_JOB_RUN_STATUSES.has(run.status)) return;
  const job_run_id = o.job_run_id;
  switch (o.status) {
    case 'succeeded': {
      // Each output it still owns gets a build id (the lineage: these with the run's input_builds).
      const builds = run.config.outputs
        .filter((ref) => d.state.partitions.get(ref)?.job_run_id === job_run_id)
        .map((partition_ref, i) => ({ partition_ref, build_id: `b-${d.state.created.builds + 1 + i}` }));
      d.emit({ type: 'job_run_succeeded', job_run_succeeded: { job_run_id, builds, ended_at: o.ended_at ?? 0 } });
      return;
    }
    case 'failed':
      failRun(d, run, o.exit_code, o.signal, o.reason, o.ended_at);
      return;
    case 'dep_missed': {
      // Inputs that were already live when this run was queued cannot be what it missed: rerunning would
      // report them again, forever. That is the job's failure (e.g. it looks for its input in the wrong place).
      const liveBefore = o.missing.filter((m) => {
        const p = d.state.partitions.get(m);
        return p?.status === 'live' && p.updated_at <= run.queued_at;
      });
      if (o.missing.length > 0 && liveBefore.length === o.missing.length) {
        failRun(
          d,
          run,
          -1,
          '',
          `the job reported missing inputs that were already live before it was queued (${liveBefore.join(', ')}); ` +
            'check how the job finds its inputs',
          o.ended_at,
        );
        return;
      }
      d.emit({ type: 'job_run_dep_missed', job_run_dep_missed: { job_run_id, missing: o.missing, ended_at: o.ended_at ?? 0 } });
      return;
    }
    case 'canceled': {
      const lost = o.reason.startsWith(LOST_RUN_REASON) ? lostBefore(d, run) + 1 : 0;
      if (lost >= LOST_IN_A_ROW_LIMIT) {
        const ref = run.config.outputs[0]!;
        failRun(
          d,
          run,
          -1,
          '',
          `${o.reason}; the run of ${ref} lost ${lost} times in a row: a job whose worker (or supervisor) dies under each run may be killing it, or have it killed (out of memory?); check the job and the machine's log. Recorded as a failure, so the job's retries apply`,
        );
        return;
      }
      d.emit({ type: 'job_run_canceled', job_run_canceled: { job_run_id, reason: o.reason } });
      return;
    }
  }
}

/**
 * How many runs of `run`'s first output were lost in a row just before it (up to LOST_IN_A_ROW_LIMIT - 1), read
 * back through the runs of its first want, newest first: a lost run's successor is queued for the same want. Costs
 * the want's runs since the output's last run that was not lost, at most LOST_RUNS_LOOKED_AT, and only for a lost run.
 */
function lostBefore(d: StepDraft, run: JobRunRecord): number {
  const ref = run.config.outputs[0];
  const wantId = wantsOfRun(d.state, run.job_run_id).next().value;
  const want = wantId === undefined ? undefined : d.state.wants.get(wantId);
  if (ref === undefined || !want) return 0;
  let lost = 0;
  let looked = 0;
  listSome(want.job_run_ids, (id) => {
    // Bounded: a backfill's want has a run for each of 100,000 partitions, and a daemon killed with 2,000 in flight
    // finds them all lost in one step. A lost run's successor is queued for its want within the planner's window
    // (at most 4,096 runs: want-scheduling.ts), so an earlier run of the same partition is within that many.
    if (++looked > LOST_RUNS_LOOKED_AT) return true;
    if (id === run.job_run_id) return false;
    const before = d.state.job_runs.get(id);
    if (!before || before.config.outputs[0] !== ref) return false;
    if ((before.status !== 'canceled' && before.status !== 'failed') || !before.reason.startsWith(LOST_RUN_REASON)) return true;
    lost++;
    return lost >= LOST_IN_A_ROW_LIMIT - 1;
  });
  return lost;
}

/** A failed run, retried up to the job's `retries` with backoff. */
function failRun(d: StepDraft, run: JobRunRecord, exit_code: number, signal: string, reason: string, ended_at = 0): void {
  const retries = d.input.policy.jobs.get(run.job_label)?.retries ?? 0;
  // A retry is for someone: with no active want on any output, the failure is final.
  const wanted = run.config.outputs.some((ref) => d.state.active_wants_by_ref.has(ref));
  const retry_at = wanted && run.attempt <= retries ? d.input.now + retryDelayMs(run.attempt) : 0;
  d.emit({
    type: 'job_run_failed',
    job_run_failed: { job_run_id: run.job_run_id, exit_code, signal, reason, retry_at, ended_at },
  });
}

/**
 * The next attempt of a failed run. A batch goes again in halves, each from its refs' own configs (when they are
 * at hand), so a bad ref stops failing the rest; a run of one ref goes again as it was. Each names the run it
 * retries (`retry_of`): the fold records the first one queued, the half with the batch's first output, as the
 * failed run's `retried_by`.
 */
export function retryRun(d: StepDraft, last: JobRunRecord, want: WantRecord): void {
  const refs = last.config.outputs;
  const tasks = refs.map((ref) => d.input.tasks.get(ref));
  if (refs.length <= 1 || tasks.some((t) => !t?.ok)) {
    queueRun(d, last, want, last.attempt + 1, last.job_run_id, foundInputs(last));
    return;
  }
  const ok = tasks as Array<Extract<TaskResolution, { ok: true }>>;
  for (const half of halves(ok)) queueRun(d, joinTasks(half), want, last.attempt + 1, last.job_run_id, foundInputs(last));
}
