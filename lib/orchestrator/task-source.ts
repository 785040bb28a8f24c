/** Where the orchestrator gets a JobConfig for a ref: the graph, behind a narrow interface. */
import type { Observable } from 'rxjs';
import type { TaskResolution, SchedulingPolicy } from './step-input.js';

export interface TaskSource {
  /** Every ref gets a resolution; a ref that cannot be resolved gets `ok: false` with the reason. */
  resolve(refs: readonly string[]): Promise<Map<string, TaskResolution>>;
  readonly policy: SchedulingPolicy;
  /** Picks up a changed graph before a step; true when it changed (cached resolutions are then dropped). */
  refresh?(): Promise<boolean>;
  /** Emits when the graph behind the source changed (whoever reloaded it): cached resolutions no longer hold. */
  readonly changes$?: Observable<unknown>;
}
