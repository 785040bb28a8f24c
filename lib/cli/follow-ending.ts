/**
 * When following a want ends, as a race of streams: the want reaching a terminal status (read after each event
 * that may have changed it, and every `pollMs` anyway as a safety net), Ctrl-C, and the events stream ending or
 * failing. Pure of I/O: the reads and the streams come in, so tests drive it on virtual time.
 */
import {
  type Observable,
  type SchedulerLike,
  EMPTY,
  NEVER,
  Subject,
  asyncScheduler,
  catchError,
  concat,
  defer,
  endWith,
  filter,
  ignoreElements,
  interval,
  map,
  merge,
  of,
  race,
  share,
  take,
  tap,
  throttle,
} from 'rxjs';
import { TERMINAL_WANT_STATUSES, type WantStatus } from '../state/build-state.js';

export type FollowEnding<W> =
  | { kind: 'done'; want: W }
  | { kind: 'interrupted' }
  | { kind: 'stream-ended' }
  | { kind: 'error'; error: unknown };

export interface FollowSources<W extends { status: WantStatus }> {
  /** The want as read before the follow: if it is over already, that is the ending. */
  want: W;
  /** What must be read before the events are followed (runs the want already has); its error ends the follow. */
  catchUp$: Observable<never>;
  /** One value per event of the stream: whether it may have changed the want. Ends or fails with the stream. */
  events$: Observable<boolean>;
  /** Reads the want's current state. */
  readWant: () => Observable<W>;
  /** Ctrl-C presses. */
  sigint$: Observable<unknown>;
  /** How often the want is read anyway, should an event that concerns it go unnoticed. */
  pollMs: number;
  /** What the poll runs on (tests pass a virtual one). */
  scheduler?: SchedulerLike;
}

const INTERRUPTED = { kind: 'interrupted' } as const;
const STREAM_ENDED = { kind: 'stream-ended' } as const;

/**
 * Runs `read` for the values of the source one at a time: values that come during a read are folded into one
 * more read after it, so a burst of events costs two reads, and the last value is always followed by a read.
 */
function readCoalesced<R>(read: () => Observable<R>): (trigger$: Observable<unknown>) => Observable<R> {
  return (trigger$) =>
    defer(() => {
      const results$ = new Subject<R>();
      // throttle's duration is the read itself: leading starts one, trailing starts one more after it if needed.
      const reads$ = trigger$.pipe(
        throttle(() => read().pipe(tap((r) => results$.next(r))), { leading: true, trailing: true }),
        ignoreElements(),
      );
      return merge(results$, reads$);
    });
}

/** Emits the ending, once. */
export function followEnding<W extends { status: WantStatus }>(sources: FollowSources<W>): Observable<FollowEnding<W>> {
  const { want, catchUp$, readWant, pollMs, scheduler = asyncScheduler } = sources;
  const isOver = (w: W) => TERMINAL_WANT_STATUSES.has(w.status);
  const done = (w: W): FollowEnding<W> => ({ kind: 'done', want: w });

  const following$ = defer((): Observable<FollowEnding<W>> => {
    if (isOver(want)) return of(done(want));
    // Both branches of the race watch the one stream; one that ended before the second looked stays ended.
    const events$ = sources.events$.pipe(share({ resetOnComplete: false, resetOnError: false }));
    // A read that fails is not an ending: the stream's end or error says what happened to the server.
    const tryRead = () => readWant().pipe(catchError(() => EMPTY));
    // The stream first, then the first read: a change between the two is seen by one or the other.
    const checks$ = merge(
      events$.pipe(
        filter((concerns) => concerns),
        catchError(() => EMPTY),
      ),
      of(true),
      interval(pollMs, scheduler),
    );
    const over$ = checks$.pipe(readCoalesced(tryRead), filter(isOver), take(1), map(done));
    // The server ended the stream (it is shutting down): the want may still have finished just before.
    const streamEnd$ = concat(
      events$.pipe(ignoreElements()),
      defer(() => tryRead().pipe(map((w) => (isOver(w) ? done(w) : STREAM_ENDED)), endWith(STREAM_ENDED), take(1))),
    ).pipe(catchError((error: unknown) => of({ kind: 'error' as const, error })));
    return race(over$, streamEnd$);
  });

  const interrupted$ = merge(sources.sigint$, NEVER).pipe(take(1), map(() => INTERRUPTED));
  const followed$ = concat(catchUp$, following$).pipe(catchError((error: unknown) => of({ kind: 'error' as const, error })));
  return race(interrupted$, followed$).pipe(take(1));
}
