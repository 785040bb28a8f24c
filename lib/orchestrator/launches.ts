/**
 * Which queued runs start now, and which runs handed to the executor are taken back (recalled), under the global
 * cap, each job's max_concurrency and each backfill's cap (run-caps.ts). Pure: the state after the step's events,
 * the limits and what was handed over in; the runs out.
 */
import type { BuildState, JobRunRecord } from '../state/build-state.js';
import { CapCounter } from './run-caps.js';
import type { StepInput } from './step-input.js';

/**
 * Queued runs to start now, highest priority then oldest first, within the global, per-job and per-want limits;
 * and, with an executor that holds runs beyond the cap, the ones it may hold that should not start next after all.
 *
 * Beyond the cap (`holdBeyond`), a run is handed over only if nothing running or queued has a higher priority, and
 * it has no timeout (a timeout counts from the hand-over's start, which must be at once): so the executor never
 * holds a run that a later one of higher priority must pass. A held run whose priority is below what runs or waits
 * now (a more urgent want came) is recalled: it is queued again and handed over when its turn comes.
 */
export function launches(state: BuildState, input: Pick<StepInput, 'policy' | 'launched' | 'holdBeyond' | 'commands'>): { launch: JobRunRecord[]; recall: string[] } {
  const { policy, launched } = input;
  const perJob = new Map<string, number>();
  const caps = new CapCounter(state);
  let active = 0;
  const count = (run: JobRunRecord) => {
    active++;
    perJob.set(run.job_label, (perJob.get(run.job_label) ?? 0) + 1);
    caps.count(run);
  };
  let top = -Infinity;
  // What runs, without what was handed over: what a held run must still fit beside (the limits may have changed).
  const runningPerJob = new Map<string, number>();
  const runningCaps = new CapCounter(state);
  for (const [, id] of state.job_runs_by_status.running) {
    const run = state.job_runs.get(id);
    if (!run) continue;
    count(run);
    runningPerJob.set(run.job_label, (runningPerJob.get(run.job_label) ?? 0) + 1);
    runningCaps.count(run);
    top = Math.max(top, run.priority);
  }
  const handed: JobRunRecord[] = [];
  for (const id of launched) {
    const run = state.job_runs.get(id);
    if (run?.status !== 'queued') continue;
    count(run);
    handed.push(run);
  }
  for (const [, id] of state.queued_by_priority) {
    top = Math.max(top, state.job_runs.get(id)?.priority ?? top);
    break;
  }
  const cap = policy.max_concurrent_job_runs;
  const beyond = beyondCap(input);
  // Recalled: a held run below the top priority, or one its job's max_concurrency or its backfill's cap (as they are
  // now: platform.json may have lowered them) no longer leaves room for beside what runs and what was handed before
  // it. Still counted in this step: one that started meanwhile holds its slot.
  const recall: string[] = [];
  if (beyond > 0) {
    for (const run of handed) {
      const limit = policy.jobs.get(run.job_label)?.max_concurrency ?? 0;
      if (run.priority < top || (limit > 0 && (runningPerJob.get(run.job_label) ?? 0) >= limit) || !runningCaps.mayStart(run)) {
        recall.push(run.job_run_id);
        continue;
      }
      runningPerJob.set(run.job_label, (runningPerJob.get(run.job_label) ?? 0) + 1);
      runningCaps.count(run);
    }
  }
  const out: JobRunRecord[] = [];
  // Highest priority first, then oldest, and no further than the free capacity: a long queue is not walked when
  // nothing can start.
  for (const [, id] of state.queued_by_priority) {
    if (active >= cap + beyond) break;
    if (launched.has(id)) continue;
    const run = state.job_runs.get(id);
    if (!run) continue;
    // Held, it would start before what is queued after it: past the cap, the queue's order stops at it.
    if (active >= cap && (run.timeout_seconds > 0 || run.priority < top)) break;
    const limit = policy.jobs.get(run.job_label)?.max_concurrency ?? 0;
    if (limit > 0 && (perJob.get(run.job_label) ?? 0) >= limit) continue;
    // A backfill at its cap: its queued runs are few (its window), so passing them over stays cheap.
    if (!caps.mayStart(run)) continue;
    count(run);
    out.push(run);
  }
  return { launch: out, recall };
}

/**
 * How many runs past the cap a step may hand over: what the executor may hold, but no more than the cap while the
 * step takes commands (wants arriving). Runs that start the moment a slot frees take the CPU that acknowledging
 * wants needs: intake while building was 2,357-2,686 wants/s with runs held as deep as the cap and 1,437-1,536 held
 * 64 deep (docs/decisions.md, "Speed, session 27"). Intake comes first; the steps after it hand over as deep again.
 */
export function beyondCap(input: Pick<StepInput, 'policy' | 'holdBeyond' | 'commands'>): number {
  const held = input.holdBeyond ?? 0;
  return input.commands.length > 0 ? Math.min(held, input.policy.max_concurrent_job_runs) : held;
}
