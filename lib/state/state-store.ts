/**
 * `state$`: the log replayed once at open, then `scan(reduce)` over every appended event, cached with
 * `shareReplay(1)` so no read ever rebuilds it. `current()` is the latest value for synchronous readers. Besides
 * events, two edits change it: a compaction's prune, and after each snapshot the equal state the image holds.
 */
import { BehaviorSubject, type Observable, Subject, type Subscription, debounceTime, filter, map, merge, scan, shareReplay, startWith } from 'rxjs';
import { rm } from 'node:fs/promises';
import { setImmediate as yieldToLoop, setTimeout as sleep } from 'node:timers/promises';
import type { BuildEvent, EventPayload } from '../events/build-event.js';

import { pruneSteps, type PruneCounts } from './prune-history.js';
import type { EventLog } from '../events/event-log.js';
import { initialState, type BuildState } from './build-state.js';
import { StartStopped, type StartProgress, type StoreStart } from './store-start.js';
import { reduce } from './reduce.js';
import { ImageCarry } from './image-carry.js';
import { SharePacer, frameBudgetMs } from './frame-budget.js';
import { stateOfImage } from './state-image.js';
import { SNAPSHOT_FORMATS_READ, fromSnapshot } from './snapshot.js';
import {
  deltaPathOf,
  headerMisfit,
  readCompactionBase,
  readSnapshotHeader,
  readSnapshotOrWhy,
  removeSnapshotLeftovers,
  stateCodeFingerprint,
  writeDelta,
  writeRecords,
  writeSnapshot,
  type LogProbe,
  type SnapshotReadPhase,
  type SnapshotReadProgress,
} from './snapshot-file.js';
import { deltaBaseOf, type DeltaBase } from './state-delta.js';

/** An event's own payload object (the planner's and the log's event share it). */
const payloadOf = (e: EventPayload | BuildEvent): unknown => (e as unknown as Record<string, unknown>)[e.type];

/**
 * `state` with `events[from..to)` folded on: those it already has skipped, the others each the one after the last,
 * or undefined at a gap (a listener that started in the middle of a batch emitted at once did not hear its first
 * events: the state planned for a batch stays the batch's base until its last event).
 */
function foldFollowing(state: BuildState, events: readonly BuildEvent[], from: number, to: number): BuildState | undefined {
  let folded = state;
  for (let i = from; i < to && i < events.length; i++) {
    const event = events[i]!;
    if (event.event_id <= folded.last_event_id) continue;
    if (event.event_id !== folded.last_event_id + 1) return undefined;
    folded = reduce(folded, event);
  }
  return folded;
}

/** Room for a replayed event's share of the first image's records (219 bytes an event at a million events). */
const RESERVED_BYTES_AN_EVENT = 256;

/**
 * The events folded again onto the state a snapshot holds: a turn of the loop folds them for the frame's budget
 * (frame-budget.ts), checking the time every CATCH_UP_STRIDE; the last CATCH_UP_TAIL (~1 ms of reduce) in the edit
 * that puts the state in place.
 */
const CATCH_UP_STRIDE = 25;
const CATCH_UP_TAIL = 100;

/** Below this many events since the last snapshot, replaying them is cheaper than writing a new one. */
export const SNAPSHOT_MIN_NEW_EVENTS = 1000;

/**
 * A snapshot is taken in the background once this many events came since the last one, so a restart after a crash
 * replays at most about this many (a second or so) however long the log is.
 */
export const SNAPSHOT_EVERY_EVENTS = 100_000;

/**
 * Between two images, a delta of what changed since the last image (state-delta.ts) is written every this share of
 * the image's interval: a restart after a crash replays at most a quarter as many events, and a delta costs the
 * changes, not the state.
 */
export const DELTAS_AN_IMAGE = 4;

/**
 * A start that replayed this many events or more writes a snapshot right away, in the background: otherwise every
 * restart after a crash would replay them again until SNAPSHOT_EVERY_EVENTS more came (a first start after an
 * upgrade of 60,000 events: ~1.5 s each time).
 */
export const SNAPSHOT_AFTER_REPLAY_EVENTS = 10_000;

/**
 * Once the log took no append for this long, a snapshot is taken if SNAPSHOT_WHEN_QUIET_EVENTS or more events came
 * since the last one: a crash after a burst then replays nothing of it. Under a steady load the log is never quiet and
 * SNAPSHOT_EVERY_EVENTS alone applies (a restart at the worst moment replays up to that many: docs/decisions.md).
 */
