/**
 * Events of runs a follow does not know yet, kept while reads of runs are out. A run the build joined becomes known
 * only from a read's answer, and its end can come on the event stream before that answer, which then still shows
 * it running: applied in arrival order, the answer would move the run back. The follow applies a read's answer,
 * then the events held for the runs it names (`after`). Nothing is kept while no read is out.
 */
import type { EventView } from '../client/platform-client.js';
import { jobRunIdOf } from '../events/job-run-id.js';

export class HeldRunEvents {
  private reads = 0;
  private readonly held = new Map<string, EventView[]>();

  /** A read of runs starts; pair with `readEnded` in a finally. */
  readStarted(): void {
    this.reads++;
  }

  readEnded(): void {
    if (--this.reads === 0) this.held.clear();
  }

  /** Keeps `event` when a read is out and it is of a run `isKnown` does not know. */
  offer(event: EventView, isKnown: (runId: string) => boolean): void {
    if (this.reads === 0) return;
    const runId = jobRunIdOf(event);
    if (runId === undefined || isKnown(runId)) return;
    const events = this.held.get(runId);
    if (events) events.push(event);
    else this.held.set(runId, [event]);
  }

  /** The events held for `runId`, in the order they came. */
  after(runId: string): readonly EventView[] {
    return this.held.get(runId) ?? [];
  }
}
