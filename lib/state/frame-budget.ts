/**
 * How long one frame of a background snapshot may hold the event loop, decided before each frame from how long ago
 * the log last took an append.
 *
 * - While steps come (an append in the last QUIET_AFTER_MS), 5 ms: a step waits through a frame at each turn of the
 *   loop it takes, but a shorter frame spreads the snapshot over more seconds, and every event of those seconds is
 *   folded a second time onto the state the image holds (state-store.ts `takeImaged`). Session 18 measured both
 *   ways under goal 4's intake: no better worst slice, more work (docs/decisions.md).
 * - With the log quiet, 1 ms: nothing waits to be folded twice, and what the loop serves meanwhile (reads) waits at
 *   most a short frame: a timer's lateness while an image of 100,000 waiting wants was written, p99 7.5-8.9 ms with
 *   frames of 5 ms, 2.6-3.1 ms with frames of 1 ms, the image made in the same time.
 */
export const BUSY_FRAME_MS = 5;
export const QUIET_FRAME_MS = 1;
export const QUIET_AFTER_MS = 20;

export function frameBudgetMs(msSinceLastAppend: number): number {
  return msSinceLastAppend < QUIET_AFTER_MS ? BUSY_FRAME_MS : QUIET_FRAME_MS;
}

/**
 * While steps come, the share of the loop's time a background snapshot's frames may take: after a frame that held the
 * loop w ms, it leaves it to steps and reads for w * (1 / BUSY_SHARE - 1) ms. Without a rest, a frame began again on
 * the loop's next turn, and the snapshot held ~70-80% of the loop for its length: under goal 4's intake (100,000
 * waiting wants, wrk), the 2-second slice holding a snapshot took 1,980-2,789 wants/s against 5,000-8,000 in the rest.
 * With the rest, the same image takes about three times as long, and that slice 3,663-4,404 (20%: 3,005-3,641; 50%:
 * 2,448-2,893; docs/BENCHMARKS.md, session 30). With the log quiet nothing waits, and frames follow each other.
 */
export const BUSY_SHARE = 0.3;

export function frameRestMs(msSinceLastAppend: number, workedMs: number): number {
  return msSinceLastAppend < QUIET_AFTER_MS ? workedMs * (1 / BUSY_SHARE - 1) : 0;
}

/**
 * The rests of one writer's frames, so that its frames take BUSY_SHARE of a busy loop over the time it has been busy,
 * not per frame: a rest (a timer) ends late on a loop full of requests, and each frame's write is awaited a turn of
 * it, so rests of w * (1 / BUSY_SHARE - 1) each left an image 2-5% of a saturated loop: one of 700,000 events
 * written at ~1 MB/s, a minute and more, and no delta meanwhile (docs/decisions.md, session 31). A frame rests only as
 * far as the writer is ahead of its share since the log became busy (at most the old per-frame rest); behind it, the
 * next frame follows on the loop's next turn. Quiet, no rest, and the count starts again.
 */
export class SharePacer {
  private work = 0;
  private since = 0;

  /** How long to rest after a frame that held the loop `workedMs`, at `now`, `msSinceLastAppend` after an append. */
  rest(workedMs: number, msSinceLastAppend: number, now: number): number {
    if (msSinceLastAppend >= QUIET_AFTER_MS) {
      this.work = 0;
      return 0;
    }
    if (this.work === 0) this.since = now - workedMs;
    this.work += workedMs;
    const ahead = this.work / BUSY_SHARE - (now - this.since);
    return Math.max(0, Math.min(ahead, frameRestMs(msSinceLastAppend, workedMs)));
  }
}