export const SNAPSHOT_WHEN_QUIET_MS = 2_000;
export const SNAPSHOT_WHEN_QUIET_EVENTS = SNAPSHOT_AFTER_REPLAY_EVENTS;

/** When the background takes a snapshot: every so many events, and after a pause of the log with fewer. */
interface SnapshotCadence {
  readonly everyEvents: number;
  readonly quietMs: number;
  readonly quietEvents: number;
}

export type { StoreStart } from './store-start.js';

export class StateStore {
  private opened: StoreStart = { source: 'log', at_event: 0, events_replayed: 0, duration_ms: 0, snapshot_unused: 'missing', snapshot_delta: null, snapshot_other_version: false };
  private readonly latest: BehaviorSubject<BuildState>;
  private readonly subscription: Subscription;
  private readonly background: Subscription | undefined;
  /** Changes to the state that are not events: only the prune of a compaction (the log and its base agree on it). */
  private readonly edits = new Subject<(state: BuildState) => BuildState>();
  private written = 0;
  private expected: { base: BuildState; result: BuildState; events: readonly EventPayload[]; skipped: number } | undefined;
  /** The snapshot being written, if any: one at a time. */
  private writing: Promise<boolean> | undefined;
  /** How many edits other than events (prunes) changed the state. */
  private edited = 0;
  /** close() was called: a snapshot a pause asked for and still waiting its turn is not written. */
  private closed = false;
  /** The log was closed (its writes$ completed): nothing after it is a pause. */
  private logEnded = false;
  private imagedTaken = 0;
  /** The image on disk that deltas are written against, as its state was when the store took it (none: the next snapshot is an image). */
  private deltaBase: DeltaBase | undefined;
  private deltas = 0;
  /** Events between two images (a delta is due every DELTAS_AN_IMAGE-th of it). */
  private readonly imageEvery: number;
  /** When the log last took an append: a background snapshot's frames are sized by it (frame-budget.ts). */
  private lastAppend = -Infinity;
  private readonly appends: Subscription;
  private readonly frameBudget = (): number => frameBudgetMs(performance.now() - this.lastAppend);
  /** The rests of one write's frames (frame-budget.ts `SharePacer`): a new pacer a write. */
  private frameRests(): (workedMs: number) => number {
    const pacer = new SharePacer();
    return (workedMs) => pacer.rest(workedMs, performance.now() - this.lastAppend, performance.now());
  }
  readonly state$: Observable<BuildState>;

  private constructor(
    private readonly log: EventLog,
    /** What the last snapshot hands on to the next (image-carry.ts). */
    private readonly carry: ImageCarry,
    replayed: BuildState,
    private snapshotEventId: number,
    private readonly logProbe: LogProbe,
    autoSnapshot: ({ path: string } & SnapshotCadence) | undefined,
    onSnapshotError: (err: unknown) => void,
    deltaBase: DeltaBase | undefined,
  ) {
    this.deltaBase = deltaBase;
    this.imageEvery = autoSnapshot?.everyEvents ?? SNAPSHOT_EVERY_EVENTS;
    this.latest = new BehaviorSubject(replayed);
    const folds$ = log.appended$.pipe(map((event) => (state: BuildState) => this.fold(state, event)));
    this.state$ = merge(folds$, this.edits).pipe(
      scan((state, change) => change(state), replayed),
      startWith(replayed),
      shareReplay(1),
    );
    // Subscribed before the pause's debounce below, so the log's end is noted before the debounce hears it.
    this.appends = log.writes$.subscribe({ next: () => (this.lastAppend = performance.now()), complete: () => (this.logEnded = true) });
    // The state ends with the log, as it did when it was the fold of the log alone.
    log.appended$.subscribe({ complete: () => this.edits.complete() });
    // Held for the store's life, so the fold runs as events arrive, not on each reader's subscription.
    this.subscription = this.state$.subscribe(this.latest);
    if (autoSnapshot) {
      const { path, quietMs, quietEvents } = autoSnapshot;
      const since = (s: BuildState) => s.last_event_id - this.snapshotEventId;
      // Passed over while a write is under way: the next event asks again.
      const due$ = this.state$.pipe(filter((s) => this.writing === undefined && since(s) >= this.dueEvery()));
      this.background = due$.subscribe(() => void this.saveSnapshot(path, this.dueEvery()).catch(onSnapshotError));
      // A pause is heard from the writes (a batch each), not from the state's every event. It is heard once, so a
      // write under way when it comes (the every-N one a burst started, the one after a long replay) is waited for,
      // not a reason to drop it: saveSnapshot waits its turn and counts the events since the snapshot just written.
      const least = (): number => Math.min(quietEvents, this.dueEvery());
      // debounceTime hands on what it holds when the log completes: that is the log's close, not a pause.
      const quiet$ = log.writes$.pipe(
        debounceTime(quietMs),
        filter(() => !this.logEnded && since(this.current()) >= least()),
      );
      this.background.add(quiet$.subscribe(() => void this.snapshotAfterPause(path, least()).catch(onSnapshotError)));
    }
  }

