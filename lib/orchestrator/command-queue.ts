/**
 * The bounded hand-off from HTTP handlers to the single writer. `offer` never blocks: a full queue refuses
 * at once (the handler answers 503), and a command once accepted is always answered.
 */
import { Subject, type Observable } from 'rxjs';
import type { Command, CommandResult } from './command.js';

export interface PendingCommand {
  readonly command: Command;
  readonly resolve: (result: CommandResult) => void;
  readonly reject: (error: Error) => void;
}

export class QueueFullError extends Error {
  constructor(readonly capacity: number) {
    super(`The orchestrator has ${capacity} commands waiting; try again in a moment.`);
    this.name = 'QueueFullError';
  }
}

export class QueueClosedError extends Error {
  constructor() {
    super('The server is shutting down and takes no new commands.');
    this.name = 'QueueClosedError';
  }
}

export class CommandQueue {
  private pending: PendingCommand[] = [];
  private closed = false;
  private readonly offered = new Subject<void>();
  /** Emits once per accepted command: the orchestrator's wake-up signal. */
  readonly signal$: Observable<void> = this.offered.asObservable();

  constructor(readonly capacity = 100) {}

  get size(): number {
    return this.pending.length;
  }

  offer(command: Command): Promise<CommandResult> {
    if (this.closed) return Promise.reject(new QueueClosedError());
    if (this.pending.length >= this.capacity) return Promise.reject(new QueueFullError(this.capacity));
    return new Promise<CommandResult>((resolve, reject) => {
      this.pending.push({ command, resolve, reject });
      this.offered.next();
    });
  }

  /** Takes every pending command, oldest first. */
  drain(): PendingCommand[] {
    const taken = this.pending;
    this.pending = [];
    return taken;
  }

  /** Refuses new commands; the ones still pending are refused too, so no caller waits forever. */
  close(): void {
    this.closed = true;
    for (const p of this.drain()) p.reject(new QueueClosedError());
    this.offered.complete();
  }
}
