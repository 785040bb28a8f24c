/**
 * When a run ended, from its end event: the job's own end when the event carries one (the run ended while no daemon
 * ran, and the next one read when from its status file), kept within what the log knows (not before the run began,
 * not after the event); otherwise the event's time.
 */
export function runEndedAt(endedAt: number, began: number | null, eventAt: number): number {
  return endedAt > 0 ? Math.min(eventAt, Math.max(endedAt, began ?? 0)) : eventAt;
}
