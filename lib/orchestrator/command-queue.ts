/**
 * The bounded hand-off from HTTP handlers to the single writer. `offer` never blocks: a full queue refuses
 * at once (the handler answers 503), and a command once accepted is always answered.
 */
import { Subject, concat, defer, from, type Observable } from 'rxjs';
import type { Command, CommandResult } from './command.js';

export interface PendingCommand {
  readonly command: Command;
  readonly resolve: (result: CommandResult) => void;
  readonly reject: (error: Error) => void;
}

/**
 * Said to an embedder, who set the bound (`PlatformOptions.queueCapacity`) and can raise it; the daemon's 503 says
 * its own words (server/command-reply.ts) to HTTP clients, who cannot.
 */
export class QueueFullError extends Error {
  constructor(readonly capacity: number) {
    super(
      `The command queue is full: ${capacity} commands are waiting for the orchestrator to take them ` +
        `(its capacity, PlatformOptions.queueCapacity), so this one was refused and nothing was done. ` +
        `Retry it once some of those are answered, or open the platform with a larger queueCapacity.`,
    );
    this.name = 'QueueFullError';
  }
}

export class QueueClosedError extends Error {
  constructor() {
    // Said to an embedder, whose close() was called: the daemon's 503 says its own words (server/command-reply.ts).
    super('The platform is closed (or closing) and takes no new commands; open the workspace again (Platform.open) to go on.');
    this.name = 'QueueClosedError';
  }
}

export class CommandQueue {
  /** Accepted, not yet taken by a step: what counts against the capacity, and what a close refuses. */
  private readonly waiting = new Set<PendingCommand>();
  private closed = false;
  private readonly offered = new Subject<PendingCommand>();
  /**
   * Every accepted command: one of the orchestrator's inputs. Those still waiting when it subscribes come first, in
   * the order offered, then each as it is accepted: a platform opened with `start: false` takes commands before
   * `start()`, and a hot subject alone dropped them unseen while they went on holding a slot, never answered.
   */
  readonly command$: Observable<PendingCommand> = defer(() => concat(from([...this.waiting]), this.offered));

  constructor(readonly capacity = 100) {}

  get size(): number {
    return this.waiting.size;
  }

  offer(command: Command): Promise<CommandResult> {
    if (this.closed) return Promise.reject(new QueueClosedError());
    if (this.waiting.size >= this.capacity) return Promise.reject(new QueueFullError(this.capacity));
    return new Promise<CommandResult>((resolve, reject) => {
      const pending: PendingCommand = { command, resolve, reject };
      this.waiting.add(pending);
      this.offered.next(pending);
    });
  }

  /** A step takes the command; false when it was refused meanwhile (the queue closed), so it must be skipped. */
  take(pending: PendingCommand): boolean {
    return this.waiting.delete(pending);
  }

  /** Refuses new commands; the ones not yet taken are refused too, so no caller waits forever. */
  close(): void {
    this.closed = true;
    for (const p of this.waiting) p.reject(new QueueClosedError());
    this.waiting.clear();
    this.offered.complete();
  }
}
