/**
 * One orchestrator step as a pure function: the state, the step's inputs (commands, job-run news, the clock
 * reading, resolved job configs) in; the events to append, the replies, and the processes to start and kill
 * out. The loop (orchestrator.ts) does the effects. Each decision is a file of its own, sharing the step's draft
 * (step-draft.ts); this one fixes their order, which the later ones depend on: each sees the events of those before.
 */
import type { EventPayload } from '../events/build-event.js';
import type { BuildState, JobRunRecord } from '../state/build-state.js';
import { isSchedulable, schedulableRefs } from '../state/want-window.js';
import type { Candidates } from './candidates.js';
import type { CommandDecision } from './command.js';
import { decideCommand } from './command-decisions.js';
import { recordJobDefinitions } from './job-definition-changes.js';
import { launches } from './launches.js';
import { recordOutcome, recordPlaced, recordStarted } from './run-outcomes.js';
import { fireSchedules } from './schedule-ticks.js';
import { missSlas } from './sla-misses.js';
import { StepDraft } from './step-draft.js';
import type { StepInput } from './step-input.js';
import type { Wake } from './wake-list.js';
import { activeWants, needsBuild, scheduleWants } from './want-scheduling.js';
import { cancelForFailedWants } from './failed-wants.js';

export type { StepInput } from './step-input.js';

export interface StepPlan {
  events: EventPayload[];
  /** The input state with `events` folded in, as it will be once they are appended. */
  state: BuildState;
  /** One per command, in order. */
  replies: CommandDecision[];
  /** Queued runs to start now. */
  launch: JobRunRecord[];
  /** Runs handed over that the executor may still hold and should not start next (`launches`): to be queued again. */
  recall: string[];
  /** Running runs to kill (their cancel is already among `events`). */
  kill: string[];
  /** [input ref, want id, ref]: what the scheduled refs wait for (for the caller's `waiters`). */
  waits: Array<[string, string, string]>;
  /** Times (epoch ms) at which something seen in this step falls due: a schedule's tick, an sla. */
  deadlines: number[];
  /** Wants to look at again when their time comes: a retry, a ttl. */
  wakes: Wake[];
  /**
   * [want id, ref] of batched jobs' ready refs held back for a fuller batch: every later step looks at them again
   * (with whatever became ready since), so a batch gathers refs that became ready in different steps.
   */
  held: Array<[string, string]>;
  /**
   * Events before this index were looked at by this step's own scheduling (what they touched was scheduled here):
   * only what the later ones touched is left for the next step.
   */
  touchedFrom: number;
  /** [want id, ref] it would have scheduled but had no config for (one nobody asked for yet): the next step's. */
  unresolved: Array<[string, string]>;
}

export function planStep(input: StepInput): StepPlan {
  const d = new StepDraft(input);
  const replies = input.commands.map((c) => decideCommand(d, c));
  for (const s of input.started) recordStarted(d, s.job_run_id, s.pid, s.worker, s.started_at);
  for (const p of input.placed ?? []) recordPlaced(d, p.job_run_id, p.pid, p.worker, p.started_at);
  for (const o of input.outcomes) recordOutcome(d, o);
  if (input.final) return { events: d.events, state: d.state, replies, launch: [], recall: [], kill: d.kill, waits: [], deadlines: [], wakes: [], held: [], touchedFrom: 0, unresolved: [] };
  if (!input.candidates || input.housekeeping) {
    recordJobDefinitions(d);
    fireSchedules(d);
  }
  missSlas(d);
  // Scheduling looks at what every event before it touched (see StepPlan.touchedFrom).
  const touchedFrom = d.events.length;
  scheduleWants(d);
  // After scheduling, which may fail runs too (an unresolvable config, a cycle).
  cancelForFailedWants(d);
  const { launch, recall } = launches(d.state, input);
  return {
    events: d.events,
    state: d.state,
    replies,
    launch,
    recall,
    kill: d.kill,
    waits: d.waits,
    deadlines: d.deadlines,
    wakes: d.wakes,
    held: d.held,
    touchedFrom,
    unresolved: d.unresolved,
  };
}

/** Refs whose configs the next step may need: partitions of (candidate) active wants that no run is building. */
export function refsToResolve(state: BuildState, extra: readonly string[] = [], candidates?: Candidates): string[] {
  const refs = new Set<string>(extra);
  for (const want of activeWants(state, candidates)) {
    for (const ref of candidates?.get(want.want_id) ?? schedulableRefs(state, want)) {
      if (isSchedulable(state, want, ref) && (needsBuild(state, want, ref) || inFailedBatch(state, ref))) refs.add(ref);
    }
  }
  return [...refs];
}

/** A ref whose last run was a batch that failed and will be retried: the retry needs its own config (halves). */
function inFailedBatch(state: BuildState, ref: string): boolean {
  const p = state.partitions.get(ref);
  if (p?.status !== 'building') return false;
  const run = state.job_runs.get(p.job_run_id);
  return run !== undefined && run.status === 'failed' && run.retry_at > 0 && run.config.outputs.length > 1;
}
