/** A want's sla (`sla_seconds`) is a deadline for its success; the state keeps the pending ones by deadline. */
import type { StepDraft } from './step-draft.js';

/** Wants past their sla deadline and not successful: recorded once each; the next deadline wakes the loop. */
export function missSlas(d: StepDraft): void {
  for (const [key] of d.state.sla_pending.entries()) {
    const [deadlineText, want_id] = key.split('\0') as [string, string];
    const deadline = Number(deadlineText);
    if (deadline > d.input.now) {
      d.deadlines.push(deadline);
      return;
    }
    d.emit({ type: 'want_sla_missed', want_sla_missed: { want_id, deadline } });
  }
}
