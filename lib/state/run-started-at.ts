/**
 * When a run started, from its start event: the job's own start when the event carries one (a daemon killed before it
 * recorded the start had started it, and the next one read when from the process or its files), kept within what the
 * log knows (not before the run was queued, not after the event); otherwise the event's time.
 */
export function runStartedAt(startedAt: number, queuedAt: number, eventAt: number): number {
  return startedAt > 0 ? Math.min(eventAt, Math.max(startedAt, queuedAt)) : eventAt;
}
