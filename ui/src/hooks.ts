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
 * MIN_RELOAD_MS apart, and a read waits as long as the last one took.
 */
export function useLive<T>(load: (signal: AbortSignal) => Promise<T>, deps: unknown[], relevant: (e: EventView) => boolean = () => true): Loaded<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const state = useRef(newLoadState());
  const loadRef = useRef(load);
  loadRef.current = load;
  const relevantRef = useRef(relevant);
  relevantRef.current = relevant;

  const run = () => {
    const s = state.current;
    if (s.busy || s.timer !== undefined) {
      s.again = true;
      return;
    }
    // At most every MIN_RELOAD_MS, and never reading more than half the time: a slow read (a want with a tree of
    // hundreds) waits as long again before the next.
    // A read that stalled (a daemon busy for a minute) does not leave the page stale as long again: 2 s at most.
    const took = Number.isFinite(s.lastStart) && s.lastEnd >= s.lastStart ? Math.min(s.lastEnd - s.lastStart, MAX_READ_GAP_MS) : 0;
    const wait = Math.max(s.lastStart + MIN_RELOAD_MS, s.lastEnd + took) - performance.now();
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
    setData(undefined);
    run();
    const off = onEvents((events) => {
      if (events.some((e) => relevantRef.current(e))) run();
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
  /** A read held back to keep reads MIN_RELOAD_MS apart. */
  timer: ReturnType<typeof setTimeout> | undefined;
}

function newLoadState(): LoadState {
  return { busy: false, again: false, alive: true, controller: new AbortController(), lastStart: -Infinity, lastEnd: -Infinity, timer: undefined };
}
