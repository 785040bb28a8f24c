/** Data that stays current: read once, then again after events that may change it (at most one read at a time). */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { EventView } from '../../lib/api/views.js';
import { onEvents } from './live.js';

export interface Loaded<T> {
  data: T | undefined;
  error: string | undefined;
  reload: () => void;
}

/**
 * `load` runs now, when `deps` change, and after each batch of events for which `relevant` says yes (default: any).
 * A batch that arrives during a read makes one more read after it, never a queue of them.
 */
export function useLive<T>(load: (signal: AbortSignal) => Promise<T>, deps: unknown[], relevant: (e: EventView) => boolean = () => true): Loaded<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const state = useRef({ busy: false, again: false, alive: true, controller: new AbortController() });
  const loadRef = useRef(load);
  loadRef.current = load;
  const relevantRef = useRef(relevant);
  relevantRef.current = relevant;

  const run = () => {
    const s = state.current;
    if (s.busy) {
      s.again = true;
      return;
    }
    s.busy = true;
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
        if (s.again && s.alive) {
          s.again = false;
          run();
        }
      });
  };

  useEffect(() => {
    const s = { busy: false, again: false, alive: true, controller: new AbortController() };
    state.current = s;
    setData(undefined);
    run();
    const off = onEvents((events) => {
      if (events.some((e) => relevantRef.current(e))) run();
    });
    return () => {
      s.alive = false;
      s.controller.abort();
      off();
    };
  }, deps);

  return { data, error, reload: run };
}