  /**
   * The next events appended, right after `base`, are `events` (the very payloads) and fold to `result`: the planner
   * has folded them already (same ids, same timestamp), so the fold takes its result instead of reducing each event
   * again. Taken only for those payloads, emitted one after the other from `base`: anything else (a prune's edit,
   * events of an earlier failed batch emitted by a reopen) and the events are reduced. `expectFold()` with nothing
   * withdraws it (the append failed, or is done).
   */
  expectFold(base?: BuildState, result?: BuildState, events: readonly EventPayload[] = []): void {
    this.expected = base && result && events.length > 0 ? { base, result, events, skipped: 0 } : undefined;
  }

  private fold(state: BuildState, event: BuildEvent): BuildState {
    const x = this.expected;
    if (x) {
      const i = event.event_id - x.base.last_event_id - 1;
      const planned = x.events[i];
      const same = state === x.base && i === x.skipped && planned !== undefined && planned.type === event.type && payloadOf(planned) === payloadOf(event);
      if (same && i < x.events.length - 1) {
        // The state stays `base` through the batch; its last event brings the planned result.
        x.skipped++;
        return state;
      }
      this.expected = undefined;
      if (same) return x.result;
      // Not the planned batch after all: what was passed over is folded now, then this event.
      let caught = state;
      for (let k = 0; k < x.skipped; k++) caught = reduce(caught, { ...x.events[k]!, event_id: x.base.last_event_id + 1 + k, timestamp: event.timestamp } as BuildEvent);
      return reduce(caught, event);
    }
    return reduce(state, event);
  }

