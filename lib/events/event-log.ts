/**
 * The build event log (BEL): events stored in LevelDB (classic-level) under 8-byte big-endian u64 keys equal to
 * their event_id, values encoded `platform.v1.BuildEvent` bytes. Ids are dense from 1. Only one writer (the
 * orchestrator) appends; appends are serialized, each one is a single batch written with `sync: true`.
 * Compaction (`retention.events_keep`) removes a prefix once a state snapshot covers it: ids then run densely from
 * `firstId()`, and asking for an id below it throws `EventsCompactedError`.
 */
import { mkdir, realpath } from 'node:fs/promises';
import { ClassicLevel } from 'classic-level';
import { Observable, Subject } from 'rxjs';
import type { BuildEvent, EventPayload } from './build-event.js';
import { decodeEvent, encodeEvent, warmEventCodec } from './event-codec.js';
import { EventsCompactedError } from './events-compacted-error.js';

type Db = ClassicLevel<Uint8Array, Uint8Array>;

/**
 * The logs open in this process, by real path. LevelDB's own refusal of a second open in one process closes the
 * LOCK file it opened to find out, and closing any descriptor of a file drops the process's POSIX lock on it: the
 * first open's lock was gone, and another process could then open the same log and write over it. So a second open
 * here is refused before LevelDB is asked.
 */
const openHere = new Set<string>();

const TWO_32 = 0x1_0000_0000;
const DEFAULT_REPLAY_BATCH = 1000;

/** The 8-byte big-endian key of an event id. */
export function eventKey(id: number): Uint8Array {
  const key = new Uint8Array(8);
  const view = new DataView(key.buffer);
  view.setUint32(0, Math.floor(id / TWO_32));
  view.setUint32(4, id >>> 0);
  return key;
}

/** The event id of an 8-byte big-endian key. */
export function eventIdOfKey(key: Uint8Array): number {
  if (key.length !== 8) throw new Error(`event log key of ${key.length} bytes, expected 8`);
  const view = new DataView(key.buffer, key.byteOffset, 8);
  const id = view.getUint32(0) * TWO_32 + view.getUint32(4);
  if (!Number.isSafeInteger(id)) throw new Error(`event log key ${id} is beyond the safe integer range`);
  return id;
}

function checkInteger(name: string, value: unknown, min: number): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) {
    throw new RangeError(`${name} must be an integer, got ${String(value)}`);
  }
  if (value < min) throw new RangeError(`${name} must be >= ${min}, got ${value}`);
  return value;
}

export class EventLog {
  /** Hot: each appended event, in id order, once its batch is durably written (before append() resolves). */
  readonly appended$: Observable<BuildEvent>;
  /** Hot: each batch written, with how long LevelDB took (a synced one: the fsync latency). */
  readonly writes$: Observable<{ seconds: number; events: number; synced: boolean }>;
  private readonly writeSubject = new Subject<{ seconds: number; events: number; synced: boolean }>();

  private db: Db;
  private readonly subject = new Subject<BuildEvent>();
  private latest: number;
  /** The first id still in the log: 1 until a compaction. */
  private first: number;
  /**
   * A batch failed (a full disk, an I/O error): LevelDB's write-ahead log may now end in a torn record, after which
   * anything appended to the same file is lost at the next open. So the next append reopens the database first
   * (which recovers the log and starts a new file), never writing after the tear.
   */
  private damaged = false;
  /** Settles when the last queued append has finished (never rejects). */
  private tail: Promise<void> = Promise.resolve();
  private closing: Promise<void> | undefined;

  private constructor(
    private readonly dir: string,
    private readonly openKey: string,
    db: Db,
    latest: number,
    first: number,
  ) {
    this.db = db;
    this.latest = latest;
    this.first = first;
    this.appended$ = this.subject.asObservable();
    this.writes$ = this.writeSubject.asObservable();
  }

