/**
 * A cap on how many tests of one file run at once. ava starts every test of a file together; when each of them
 * spawns node processes, two dozen at once on a small machine only queue for the same cores, and a test waiting
 * for a live event (a run reported running, a line streamed) times out behind the others. With a few slots the
 * processes take turns, the file ends no later, and the waits measure the code rather than the queue.
 */
import type { ExecutionContext } from 'ava';

export type Body = (t: ExecutionContext) => Promise<unknown>;

/** Wraps test bodies so that at most `slots` of them run at a time; the rest wait their turn in order. */
export function testSlots(slots: number): (body: Body) => Body {
  let free = slots;
  const waiting: Array<() => void> = [];
  const acquire = (): Promise<void> => {
    if (free > 0) {
      free--;
      return Promise.resolve();
    }
    return new Promise((resolve) => waiting.push(resolve));
  };
  const release = (): void => {
    const next = waiting.shift();
    if (next) next();
    else free++;
  };
  return (body) => async (t) => {
    await acquire();
    try {
      return await body(t);
    } finally {
      release();
    }
  };
}