  /**
   * Replays the log into state: from the snapshot at `snapshotPath` when there is a valid one (then only the
   * events after it are read), else from the compaction base at `compactionBasePath` when the log was compacted,
   * else from the first event. A compacted log without a usable base is refused, naming both files: starting from
   * nothing would silently lose the state the removed events made.
   */
  static async open(
    log: EventLog,
    snapshotPath?: string,
    options: {
      snapshotEveryEvents?: number;
      /** After a pause of the log this long (default SNAPSHOT_WHEN_QUIET_MS), a snapshot of this many events or more (SNAPSHOT_WHEN_QUIET_EVENTS). */
      snapshotWhenQuiet?: { ms: number; events: number };
      onSnapshotError?: (err: unknown) => void;
      compactionBasePath?: string;
      /** After each batch of the log replayed at open: a replay of a long log takes a while, and is shown. Throwing StartStopped ends the open. */
      onReplay?: (progress: StartProgress) => void;
      /** How long a read of the snapshot goes before `onReplay` is told how far it got (default 1 s). */
      snapshotNewsAfterMs?: number;
    } = {},
  ): Promise<StateStore> {
    const began = performance.now();
    if (snapshotPath) await removeSnapshotLeftovers(snapshotPath);
    if (options.compactionBasePath) await removeSnapshotLeftovers(options.compactionBasePath);
    // A snapshot that does not hold together is only a lost shortcut (undefined): the log is replayed.
    // The carry takes on the image it starts from: the first snapshot after a start copies what did not change.
    const carry = new ImageCarry();
    // The read said once it has gone on a while (a start that reads its state and goes says nothing), then at most
    // every 250 ms (as the replay is).
    let toldAt = performance.now() + (options.snapshotNewsAfterMs ?? 1000) - 250;
    // The file's size, once read: the phases after it count records and slices, and say it still.
    let size = 0;
    const onRead = options.onReplay
      ? (done: number, total: number, phase: SnapshotReadPhase): void => {
          if (phase === 'read' || phase === 'decode') size = total;
          const now = performance.now();
          if (now - toldAt < 250) return;
          toldAt = now;
          try {
            options.onReplay?.({ events_replayed: 0, events_to_replay: 0, snapshot_unused: null, ...snapshotReadNews(done, total, phase, size) });
          } catch (err) {
            if (err instanceof StartStopped) throw err;
          }
        }
      : undefined;
    const read = snapshotPath ? await readSnapshotOrWhy(snapshotPath, stateCodeFingerprint(), logProbe(log), carry, onRead) : { why: 'missing' };
    const snapshot = read.state;
    let start = snapshot;
    let source: StoreStart['source'] = snapshot ? 'snapshot' : 'log';
    if (!start && log.firstId() > 1) {
      start = await compactionBase(log, options.compactionBasePath, onRead);
      source = 'compaction_base';
    }
    start ??= initialState();
    const every = options.snapshotEveryEvents ?? 0;
    const quiet = options.snapshotWhenQuiet ?? { ms: SNAPSHOT_WHEN_QUIET_MS, events: SNAPSHOT_WHEN_QUIET_EVENTS };
    const auto = snapshotPath && every > 0 ? { path: snapshotPath, everyEvents: every, quietMs: quiet.ms, quietEvents: quiet.events } : undefined;
    const onError = options.onSnapshotError ?? (() => undefined);
    // The snapshot after a long replay keeps its records' bytes while the fold is still live: room for them is set
    // aside before the fold grows (byte-arena.ts).
    const toReplay = log.latestId() - start.last_event_id;
    if (auto && toReplay >= SNAPSHOT_AFTER_REPLAY_EVENTS) carry.reserve(Math.min(toReplay * RESERVED_BYTES_AN_EVENT, 2 ** 31));
    const snapshot_unused = read.why ?? null;
    const onReplay = options.onReplay;
    const replayed = await replayLog(
      log,
      start,
      onReplay &&
        ((done) => {
          // News of the start, not part of it: a callback that throws does not stop the replay (nor reads as a bad log),
          // unless it says to stop the start (StartStopped).
          try {
            onReplay({ events_replayed: done, events_to_replay: toReplay, snapshot_unused });
          } catch (err) {
            if (err instanceof StartStopped) throw err;
          }
        }),
    );
    const deltaBase = read.image && read.imageId ? deltaBaseOf(read.image, read.imageId) : undefined;
    const store = new StateStore(log, carry, replayed, start.last_event_id, logProbe(log), auto, onError, deltaBase);
    const delta = read.delta;
    store.opened = {
      source,
      at_event: start.last_event_id,
      events_replayed: replayed.last_event_id - start.last_event_id,
      duration_ms: Math.round(performance.now() - began),
      snapshot_unused,
      snapshot_delta: read.image && delta ? { image_at_event: read.image.last_event_id, at_event: delta.at_event ?? null, unused: delta.unused ?? null } : null,
      snapshot_other_version: read.otherVersion === true,
    };
    // The records of another version's image served this start; an image of this code serves the next, and deltas.
    if (auto && read.otherVersion) void store.saveSnapshot(auto.path, 0, { image: true }).catch(onError);
    else if (auto && replayed.last_event_id - start.last_event_id >= SNAPSHOT_AFTER_REPLAY_EVENTS) {
      void store.saveSnapshot(auto.path).catch(onError);
    }
    // Started from the snapshot on a compacted log whose base is gone or behind: the state is right, but the next
    // start that cannot use the snapshot (an upgrade) would be refused. A new base is written at once.
    const basePath = options.compactionBasePath;
    if (snapshot && basePath && log.firstId() > 1 && !(await baseCoversLog(basePath, log))) {
      void store.writeCompactionBase(basePath).catch(onError);
    }
    return store;
  }

