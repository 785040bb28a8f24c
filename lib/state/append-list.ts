/**
 * A list that only grows at its end, as a want's runs and derived wants do: full chunks shared by every later version,
 * and a short tail. An append copies the tail (and, once a chunk fills, the list of chunks), never the list.
 *
 * Why: a want's lists were arrays copied on every append, so a want of n runs cost O(n^2) in the fold: a backfill of
 * 40,000 partitions folded in 14.8 s, 100,000 in minutes (docs/decisions.md, session 31). Plain data (arrays in an
 * object), so records holding it are packed and read back as they are.
 */
export interface AppendList<T> {
  /** Full chunks of CHUNK items, oldest first; never changed once made. */
  readonly chunks: ReadonlyArray<readonly T[]>;
  /** The items after them, fewer than CHUNK. */
  readonly tail: readonly T[];
}

const CHUNK = 256;

const EMPTY: AppendList<never> = { chunks: [], tail: [] };

export function emptyList<T>(): AppendList<T> {
  return EMPTY;
}

/** A list of `items`, in order. */
export function listOf<T>(items: readonly T[]): AppendList<T> {
  if (items.length === 0) return EMPTY;
  const full = items.length - (items.length % CHUNK);
  const chunks: T[][] = [];
  for (let i = 0; i < full; i += CHUNK) chunks.push(items.slice(i, i + CHUNK));
  return { chunks, tail: items.slice(full) };
}

/** `list` with `item` at its end; `list` is unchanged. */
export function appended<T>(list: AppendList<T>, item: T): AppendList<T> {
  if (list.tail.length + 1 < CHUNK) return { chunks: list.chunks, tail: [...list.tail, item] };
  return { chunks: [...list.chunks, [...list.tail, item]], tail: [] };
}

export function listLength(list: AppendList<unknown>): number {
  return list.chunks.length * CHUNK + list.tail.length;
}

/** Each item, oldest first. */
export function* listItems<T>(list: AppendList<T>): Generator<T, void, undefined> {
  for (const chunk of list.chunks) yield* chunk;
  yield* list.tail;
}

/** Every item, oldest first, as one array. */
export function listArray<T>(list: AppendList<T>): T[] {
  return [...listItems(list)];
}

/** The last `n` items (all when fewer), oldest first: costs `n`, not the list. */
export function lastItems<T>(list: AppendList<T>, n: number): T[] {
  const length = listLength(list);
  return listSlice(list, length - Math.max(0, Math.min(n, length)), length);
}

/** Items `lo..hi-1`, in order: costs the slice, not the list. */
export function listSlice<T>(list: AppendList<T>, lo: number, hi: number): T[] {
  const length = listLength(list);
  const from = Math.max(0, Math.min(lo, length));
  const to = Math.max(from, Math.min(hi, length));
  const out: T[] = [];
  const inChunks = list.chunks.length * CHUNK;
  for (let i = from; i < to; i++) out.push(i < inChunks ? list.chunks[(i / CHUNK) | 0]![i % CHUNK]! : list.tail[i - inChunks]!);
  return out;
}

/** Whether any item passes `test`, newest first (the items a list's owner waits on are mostly its latest), stopping at the first. */
export function listSome<T>(list: AppendList<T>, test: (item: T) => boolean): boolean {
  for (let i = list.tail.length - 1; i >= 0; i--) if (test(list.tail[i]!)) return true;
  for (let c = list.chunks.length - 1; c >= 0; c--) {
    const chunk = list.chunks[c]!;
    for (let i = chunk.length - 1; i >= 0; i--) if (test(chunk[i]!)) return true;
  }
  return false;
}
