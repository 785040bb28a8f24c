/**
 * `state$`: the log replayed once at open, then `scan(reduce)` over every appended event, cached with
 * `shareReplay(1)` so no read ever rebuilds it. `current()` is the latest value for synchronous readers.
 */
import { BehaviorSubject, type Observable, type Subscription, scan, shareReplay, startWith } from 'rxjs';
import type { EventLog } from '../events/event-log.js';
import { initialState, type BuildState } from './build-state.js';
import { reduce } from './reduce.js';

export class StateStore {
  private readonly latest: BehaviorSubject<BuildState>;
  private readonly subscription: Subscription;
  readonly state$: Observable<BuildState>;

  private constructor(log: EventLog, replayed: BuildState) {
    this.latest = new BehaviorSubject(replayed);
    this.state$ = log.appended$.pipe(scan(reduce, replayed), startWith(replayed), shareReplay(1));
    // Held for the store's life, so the fold runs as events arrive, not on each reader's subscription.
    this.subscription = this.state$.subscribe(this.latest);
  }

  static async open(log: EventLog): Promise<StateStore> {
    return new StateStore(log, await replayLog(log));
  }

  current(): BuildState {
    return this.latest.getValue();
  }

  close(): void {
    this.subscription.unsubscribe();
    this.latest.complete();
  }
}

/** Folds the whole log from the first event; reads only, never writes. */
export async function replayLog(log: EventLog): Promise<BuildState> {
  let state = initialState();
  for await (const batch of log.replay()) for (const event of batch) state = reduce(state, event);
  return state;
}