  /**
   * Writes the current state as the snapshot, if enough events came since the one it started from. One write at a
   * time: a call while one is under way waits for it first, then decides on the state of that moment. It is a delta
   * of the image the store holds (state-delta.ts) until an image is due: SNAPSHOT_EVERY_EVENTS since it (half as many
   * when `quiet`, a pause of the log), or `image`. `last`: the store is closed right after, so the state the image
   * holds does not take the fold's place.
   */
  async saveSnapshot(snapshotPath: string, minNewEvents = SNAPSHOT_MIN_NEW_EVENTS, options: { last?: boolean; image?: boolean; quiet?: boolean } = {}): Promise<boolean> {
    const written = await this.writeExclusive(async (state) => {
      if (state.last_event_id - this.snapshotEventId < minNewEvents) return false;
      const base = this.deltaBase;
      const sinceImage = base ? state.last_event_id - base.last_event_id : Infinity;
      // A pause of the log costs an image nothing that steps would feel: one past half the interval is taken then,
      // so the delta a start loads (its records decoded, where an image's stay encoded) stays small.
      const imageDue = sinceImage >= (options.quiet ? this.imageEvery / 2 : this.imageEvery);
      if (base && !options.image && !imageDue) {
        await writeDelta(snapshotPath, stateCodeFingerprint(), state, await this.timestampOf(state), base, this.frameBudget, this.frameRests());
        this.snapshotEventId = Math.max(this.snapshotEventId, state.last_event_id);
        this.deltas++;
        return true;
      }
      // The events folded while the image is written are folded again onto the state it holds.
      return this.withEventsMeanwhile(async (since) => {
        const editsBefore = this.edited;
        try {
          // Cleared first: an image may be renamed in place and its write still fail after (the directory's fsync),
          // and deltas of the image before would then name one no longer on disk. Until the store takes this image's
          // state, the next snapshot is an image.
          this.deltaBase = undefined;
          // One share of the loop for the image and its catch-up after (`takeImaged`): both are the snapshot's work.
          const rests = this.frameRests();
          const imageId = await writeSnapshot(snapshotPath, stateCodeFingerprint(), state, await this.timestampOf(state), this.carry, this.frameBudget, rests);
          // The delta beside the image before is of no use with this one (it names the other).
          await rm(deltaPathOf(snapshotPath), { force: true });
          this.snapshotEventId = Math.max(this.snapshotEventId, state.last_event_id);
          this.written++;
          // The last before a close: the state the image holds would not serve a single read.
          const imaged = options.last ? undefined : stateOfImage(state, this.carry);
          const nextBase = imaged && deltaBaseOf(imaged, imageId);
          if (!imaged || !(await this.takeImaged(imaged, since, editsBefore, rests))) this.carry.forget();
          // Deltas are written against the image only when the store holds its maps: else a delta would be the state.
          else this.deltaBase = nextBase;
          return true;
        } catch (err) {
          this.carry.forget();
          throw err;
        }
      });
    });
    return written;
  }

  /** The snapshot a pause of the log asks for, after the write under way if any, unless the store was closed meanwhile. */
  private async snapshotAfterPause(path: string, least: number): Promise<boolean> {
    await this.idle();
    return this.closed ? false : this.saveSnapshot(path, least, { quiet: true });
  }

  /**
   * Puts the state an image holds (`imaged`: records still encoded, as a restart loads them) in place of the fold
   * it equals, with the events folded since (`since`, still growing) folded onto it: a store's memory after a
   * snapshot is a restart's, not the fold's objects (908 against ~500 MiB at a million events), and the next image
   * copies every record that did not change. The events are folded a slice a turn of the loop, the last few in the
   * edit itself; a prune meanwhile (`editsBefore`) keeps the fold as it is. Resolves with whether it was taken.
   */
  private async takeImaged(imaged: BuildState, since: readonly BuildEvent[], editsBefore: number, rests: (workedMs: number) => number): Promise<boolean> {
    let caught: BuildState | undefined = imaged;
    let i = 0;
    while (caught && since.length - i > CATCH_UP_TAIL) {
      const began = performance.now();
      const until = began + this.frameBudget();
      do {
        caught = foldFollowing(caught, since, i, i + CATCH_UP_STRIDE);
        i += CATCH_UP_STRIDE;
      } while (caught && since.length - i > CATCH_UP_TAIL && performance.now() < until);
      // Paced as the image's frames were: back to back, the catch-up of a busy log's events held half the loop.
      const restMs = rests(performance.now() - began);
      await (restMs > 0 ? sleep(restMs) : yieldToLoop());
    }
    let taken = false;
    this.edits.next((current) => {
      const next = caught && foldFollowing(caught, since, i, since.length);
      // Never lose an event: out of step with the fold (a prune came between, an event not heard), the fold stays.
      if (!next || this.edited !== editsBefore || next.last_event_id !== current.last_event_id) return current;
      this.imagedTaken++;
      taken = true;
      return next;
    });
    return taken;
  }

