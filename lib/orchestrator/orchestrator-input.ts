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
  /** A job run's process was spawned. */
  | { kind: 'started'; job_run_id: string; pid: number; worker: string }
  /** A worker took a run handed to a queue. */
  | { kind: 'placed'; job_run_id: string; pid: number; worker: string }
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
  /** The periodic tick, or an explicit request to look at every active want. */
  | { kind: 'tick' }
  | { kind: 'scan' };

export interface StepBatch {
  commands: PendingCommand[];
  started: Array<{ job_run_id: string; pid: number; worker: string }>;
  placed: Array<{ job_run_id: string; pid: number; worker: string }>;
  outcomes: JobOutcome[];
  /** Refs whose configs arrived (mapped to their active wants when the step reads the state). */
  resolvedRefs: string[];
  candidates: Candidates;
  /** Schedule every active want, not only the candidates. */
  fullScan: boolean;
  /** The graph changed: drop cached configs. */
  graphChanged: boolean;
}

export function emptyBatch(): StepBatch {
  return { commands: [], started: [], placed: [], outcomes: [], resolvedRefs: [], candidates: new Map(), fullScan: false, graphChanged: false };
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
        batch.started.push({ job_run_id: input.job_run_id, pid: input.pid, worker: input.worker });
        break;
      case 'placed':
        batch.placed.push({ job_run_id: input.job_run_id, pid: input.pid, worker: input.worker });
        break;
      case 'outcome':
        batch.outcomes.push(input.outcome);
        break;
      case 'configs':
        batch.resolvedRefs.push(...input.refs);
        break;
      case 'touched':
        mergeCandidates(batch.candidates, input.candidates);
        break;
      case 'graph':
        batch.graphChanged = true;
        batch.fullScan = true;
        break;
      case 'deadline':
      case 'tick':
      case 'scan':
        // A deadline names no want: the full scan finds every retry and ttl that is due.
        batch.fullScan = true;
        break;
    }
  }
  return batch;
}

/**
 * What is left of a batch whose step failed: its job-run news and candidates (the commands were answered with
 * the fault), to be tried again with a full scan, since the failed step's own follow-ups are unknown.
 */
export function retryBatch(failed: StepBatch): StepBatch {
  return { ...failed, commands: [], fullScan: true };
}

/** The wants on refs whose configs arrived become candidates. */
export function addResolvedRefs(candidates: Candidates, refs: readonly string[], activeWantsByRef: (ref: string) => Iterable<string>): void {
  for (const ref of refs) for (const id of activeWantsByRef(ref)) addCandidate(candidates, id, ref);
}
