/**
 * Long work on the event loop, cut into slices. The daemon answers every request and runs every orchestrator step
 * on one thread: a read that walks 50,000 refs at once held `/api/status` for its whole 24 s (found by an audit of
 * the PlatformService RPCs). The walker counts its units with `due()` and, when a slice is full, `await pause()`
 * lets one turn of the loop go by (`setImmediate`: after the I/O that is ready, so waiting requests and steps go
 * first). A pause is also where the work stops when its caller gave up: it throws the signal's reason once the
 * signal is aborted (a deadline passed, the client went away).
 */
import { setImmediate as yieldToLoop } from 'node:timers/promises';

/** Units of work between two turns of the loop; a unit is a ref matched, a task or an input looked at. */
export const DEFAULT_SLICE_UNITS = 2_000;

export class WorkPacer {
  private done = 0;

  constructor(
    private readonly signal?: AbortSignal,
    private readonly sliceUnits: number = DEFAULT_SLICE_UNITS,
  ) {}

  /** Counts `units` done; true when the slice is full and the caller should `await pause()`. */
  due(units = 1): boolean {
    this.done += units;
    return this.done >= this.sliceUnits;
  }

  /** Lets the loop turn once; throws the signal's reason when it is (or gets) aborted. */
  async pause(): Promise<void> {
    this.done = 0;
    this.signal?.throwIfAborted();
    await yieldToLoop();
    this.signal?.throwIfAborted();
  }

  /** Throws the signal's reason when it is aborted (between slices, without waiting). */
  check(): void {
    this.signal?.throwIfAborted();
  }
}