  /**
   * Writes the current state durably as the base of a compacted log (any program version of this record format
   * reads it), removing the snapshot `supersedes` first, and resolves with the id of the last event it covers:
   * events up to that id may then be removed.
   */
  async writeCompactionBase(path: string, supersedes?: string): Promise<number> {
    return this.writeExclusive(async (state) => {
      // The snapshot may hold history a prune just dropped: gone before the base, under the same lock, so no start
      // ever prefers it to the base (and no writer puts it back meanwhile).
      if (supersedes) await rm(supersedes, { force: true });
      if (supersedes) await rm(deltaPathOf(supersedes), { force: true });
      if (supersedes) this.deltaBase = undefined;
      await writeRecords(path, stateCodeFingerprint() || 'unversioned', state, await this.timestampOf(state), this.frameBudget, this.frameRests());
      return state.last_event_id;
    });
  }

  /**
   * Drops the history that ended before `cutoff` and nothing current needs (prune-history.ts), in line with the
   * fold: the events folded before are in it, those after fold onto the pruned state. Only a compaction does this,
   * right before it writes the base a restart reads, so memory and restart agree.
   */
  async prune(cutoff: number): Promise<{ counts: PruneCounts; jobRunIds: string[] }> {
    // The events folded while the prune runs between turns of the loop are folded again onto its result.
    return this.withEventsMeanwhile(async (since) => {
      const base = this.current();
      const result = await runSliced(pruneSteps(base, cutoff));
      if (result.state === base) return { counts: result.pruned, jobRunIds: [] };
      let applied = false;
      this.edits.next((current) => {
        const next = foldFollowing(result.state, since, 0, since.length);
        // Never lose an event: were the two out of step (they cannot be), keep the unpruned state.
        if (!next || next.last_event_id !== current.last_event_id) return current;
        applied = true;
        this.edited++;
        return next;
      });
      return applied ? { counts: result.pruned, jobRunIds: result.prunedJobRunIds } : { counts: { wants: 0, job_runs: 0, builds: 0 }, jobRunIds: [] };
    });
  }

  /** Runs `work` with the events appended while it runs (a list that grows as they come), heard until it ends. */
  private async withEventsMeanwhile<T>(work: (since: readonly BuildEvent[]) => Promise<T>): Promise<T> {
    const since: BuildEvent[] = [];
    const listening = this.log.appended$.subscribe((event) => since.push(event));
    try {
      return await work(since);
    } finally {
      listening.unsubscribe();
    }
  }

  /** What a prune at `cutoff` would drop, computed between turns of the loop; changes nothing. */
  async prunable(cutoff: number): Promise<PruneCounts> {
    return (await runSliced(pruneSteps(this.current(), cutoff, true))).pruned;
  }

  private async timestampOf(state: BuildState): Promise<number> {
    return state.last_event_id === 0 ? 0 : ((await this.logProbe.timestampOf(state.last_event_id)) ?? 0);
  }

  /** One snapshot write at a time: a call while one is under way waits for it, then runs on the state of then. */
  private async writeExclusive<T>(write: (state: BuildState) => Promise<T>): Promise<T> {
    // Inline, not `await this.idle()`: with no write under way it must not yield before `this.writing` is set.
    while (this.writing) await this.writing.catch(() => false);
    // Set before the first await, so the background trigger (which checks it) never starts a second writer.
    const writing = write(this.current());
    const settled = writing.then(
      () => true,
      () => false,
    );
    this.writing = settled;
    try {
      return await writing;
    } finally {
      if (this.writing === settled) this.writing = undefined;
    }
  }

  /** Of the last snapshot's image: records and sets packed and copied, entries copied as ranges (image-carry.ts). */
  get imageCounts(): Readonly<{ packed: number; copied: number; ranged: number }> {
    return { ...this.carry.counts };
  }

  /** How many times the state an image holds took the place of the fold (after a snapshot). */
  get imagedStates(): number {
    return this.imagedTaken;
  }

  /** How the state was read at open (said in server.log, /metrics and `/api/status`: a snapshot that was not used costs a replay). */
  get start(): Readonly<StoreStart> {
    return this.opened;
  }

