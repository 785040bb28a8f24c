/**
 * Everything that can make the orchestrator step, as one typed stream (`input$`), and the pure fold of a batch
 * of inputs into what one step works on.
 */
import type { JobOutcome } from '../executor/job-launch.js';
import { addCandidate, mergeCandidates, type Candidates } from './candidates.js';
import type { PendingCommand } from './command-queue.js';

export type OrchestratorInput =
  /** A write from HTTP, the CLI or an embedder. */
  | { kind: 'command'; pending: PendingCommand }
  /** A job run's process was spawned (at `started_at`, epoch ms, when before it is heard of: one a killed daemon started). */
  | { kind: 'started'; job_run_id: string; pid: number; worker: string; started_at?: number }
  /** A worker took a run handed to a queue (at `started_at`, epoch ms, when before it is heard of: taken while no daemon ran). */
  | { kind: 'placed'; job_run_id: string; pid: number; worker: string; started_at?: number }
  /** A run handed over came back unstarted (`Executor.recall`): it is queued again, no longer launched. */
  | { kind: 'recalled'; job_run_id: string }
  /** A job run's process ended (or was found lost at start-up). */
  | { kind: 'outcome'; outcome: JobOutcome }
  /** Config programs answered for these refs: the active wants on them are worth another look. */
  | { kind: 'configs'; refs: readonly string[] }
  /** What a step's own events touched: the next step schedules these (want, ref) pairs. */
  | { kind: 'touched'; candidates: Candidates }
  /** A retry or a ttl fell due at `at`. */
  | { kind: 'deadline'; at: number }
  /** platform.json changed: configs resolved so far no longer hold. */
  | { kind: 'graph' }
  /** The periodic tick: housekeeping and the next slice of the sweep. */
  | { kind: 'tick' }
  /** Look at every active want again, a slice a step (start-up, after a fault). */
  | { kind: 'scan' }
  /** The next slice of a pass under way. */
  | { kind: 'sweep' };

export interface StepBatch {
  commands: PendingCommand[];
  started: Array<{ job_run_id: string; pid: number; worker: string; started_at?: number }>;
  placed: Array<{ job_run_id: string; pid: number; worker: string; started_at?: number }>;
  outcomes: JobOutcome[];
  recalled: string[];
  /** Refs whose configs arrived (mapped to their active wants when the step reads the state). */
  resolvedRefs: string[];
  candidates: Candidates;
  /** Look at the next slice of active wants ('slice'), or start a pass over all of them ('pass'). */
  sweep: 'slice' | 'pass' | undefined;
  /** Record job definition edits and fire due schedule ticks. */
  housekeeping: boolean;
  /** The graph changed: drop cached configs. */
  graphChanged: boolean;
}

export function emptyBatch(): StepBatch {
  return { commands: [], started: [], placed: [], outcomes: [], recalled: [], resolvedRefs: [], candidates: new Map(), sweep: undefined, housekeeping: false, graphChanged: false };
}

/** Folds inputs (in arrival order) into one step's work. */
export function collectBatch(inputs: readonly OrchestratorInput[]): StepBatch {
  const batch = emptyBatch();
  for (const input of inputs) {
    switch (input.kind) {
      case 'command':
        batch.commands.push(input.pending);
        break;
      case 'started':
        batch.started.push({ job_run_id: input.job_run_id, pid: input.pid, worker: input.worker, ...(input.started_at !== undefined ? { started_at: input.started_at } : {}) });
        break;
      case 'placed':
        batch.placed.push({ job_run_id: input.job_run_id, pid: input.pid, worker: input.worker, ...(input.started_at !== undefined ? { started_at: input.started_at } : {}) });
        break;
      case 'outcome':
        batch.outcomes.push(input.outcome);
        break;
      case 'recalled':
        batch.recalled.push(input.job_run_id);
        break;
      case 'configs':
        batch.resolvedRefs.push(...input.refs);
        break;
      case 'touched':
        mergeCandidates(batch.candidates, input.candidates);
        break;
      case 'graph':
        batch.graphChanged = true;
        batch.housekeeping = true;
        batch.sweep = 'pass';
        break;
      case 'scan':
        batch.housekeeping = true;
        batch.sweep = 'pass';
        break;
      case 'tick':
        batch.housekeeping = true;
        batch.sweep ??= 'slice';
        break;
      case 'deadline':
        // The wants due at it are on the loop's wake list; schedules and slas are housekeeping.
        batch.housekeeping = true;
        break;
      case 'sweep':
        // The loop knows a pass is under way: any step takes its next slice.
        break;
    }
  }
  return batch;
}

/**
 * What is left of a batch whose step failed: its job-run news and candidates (the commands were answered with
 * the fault), to be tried again with a pass over every active want, since the failed step's own follow-ups are
 * unknown.
 */
export function retryBatch(failed: StepBatch): StepBatch {
  return { ...failed, commands: [], housekeeping: true, sweep: 'pass' };
}

/** The wants on refs whose configs arrived become candidates. */
export function addResolvedRefs(candidates: Candidates, refs: readonly string[], activeWantsByRef: (ref: string) => Iterable<string>): void {
  for (const ref of refs) for (const id of activeWantsByRef(ref)) addCandidate(candidates, id, ref);
}