  /** Opens (creating if needed) the log in `dir`. */
  static async open(dir: string): Promise<EventLog> {
    await mkdir(dir, { recursive: true });
    const key = await realpath(dir);
    if (openHere.has(key)) {
      throw Object.assign(
        new Error(`the event log at ${dir} is already open in this process (LOCK held by another Platform.open of this workspace): close that one first, or share it`),
        { code: 'LEVEL_LOCKED' },
      );
    }
    openHere.add(key);
    const db: Db = new ClassicLevel<Uint8Array, Uint8Array>(dir, { keyEncoding: 'view', valueEncoding: 'view' });
    try {
      await db.open();
    } catch (err) {
      openHere.delete(key);
      const cause = err instanceof Error && err.cause instanceof Error ? err.cause : undefined;
      if ((cause as { code?: unknown } | undefined)?.code === 'LEVEL_LOCKED') {
        // LevelDB's own words ("IO error: lock .../LOCK: Resource temporarily unavailable") name neither who nor what to do.
        throw Object.assign(
          new Error(
            `the event log at ${dir} is held by another process (the workspace's daemon, or another program that opened it): ` +
              'stop that one first (`platform stop` in the workspace stops its daemon), or use the running daemon over its HTTP API',
            { cause: err },
          ),
          { code: 'LEVEL_LOCKED' },
        );
      }
      throw new Error(`cannot open event log at ${dir}${cause ? `: ${cause.message}` : ''}`, { cause: err });
    }
    try {
      const [last] = await db.keys({ reverse: true, limit: 1 }).all();
      const [first] = await db.keys({ limit: 1 }).all();
      setTimeout(warmEventCodec, 0).unref();
      return new EventLog(dir, key, db, last === undefined ? 0 : eventIdOfKey(last), first === undefined ? 1 : eventIdOfKey(first));
    } catch (err) {
      try {
        await db.close();
      } finally {
        openHere.delete(key);
      }
      throw err;
    }
  }

  /** Id of the newest event; 0 when the log is empty. */
  latestId(): number {
    return this.latest;
  }

  /** Id of the oldest event still in the log: 1 unless it was compacted. */
  firstId(): number {
    return this.first;
  }

  /**
   * Removes the events below `firstKept` (the caller has made a state snapshot that covers them durably first), then
   * lets LevelDB reclaim their space. Readers see the new first id at once; the removal itself is one range delete.
   * Never removes the newest event: the log's latest id must survive (ids go on from it).
   */
  async compactBelow(firstKept: number): Promise<number> {
    checkInteger('compactBelow: firstKept', firstKept, 1);
    const upTo = Math.min(firstKept, this.latest);
    if (upTo <= this.first) return 0;
    const removed = upTo - this.first;
    this.first = upTo;
    await this.db.clear({ lt: eventKey(upTo) });
    await this.db.compactRange(eventKey(0), eventKey(upTo));
    return removed;
  }

