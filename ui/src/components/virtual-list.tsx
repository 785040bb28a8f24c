/**
 * A list of any length, paged by the server and rendered virtually: only the rows in view (and a few around) are
 * in the DOM, and only their pages are fetched. `version` changing (events arrived) re-reads the pages in view.
 */
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Page } from '../api.js';
import { MIN_RELOAD_MS } from '../../../lib/api/dashboard-reads.js';

const PAGE = 100;
const OVERSCAN = 10;
/** A read that stalled (a daemon busy for a minute) does not hold the next as long again: 2 s at most (as useLive). */
const MAX_READ_GAP_MS = 2_000;

/** The filter part of a `version`: all before its last `#` (the count of event batches), `a#b` in `a#b#7`. */
const filterOf = (version: string): string => version.slice(0, Math.max(0, version.lastIndexOf('#')));

interface ReadState {
  busy: boolean;
  timer: ReturnType<typeof setTimeout> | undefined;
  /** When the last read started and ended (performance.now()). */
  lastStart: number;
  lastEnd: number;
  /** What the last read covered: `version|pages`, and the same without the event count. */
  done: string;
  doneKey: string;
  alive: boolean;
}

export interface VirtualListProps<T> {
  /** Reads rows [offset, offset + limit). */
  fetchPage: (offset: number, limit: number) => Promise<Page<T>>;
  /** Changes when the rows may have changed (a filter, new events): the pages in view are read again. */
  version: string;
  rowHeight: number;
  header: ComponentChildren;
  row: (item: T, index: number) => ComponentChildren;
  label: string;
  empty: string;
}

export function VirtualList<T>({ fetchPage, version, rowHeight, header, row, label, empty }: VirtualListProps<T>) {
  const box = useRef<HTMLDivElement>(null);
  const [scrollTop, setScrollTop] = useState(0);
  const [height, setHeight] = useState(600);
  const [total, setTotal] = useState<number | undefined>(undefined);
  const [pages, setPages] = useState<Map<number, T[]>>(new Map());
  const [error, setError] = useState<string | undefined>(undefined);
  const filterKey = useRef(filterOf(version));

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const resize = new ResizeObserver(() => setHeight(el.clientHeight));
    resize.observe(el);
    return () => resize.disconnect();
  }, []);

  // A new filter starts from the top with nothing cached; new events only re-read what is in view.
  const key = filterOf(version);
  if (key !== filterKey.current) {
    filterKey.current = key;
    if (box.current) box.current.scrollTop = 0;
  }

  const first = Math.max(0, Math.floor(scrollTop / rowHeight) - OVERSCAN);
  const last = Math.min((total ?? PAGE) - 1, Math.ceil((scrollTop + height) / rowHeight) + OVERSCAN);
  const firstPage = Math.floor(first / PAGE);
  const lastPage = Math.max(firstPage, Math.floor(last / PAGE));

  // One read at a time, and a re-read for events at most every MIN_RELOAD_MS (never reading more than half the
  // time), as useLive reads a page: during a backfill a batch of events comes every frame, and a read per batch was
  // 40 reads a second of a list, several in flight (QA, session 36). A new filter or a scroll reads at once (after the
  // read in flight). The read takes what is wanted when it starts, so events during it ask for one more, not a queue.
  const need = `${version}|${firstPage}|${lastPage}`;
  const wantedKey = `${key}|${firstPage}|${lastPage}`;
  const reads = useRef<ReadState>({ busy: false, timer: undefined, lastStart: -Infinity, lastEnd: -Infinity, done: '', doneKey: '', alive: true });
  const fetchRef = useRef(fetchPage);
  fetchRef.current = fetchPage;
  const current = useRef({ need, key, wantedKey, firstPage, lastPage });
  current.current = { need, key, wantedKey, firstPage, lastPage };

  const pump = () => {
    const r = reads.current;
    if (!r.alive || r.busy || r.timer !== undefined) return;
    const { need, key, wantedKey, firstPage, lastPage } = current.current;
    if (need === r.done) return;
    // Only events since the last read (same filter, same pages): wait out the gap.
    if (wantedKey === r.doneKey) {
      const took = r.lastEnd >= r.lastStart ? Math.min(r.lastEnd - r.lastStart, MAX_READ_GAP_MS) : 0;
      const wait = Math.max(r.lastStart + MIN_RELOAD_MS, r.lastEnd + took) - performance.now();
      if (wait > 0) {
        r.timer = setTimeout(() => {
          r.timer = undefined;
          pump();
        }, wait);
        return;
      }
    }
    r.busy = true;
    r.lastStart = performance.now();
    (async () => {
      const next = new Map<number, T[]>();
      let count: number | undefined;
      for (let p = firstPage; p <= lastPage; p++) {
        const page = await fetchRef.current(p * PAGE, PAGE);
        next.set(p, page.data);
        count = page.total;
      }
      // A read for a filter left meanwhile shows nothing: its rows are not the list's.
      if (!r.alive || current.current.key !== key) return;
      if (count !== undefined) setTotal(count);
      setPages(next);
      setError(undefined);
    })()
      .catch((err: unknown) => r.alive && setError(err instanceof Error ? err.message : String(err)))
      .finally(() => {
        r.busy = false;
        r.lastEnd = performance.now();
        r.done = need;
        r.doneKey = wantedKey;
        pump();
      });
  };

  useEffect(pump, [need]);
  useEffect(
    () => () => {
      reads.current.alive = false;
      clearTimeout(reads.current.timer);
    },
    [],
  );

  const rows: ComponentChildren[] = [];
  if (total !== undefined) {
    for (let i = first; i <= last && i < total; i++) {
      const item = pages.get(Math.floor(i / PAGE))?.[i % PAGE];
      rows.push(
        <div role="row" class="vrow" key={i} style={{ top: `${i * rowHeight}px`, height: `${rowHeight}px` }}>
          {item === undefined ? <span class="loading">…</span> : row(item, i)}
        </div>,
      );
    }
  }
  return (
    <div class="vlist" role="table" aria-label={label} aria-rowcount={total ?? -1}>
      {/* On a narrow window the table scrolls sideways as one: header and rows together. */}
      <div class="vtable">
        <div role="row" class="vrow vhead">
          {header}
        </div>
        <div class="vbody" ref={box} onScroll={(e) => setScrollTop((e.currentTarget as HTMLDivElement).scrollTop)}>
          <div class="vspace" style={{ height: `${(total ?? 0) * rowHeight}px` }}>
            {rows}
          </div>
        </div>
      </div>
      {error ? <p class="error" role="alert">{error}</p> : null}
      {total === 0 ? <p class="empty">{empty}</p> : null}
      {total !== undefined && total > 0 ? <p class="count">{total.toLocaleString('en')} in all</p> : null}
    </div>
  );
}
