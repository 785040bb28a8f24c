/** How many event streams (SSE) a server has open: a gauge of /metrics. */
import type { Response } from 'express';

export class SseClients {
  private open = 0;

  get count(): number {
    return this.open;
  }

  /** Counts the response until it closes. */
  track(res: Response): void {
    this.open++;
    res.once('close', () => this.open--);
  }
}
