/**
 * `state$`: the log replayed once at open, then `scan(reduce)` over every appended event, cached with
 * `shareReplay(1)` so no read ever rebuilds it. `current()` is the latest value for synchronous readers.
 */
import { BehaviorSubject, type Observable, type Subscription, filter, scan, shareReplay, startWith } from 'rxjs';
import type { EventLog } from '../events/event-log.js';
import { initialState, type BuildState } from './build-state.js';
import { reduce } from './reduce.js';
import { fromSnapshot } from './snapshot.js';
import { readSnapshot, removeSnapshotLeftovers, stateCodeFingerprint, writeSnapshot, type LogProbe } from './snapshot-file.js';

/** Below this many events since the last snapshot, replaying them is cheaper than writing a new one. */
export const SNAPSHOT_MIN_NEW_EVENTS = 1000;

/**
 * A snapshot is taken in the background once this many events came since the last one, so a restart after a crash
 * replays at most about this many (a second or so) however long the log is.
 */
export const SNAPSHOT_EVERY_EVENTS = 100_000;

export class StateStore {
  private readonly latest: BehaviorSubject<BuildState>;
  private readonly subscription: Subscription;
  private readonly background: Subscription | undefined;
  private written = 0;
  /** The snapshot being written, if any: one at a time. */
  private writing: Promise<boolean> | undefined;
  readonly state$: Observable<BuildState>;

  private constructor(
    log: EventLog,
    replayed: BuildState,
    private snapshotEventId: number,
    private readonly logProbe: LogProbe,
    autoSnapshot: { path: string; everyEvents: number } | undefined,
    onSnapshotError: (err: unknown) => void,
  ) {
    this.latest = new BehaviorSubject(replayed);
    this.state$ = log.appended$.pipe(scan(reduce, replayed), startWith(replayed), shareReplay(1));
    // Held for the store's life, so the fold runs as events arrive, not on each reader's subscription.
    this.subscription = this.state$.subscribe(this.latest);
    if (autoSnapshot) {
      const { path, everyEvents } = autoSnapshot;
      this.background = this.state$
        .pipe(filter((s) => this.writing === undefined && s.last_event_id - this.snapshotEventId >= everyEvents))
        .subscribe(() => void this.saveSnapshot(path, everyEvents).catch(onSnapshotError));
    }
  }

  /**
   * Replays the log into state: from the snapshot at `snapshotPath` when there is a valid one (then only the
   * events after it are read), else from the first event.
   */
  static async open(
    log: EventLog,
    snapshotPath?: string,
    options: { snapshotEveryEvents?: number; onSnapshotError?: (err: unknown) => void } = {},
  ): Promise<StateStore> {
    if (snapshotPath) await removeSnapshotLeftovers(snapshotPath);
    const snapshot = snapshotPath ? await readSnapshot(snapshotPath, stateCodeFingerprint(), probe(log)) : undefined;
    let start = initialState();
    if (snapshot) {
      try {
        start = fromSnapshot(snapshot);
      } catch {
        // A snapshot that parses but does not hold together is only a lost shortcut: replay the log.
        start = initialState();
      }
    }
    const every = options.snapshotEveryEvents ?? 0;
    const auto = snapshotPath && every > 0 ? { path: snapshotPath, everyEvents: every } : undefined;
    return new StateStore(log, await replayLog(log, start), start.last_event_id, probe(log), auto, options.onSnapshotError ?? (() => undefined));
  }

  /**
   * Writes the current state as the snapshot, if enough events came since the one it started from. One write at a
   * time: a call while one is under way waits for it first, then decides on the state of that moment.
   */
  async saveSnapshot(snapshotPath: string, minNewEvents = SNAPSHOT_MIN_NEW_EVENTS): Promise<boolean> {
    while (this.writing) await this.writing.catch(() => false);
    const state = this.current();
    if (state.last_event_id - this.snapshotEventId < minNewEvents) return false;
    // Set before the first await, so the background trigger (which checks it) never starts a second writer.
    const writing = (async () => {
      const timestamp = (await this.logProbe.timestampOf(state.last_event_id)) ?? 0;
      await writeSnapshot(snapshotPath, stateCodeFingerprint(), state, timestamp);
      this.snapshotEventId = Math.max(this.snapshotEventId, state.last_event_id);
      this.written++;
      return true;
    })();
    this.writing = writing;
    try {
      return await writing;
    } finally {
      if (this.writing === writing) this.writing = undefined;
    }
  }

  /** How many snapshots this store wrote. */
  get snapshotsWritten(): number {
    return this.written;
  }

  /** Resolves once no snapshot is being written (the one under way, if any, finished or failed). */
  async idle(): Promise<void> {
    while (this.writing) await this.writing.catch(() => false);
  }

  current(): BuildState {
    return this.latest.getValue();
  }

  close(): void {
    this.background?.unsubscribe();
    this.subscription.unsubscribe();
    this.latest.complete();
  }
}

/** Folds the log's events after `start` onto it (by default, the whole log); reads only, never writes. */
export async function replayLog(log: EventLog, start: BuildState = initialState()): Promise<BuildState> {
  let state = start;
  for await (const batch of log.replay(start.last_event_id + 1)) for (const event of batch) state = reduce(state, event);
  return state;
}

function probe(log: EventLog): LogProbe {
  return { latestId: () => log.latestId(), timestampOf: async (id) => (await log.get(id))?.timestamp };
}
