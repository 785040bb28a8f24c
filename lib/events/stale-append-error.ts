/**
 * An append that was to follow event `expected` found the log at `latest`: it was planned on a state that an
 * earlier append was to bring, and that append failed. Nothing of it was written; its step is planned again.
 */
export class StaleAppendError extends Error {
  /** An I/O fault for whoever classifies errors (system/storage-fault.ts): it follows one and passes with it. */
  readonly code = 'PLATFORM_STALE_APPEND';

  constructor(
    readonly expected: number,
    readonly latest: number,
  ) {
    super(
      `append refused: it was planned to follow event ${expected}, but the log ends at event ${latest} ` +
        `(an earlier append it depended on failed); nothing was written, plan it again on the log as it is`,
    );
    this.name = 'StaleAppendError';
  }
}
