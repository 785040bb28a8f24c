/**
 * How following a want ends, as one stream: the first of
 * - the want read as ended (a read after each event that concerns the build, and a periodic read as a safety net
 *   should an event be missed),
 * - Ctrl-C,
 * - the server ending the events stream (it shut down; the want may still have ended just before, so it is read
 *   once more), or the stream failing.
 * Reads are `switchMap`ped: a newer reason to read replaces a read in flight, so the last word is always read.
 * Time runs on the given scheduler (virtual in tests).
 */
import {
  type Observable,
  type SchedulerLike,
  EMPTY,
  asyncScheduler,
  catchError,
  concat,
  defer,
  filter,
  ignoreElements,
  map,
  merge,
  of,
  race,
  share,
  switchMap,
  take,
  timer,
} from 'rxjs';
import type { WantView } from '../client/platform-client.js';
import { TERMINAL_WANT_STATUSES } from '../state/build-state.js';

/** What is followed: a want, or anything that ends as a want does (a backfill). */
type Followed = Pick<WantView, 'status'>;

export type Ending<T extends Followed = WantView> =
  | { kind: 'done'; want: T }
  | { kind: 'stream-ended' }
  | { kind: 'interrupted' }
  | { kind: 'error'; error: unknown };

export interface EndingSources<T extends Followed = WantView> {
  /** One value per event that concerns the build (a reason to read the want); completes when the server ends the stream. */
  relevant$: Observable<unknown>;
  /** Reads the root want (or backfill) once. */
  readWant: () => Observable<T>;
  /** Ctrl-C. */
  interrupt$: Observable<unknown>;
  /** How often the want is read anyway. */
  pollMs: number;
  scheduler?: SchedulerLike;
}

const ended = <T extends Followed>(w: T): boolean => TERMINAL_WANT_STATUSES.has(w.status);

export function followEnding<T extends Followed = WantView>({
  relevant$,
  readWant,
  interrupt$,
  pollMs,
  scheduler = asyncScheduler,
}: EndingSources<T>): Observable<Ending<T>> {
  const events$ = relevant$.pipe(share());
  // A read that fails says nothing: the stream's end or error tells what happened to the server; the poll retries.
  const read = () => readWant().pipe(catchError(() => EMPTY));
  // The stream's failure is streamEnd$'s to report; here it only stops event-driven reads (the poll goes on).
  const done$ = merge(timer(0, pollMs, scheduler), events$.pipe(catchError(() => EMPTY))).pipe(
    switchMap(read),
    filter(ended),
    map((want): Ending<T> => ({ kind: 'done', want })),
  );
  const streamEnd$ = concat(
    events$.pipe(ignoreElements()),
    defer(() => read()).pipe(
      map((want): Ending<T> => (ended(want) ? { kind: 'done', want } : { kind: 'stream-ended' })),
      // Read nothing (the server is gone): the stream ended all the same.
      (answer$) => concat(answer$, of<Ending<T>>({ kind: 'stream-ended' })).pipe(take(1)),
    ),
  ).pipe(catchError((error: unknown) => of<Ending<T>>({ kind: 'error', error })));
  const interrupted$ = interrupt$.pipe(map((): Ending<T> => ({ kind: 'interrupted' })));
  return race(done$, streamEnd$, interrupted$).pipe(take(1));
}
