/**
 * A step as far as it is planned: the state with the step's events folded in so far, those events, and what the
 * parts of the plan decided besides events. Every part reads and adds to this one object; none keeps state of its own.
 */
import type { EventPayload } from '../events/build-event.js';
import type { BuildState, WantRecord } from '../state/build-state.js';
import { reduce } from '../state/reduce.js';
import type { ReadyRef } from './batch-runs.js';
import type { StepInput } from './step-input.js';
import type { Wake } from './wake-list.js';

export class StepDraft {
  state: BuildState;
  readonly events: EventPayload[] = [];
  readonly unresolved: Array<[string, string]> = [];
  readonly kill: string[] = [];
  readonly waits: Array<[string, string, string]> = [];
  readonly deadlines: number[] = [];
  readonly wakes: Wake[] = [];
  readonly held: Array<[string, string]> = [];
  /** Ready refs of batched jobs, by job: queued together once every want of the step was looked at. */
  readonly ready = new Map<string, Array<ReadyRef<WantRecord>>>();

  constructor(readonly input: StepInput) {
    this.state = input.state;
  }

  /** Appends an event to the step and folds it in, so every later decision of the step sees it. */
  emit(payload: EventPayload): void {
    this.events.push(payload);
    this.state = reduce(this.state, { event_id: this.state.last_event_id + 1, timestamp: this.input.now, ...payload });
  }
}
