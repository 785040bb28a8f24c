/** A number that grows with each batch of events: a page passes it to what it must re-read. */
import { useEffect, useState } from 'preact/hooks';
import type { EventView } from '../../lib/api/views.js';
import { onEvents } from './live.js';

export function useEventCount(relevant: (e: EventView) => boolean = () => true): number {
  const [n, setN] = useState(0);
  useEffect(
    () =>
      onEvents((events, resync) => {
        if (resync || events.some(relevant)) setN((x) => x + 1);
      }),
    [],
  );
  return n;
}
