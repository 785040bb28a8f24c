/** Data that stays current: read once, then again after events that may change it (at most one read at a time). */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { EventView } from '../../lib/api/views.js';
import { onEvents } from './live.js';
import { MIN_RELOAD_MS } from '../../lib/api/dashboard-reads.js';

export interface Loaded<T> {
  data: T | undefined;
  error: string | undefined;
  reload: () => void;
}

/**
 * `load` runs now, when `deps` change, and after each batch of events for which `relevant` says yes (default: any).
 * A batch that arrives during a read makes one more read after it, never a queue of them; reads start at least
 * `gapMs` apart (never less than MIN_RELOAD_MS, the default), and a read waits as long as the last one took.
 * Both are asked with what the last read of these deps gave (undefined until it came), so a page can tell from
 * what it shows which events concern it, and read what is costly to read less often.
 */
export function useLive<T>(
  load: (signal: AbortSignal) => Promise<T>,
  deps: unknown[],
  relevant: (e: EventView, last: T | undefined) => boolean = () => true,
  gapMs: (last: T | undefined) => number = () => MIN_RELOAD_MS,
): Loaded<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const state = useRef(newLoadState());
  const loadRef = useRef(load);
  loadRef.current = load;
  const relevantRef = useRef(relevant);
  relevantRef.current = relevant;
  const gapRef = useRef(gapMs);
  gapRef.current = gapMs;
  // `data` as the event handler sees it: the state of the render it was made in would be stale.
  const last = useRef<T | undefined>(undefined);

  const run = () => {
    const s = state.current;
    if (s.busy || s.timer !== undefined) {
      s.again = true;
      return;
    }
    // At most every gap (MIN_RELOAD_MS or more), and never reading more than half the time: a slow read (a want with
    // a tree of hundreds) waits as long again before the next.
    // A read that stalled (a daemon busy for a minute) does not leave the page stale as long again: 2 s at most.
    const took = Number.isFinite(s.lastStart) && s.lastEnd >= s.lastStart ? Math.min(s.lastEnd - s.lastStart, MAX_READ_GAP_MS) : 0;
    const gap = Math.max(MIN_RELOAD_MS, gapRef.current(last.current));
    const wait = Math.max(s.lastStart + gap, s.lastEnd + took) - performance.now();
    if (wait > 0) {
      s.timer = setTimeout(() => {
        s.timer = undefined;
        if (s.alive) run();
      }, wait);
      return;
    }
    s.lastStart = performance.now();
    s.busy = true;
    // This read covers every event so far: only those during it ask for another.
    s.again = false;
    loadRef
      .current(s.controller.signal)
      .then((d) => {
        if (!s.alive) return;
        last.current = d;
        setData(d);
        setError(undefined);
      })
      .catch((err: unknown) => {
        if (s.alive && !(err instanceof DOMException && err.name === 'AbortError')) setError(err instanceof Error ? err.message : String(err));
      })
      .finally(() => {
        s.busy = false;
        s.lastEnd = performance.now();
        if (s.again && s.alive) {
          s.again = false;
          run();
        }
      });
  };

  useEffect(() => {
    const s = newLoadState();
    state.current = s;
    last.current = undefined;
    setData(undefined);
    run();
    const off = onEvents((events, resync) => {
      if (resync || events.some((e) => relevantRef.current(e, last.current))) run();
    });
    return () => {
      s.alive = false;
      clearTimeout(s.timer);
      s.controller.abort();
      off();
    };
  }, deps);

  return { data, error, reload: run };
}

const MAX_READ_GAP_MS = 2_000;

interface LoadState {
  busy: boolean;
  again: boolean;
  alive: boolean;
  controller: AbortController;
  /** When the last read started and ended (performance.now()); the first read of a page waits for nothing. */
  lastStart: number;
  lastEnd: number;
  /** A read held back to keep reads the gap apart. */
  timer: ReturnType<typeof setTimeout> | undefined;
}

function newLoadState(): LoadState {
  return { busy: false, again: false, alive: true, controller: new AbortController(), lastStart: -Infinity, lastEnd: -Infinity, timer: undefined };
}
