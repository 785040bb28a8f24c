/**
 * How `build` and `want wait` exit after following a want: 0 when it is successful, 1 with the reason when it is
 * not or the follow failed (bin/platform prints a thrown error), 130 after Ctrl-C, as shells report an interrupt.
 */
import type { FollowOutcome } from '../follow-want.js';

export const EXIT_INTERRUPTED = 130;

export function exitAfterFollow(outcome: FollowOutcome): void {
  switch (outcome.kind) {
    case 'interrupted':
      // At once: a cancel left pending by a second Ctrl-C must not hold the process.
      return process.exit(EXIT_INTERRUPTED);
    case 'error':
      throw outcome.error;
    case 'stream-ended':
      throw new Error(outcome.message);
    case 'done':
      if (outcome.failure !== undefined) throw new Error(outcome.failure);
  }
}