  /** How many snapshots (images) this store wrote. */
  get snapshotsWritten(): number {
    return this.written;
  }

  /** How many deltas of the image this store wrote. */
  get deltasWritten(): number {
    return this.deltas;
  }

  /** Events after the last snapshot at which the next is due in the background: a delta's share, or an image's. */
  private dueEvery(): number {
    return this.deltaBase ? Math.max(1, Math.ceil(this.imageEvery / DELTAS_AN_IMAGE)) : this.imageEvery;
  }

  /** A snapshot is being written now (in the background, or by a close or a gc). */
  get writingSnapshot(): boolean {
    return this.writing !== undefined;
  }

  /** Resolves once no snapshot is being written (the one under way, if any, finished or failed). */
  async idle(): Promise<void> {
    while (this.writing) await this.writing.catch(() => false);
  }

  current(): BuildState {
    return this.latest.getValue();
  }

  close(): void {
    this.closed = true;
    this.background?.unsubscribe();
    this.appends.unsubscribe();
    this.subscription.unsubscribe();
    this.latest.complete();
  }
}

/** A start's news of its snapshot read (StartProgress's `snapshot_*`), from how far `phase` got of the file of `size` bytes. */
function snapshotReadNews(done: number, total: number, phase: SnapshotReadPhase, size: number): Partial<StartProgress> {
  switch (phase) {
    case 'read':
      return { snapshot_bytes: size, snapshot_bytes_read: done, snapshot_bytes_decoded: 0 };
    case 'decode':
      return { snapshot_bytes: size, snapshot_bytes_read: size, snapshot_bytes_decoded: done };
    case 'records':
      return { snapshot_bytes: size, snapshot_bytes_read: size, snapshot_bytes_decoded: size, snapshot_records_read: done, snapshot_records: total };
    case 'indexes':
      return { snapshot_bytes: size, snapshot_bytes_read: size, snapshot_bytes_decoded: size, snapshot_indexes_built: done, snapshot_indexes: total };
  }
}

/** Folds the log's events after `start` onto it (by default, the whole log); reads only, never writes. */
export async function replayLog(log: EventLog, start: BuildState = initialState(), onBatch?: (eventsDone: number) => void): Promise<BuildState> {
  let state = start;
  for await (const batch of log.replay(start.last_event_id + 1)) {
    for (const event of batch) state = reduce(state, event);
    onBatch?.(state.last_event_id - start.last_event_id);
  }
  return state;
}

export function logProbe(log: EventLog): LogProbe {
  return { latestId: () => log.latestId(), firstId: () => log.firstId(), timestampOf: async (id) => (await log.get(id))?.timestamp };
}

/** The base's header says it can start the log (the rest of the file is read when it has to). */
async function baseCoversLog(path: string, log: EventLog): Promise<boolean> {
  const header = await readSnapshotHeader(path);
  return header !== undefined && headerMisfit(header, log, SNAPSHOT_FORMATS_READ) === '';
}

/** The state a compacted log starts from; throws, naming the files and what to do, when there is none to use. */
async function compactionBase(log: EventLog, path: string | undefined, onRead: SnapshotReadProgress | undefined): Promise<BuildState> {
  const { snapshot, why } = path ? await readCompactionBase(path, logProbe(log), onRead) : { snapshot: undefined, why: 'not given' };
  if (snapshot) {
    try {
      return fromSnapshot(snapshot, onRead && ((done, total) => onRead(done, total, 'indexes')));
    } catch (err) {
      if (err instanceof StartStopped) throw err;
      throw compactedWithoutBase(log, path, `damaged: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  throw compactedWithoutBase(log, path, why);
}

function compactedWithoutBase(log: EventLog, path: string | undefined, why: string): Error {
  return new Error(
    `the event log starts at event ${log.firstId()} (the events before it were compacted by retention.events_keep), ` +
      `but the state they made, kept in ${path ?? 'the compaction base'}, is ${why}; restore .platform/ from a backup ` +
      `(the event log and compacted.bin together); run platform doctor`,
  );
}

/** Runs a sliced computation, letting the event loop run between its slices. */
async function runSliced<T>(steps: Generator<void, T, void>): Promise<T> {
  for (;;) {
    const next = steps.next();
    if (next.done) return next.value;
    await yieldToLoop();
  }
}
