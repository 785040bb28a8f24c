/** The event streams (SSE) a server has open, and what they hold unsent: gauges of /metrics. */
import type { Response } from 'express';

export class SseClients {
  private readonly open = new Set<Response>();

  get count(): number {
    return this.open.size;
  }

  /** Bytes written to the open streams that their clients have not taken yet (each at most ~MAX_UNREAD_BYTES). */
  get unreadBytes(): number {
    let n = 0;
    for (const res of this.open) n += res.writableLength;
    return n;
  }

  /** Counts the response until it closes. */
  track(res: Response): void {
    this.open.add(res);
    res.once('close', () => this.open.delete(res));
  }
}
