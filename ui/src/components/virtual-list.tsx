/**
 * A list of any length, paged by the server and rendered virtually: only the rows in view (and a few around) are
 * in the DOM, and only their pages are fetched. `version` changing (events arrived) re-reads the pages in view.
 */
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Page } from '../api.js';

const PAGE = 100;
const OVERSCAN = 10;

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
  const wanted = useRef<string>('');
  const filterKey = useRef(version.split('#')[0]);

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const resize = new ResizeObserver(() => setHeight(el.clientHeight));
    resize.observe(el);
    return () => resize.disconnect();
  }, []);

  // A new filter starts from the top with nothing cached; new events only re-read what is in view.
  const key = version.split('#')[0];
  if (key !== filterKey.current) {
    filterKey.current = key;
    if (box.current) box.current.scrollTop = 0;
  }

  const first = Math.max(0, Math.floor(scrollTop / rowHeight) - OVERSCAN);
  const last = Math.min((total ?? PAGE) - 1, Math.ceil((scrollTop + height) / rowHeight) + OVERSCAN);
  const firstPage = Math.floor(first / PAGE);
  const lastPage = Math.max(firstPage, Math.floor(last / PAGE));

  useEffect(() => {
    const need = `${version}|${firstPage}|${lastPage}`;
    wanted.current = need;
    let alive = true;
    (async () => {
      const next = new Map<number, T[]>();
      for (let p = firstPage; p <= lastPage; p++) {
        const page = await fetchPage(p * PAGE, PAGE);
        if (!alive || wanted.current !== need) return;
        next.set(p, page.data);
        setTotal(page.total);
      }
      setPages(next);
      setError(undefined);
    })().catch((err: unknown) => alive && setError(err instanceof Error ? err.message : String(err)));
    return () => {
      alive = false;
    };
  }, [version, firstPage, lastPage]);

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
