/** setTimeout's ceiling (~24.8 days): Node fires a longer delay after 1 ms, so longer waits go in legs or are capped. */
export const MAX_TIMER_MS = 2 ** 31 - 1;
