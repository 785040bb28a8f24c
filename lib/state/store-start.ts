/**
 * Where the state a store opened with came from: the snapshot, the compaction base (a compacted log whose snapshot
 * could not be used) or the log alone; the event id that held, how many events of the log were folded on it, and how
 * long that took. `GET /api/status` shows it as `start` (api/server-status.ts).
 */
/**
 * A start as it goes, for whoever waits on it (a CLI that started the daemon): the log's events replayed onto the
 * state read so far, of how many, and why the snapshot was not used (null: it was).
 */
export interface StartProgress {
  events_replayed: number;
  events_to_replay: number;
  snapshot_unused: string | null;
  /**
   * While the snapshot is read, before any replay: its bytes read from the disk so far, then decoded so far, and its
   * size (absent otherwise). A large image read on a busy machine takes long enough that a waiting client must see it
   * go on.
   */
  snapshot_bytes_read?: number;
  snapshot_bytes_decoded?: number;
  snapshot_bytes?: number;
  /**
   * Then, from an image of another version of platform (after an upgrade) or a compaction base: its records made into
   * this version's so far, of how many; then the slices of the state's indexes built from them so far, of how many.
   * Seconds each at a million events, said for the same reason.
   */
  snapshot_records_read?: number;
  snapshot_records?: number;
  snapshot_indexes_built?: number;
  snapshot_indexes?: number;
}

export interface StoreStart {
  source: 'snapshot' | 'compaction_base' | 'log';
  /** The last event the state read held: the snapshot's or the base's (0 when read from the log alone). */
  at_event: number;
  /** Events of the log folded onto it, after `at_event`. */
  events_replayed: number;
  /** How long reading the state took, the snapshot or base and the replay together (milliseconds). */
  duration_ms: number;
  /**
   * Why the snapshot was not used (null when it was): `missing` (there is none: a clean stop writes one past 1,000
   * new events), `written by another version of platform` (after an upgrade), `cut short`, `damaged`, `not of this
   * log (...)`, `unreadable: ...`.
   */
  snapshot_unused: string | null;
  /**
   * The delta beside the snapshot (state-delta.ts), when there was one and the snapshot was used: the snapshot's own
   * event, the event the delta holds the state at (null: not used), and why it was not used (null: it was).
   */
  snapshot_delta: { image_at_event: number; at_event: number | null; unused: string | null } | null;
  /**
   * The snapshot was written by another version of platform (an upgrade): its records were read and every index built
   * again (image-records.ts), where a replay of the whole log would have been needed; no delta of it is read.
   */
  snapshot_other_version: boolean;
}

/**
 * Thrown by a start's `onReplay` to end the start there: the replay stops at the batch it is at and the open fails
 * with this (as its cause, where a caller wraps it). For a daemon told to stop while it replays a long log: it has only
 * read the log so far, so it can go at once rather than after the replay (a million events take ~30 s). Any other
 * error of the callback is news gone wrong, and the replay goes on.
 */
export class StartStopped extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StartStopped';
  }
}
