/**
 * A follow (`build`, `want wait`, `backfill`, `backfills wait`, `logs -f`) whose server went away before what it followed
 * ended: not a failure of the want, which is kept and goes on when a server runs again. Its own exit status, 75
 * (EX_TEMPFAIL: try again), lets a script tell it from a failed build (1) and wait again.
 */
export class ServerWentAwayError extends Error {
  readonly exitCode = 75;

  constructor(message: string) {
    super(message);
    this.name = 'ServerWentAwayError';
  }
}