  /**
   * Appends the payloads as events with the next ids (dense, continuing from latestId()) and the given timestamp,
   * in one batch written with `sync: true` (`sync: false` for what may be lost to a power cut, never to a crash of
   * the process: a later synced batch makes it durable too). Calls are queued: one runs after the previous one
   * finished.
   * Resolves with the stored events once written (after they were emitted on appended$). An empty list writes
   * nothing and resolves []. A payload that cannot be encoded rejects the call and nothing is written.
   */
  async append(payloads: EventPayload[], timestamp: number, options: { sync?: boolean } = {}): Promise<BuildEvent[]> {
    if (!Array.isArray(payloads)) throw new TypeError('append: payloads must be an array');
    checkInteger('append: timestamp', timestamp, Number.MIN_SAFE_INTEGER);
    if (this.closing !== undefined) throw new Error('append: the event log is closed');
    const batch = payloads.slice();
    const run = this.tail.then(() => this.write(batch, timestamp, options.sync ?? true));
    this.tail = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  private async write(payloads: EventPayload[], timestamp: number, sync: boolean): Promise<BuildEvent[]> {
    if (payloads.length === 0) return [];
    // First: a reopen may find (and emit) events of a failed batch that reached the log, and ids go on after them.
    if (this.damaged) await this.reopen();
    const first = this.latest + 1;
    // Only the payload's own case is kept: stray keys (e.g. an event_id on a payload) never reach the log.
    const events = payloads.map(
      (p, i) =>
        ({ event_id: first + i, timestamp, type: p.type, [p.type]: (p as Record<string, unknown>)[p.type] }) as BuildEvent,
    );
    // Encoded first: an event that cannot be encoded rejects the call before anything is written.
    const values = events.map(encodeEvent);
    const started = performance.now();
    try {
      // A chained batch: abstract-level's array form copies and re-checks every operation (2.3x the CPU a put).
      const batch = this.db.batch();
      for (let i = 0; i < events.length; i++) batch.put(eventKey(events[i]!.event_id), values[i]!);
      await batch.write({ sync });
      this.writeSubject.next({ seconds: (performance.now() - started) / 1000, events: events.length, synced: sync });
    } catch (err) {
      this.damaged = true;
      throw err;
    }
    this.latest = first + events.length - 1;
    for (const e of events) this.subject.next(e);
    return events;
  }

  /**
   * Closes and reopens the database after a failed batch. A failed batch may still have reached the log (written,
   * then its sync failed): its events are then in the log, so they are emitted on appended$ like any other, and
   * the fold agrees with the log. Fewer events than acknowledged would be a lost write: that stops the log.
   */
  private async reopen(): Promise<void> {
    // Not opened again over one that did not close: LevelDB's refusal of that would drop this process's lock.
    await this.db.close();
    const db: Db = new ClassicLevel<Uint8Array, Uint8Array>(this.dir, { keyEncoding: 'view', valueEncoding: 'view' });
    await db.open();
    this.db = db;
    const [last] = await db.keys({ reverse: true, limit: 1 }).all();
    const found = last === undefined ? 0 : eventIdOfKey(last);
    if (found < this.latest) {
      throw new Error(`the event log at ${this.dir} lost acknowledged events ${found + 1}..${this.latest} after a write error`);
    }
    if (found > this.latest) {
      const entries = await db.iterator({ gt: eventKey(this.latest), lte: eventKey(found) }).all();
      this.latest = found;
      for (const [key, value] of entries) this.subject.next(decodeEvent(value, eventIdOfKey(key)));
    }
    this.damaged = false;
  }

  /** Events with ids offset+1 .. offset+limit (offset 0 = from the first event); fewer or none past the end. */
  async list(offset: number, limit: number): Promise<BuildEvent[]> {
    checkInteger('list: offset', offset, 0);
    checkInteger('list: limit', limit, 0);
    const last = Math.min(offset + limit, this.latest);
    if (last <= offset) return [];
    if (offset + 1 < this.first) throw new EventsCompactedError(offset + 1, this.first);
    const entries = await this.db.iterator({ gt: eventKey(offset), lte: eventKey(last), limit: last - offset }).all();
    return entries.map(([key, value]) => decodeEvent(value, eventIdOfKey(key)));
  }

  /** The event with this id, or undefined when there is none. */
  async get(id: number): Promise<BuildEvent | undefined> {
    checkInteger('get: id', id, 0);
    if (id === 0 || id > this.latest) return undefined;
    if (id < this.first) throw new EventsCompactedError(id, this.first);
    const value = await this.db.get(eventKey(id));
    return value === undefined ? undefined : decodeEvent(value, id);
  }

  /**
   * All events with id >= fromId (default 1), in order, in batches of batchSize (the last one may be smaller), read lazily from a
   * LevelDB iterator (a snapshot taken when iteration starts), so the log is never loaded at once.
   * Arguments are checked at call time.
   */
  replay(fromId = 1, batchSize = DEFAULT_REPLAY_BATCH): AsyncIterable<BuildEvent[]> {
    checkInteger('replay: fromId', fromId, 0);
    checkInteger('replay: batchSize', batchSize, 1);
    const db = this.db;
    const start = Math.max(fromId, 1);
    if (start < this.first && start <= this.latest) throw new EventsCompactedError(start, this.first);
    return {
      async *[Symbol.asyncIterator]() {
        const it = db.iterator({ gte: eventKey(start) });
        let ended = false;
        const read = async (): Promise<BuildEvent[]> => {
          const batch: BuildEvent[] = [];
          // nextv may return fewer entries than asked (it is bounded by bytes too): fill the batch up.
          while (!ended && batch.length < batchSize) {
            const entries = await it.nextv(batchSize - batch.length);
            if (entries.length === 0) ended = true;
            for (const [key, value] of entries) batch.push(decodeEvent(value, eventIdOfKey(key)));
          }
          return batch;
        };
        // One batch is read ahead while the caller folds the last: LevelDB reads on libuv's threads, beside the fold
        // (a restart's replay waited on each read in turn, ~8% of it idle). Handled at once so a failed read ahead
        // is not an unhandled rejection; it is thrown where the batch is awaited.
        const ahead = (): Promise<BuildEvent[]> => {
          const p = read();
          p.catch(() => undefined);
          return p;
        };
        let next = ahead();
        try {
          for (;;) {
            const batch = await next;
            if (batch.length === 0) return;
            next = ended ? Promise.resolve([]) : ahead();
            yield batch;
          }
        } finally {
          // A read under way must end before its iterator closes.
          await next.catch(() => undefined);
          await it.close();
        }
      },
    };
  }

  /** Refuses new appends, waits for queued ones, completes appended$ and closes the database. Idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      await this.tail;
      this.subject.complete();
      this.writeSubject.complete();
      try {
        await this.db.close();
      } finally {
        openHere.delete(this.openKey);
      }
    })();
    return this.closing;
  }
}
