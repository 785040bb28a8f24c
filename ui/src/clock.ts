/**
 * One clock for the page: what shows time so far (a running run's duration, "3m ago") re-renders each second, as
 * the events that re-read a page may not come for minutes while a long run goes on. One timer however many subscribe,
 * and none while nothing does.
 */
import { useEffect, useState } from 'preact/hooks';

const TICK_MS = 1000;
const subscribers = new Set<() => void>();
let timer: ReturnType<typeof setInterval> | undefined;

function subscribe(l: () => void): () => void {
  subscribers.add(l);
  timer ??= setInterval(() => {
    for (const s of subscribers) s();
  }, TICK_MS);
  return () => {
    subscribers.delete(l);
    if (subscribers.size === 0 && timer !== undefined) {
      clearInterval(timer);
      timer = undefined;
    }
  };
}

/** Date.now(), kept current each second while `ticking` (a run that has not ended); read once otherwise. */
export function useNow(ticking = true): number {
  const [now, setNow] = useState(Date.now);
  useEffect(() => (ticking ? subscribe(() => setNow(Date.now())) : undefined), [ticking]);
  return ticking ? now : Date.now();
}
