/**
 * Says, above every page, when runs cannot run where they are sent: a Redis that does not answer, no worker taking
 * from the queue. Read from `/api/status` (the daemon looks every 5 s) every 5 s; nothing shown while all is well.
 */
import { useEffect, useState } from 'preact/hooks';
import type { ServerStatus } from '../../../lib/api/server-status.js';
import { get } from '../api.js';

const EVERY_MS = 5000;

export function ExecutorBanner() {
  const [executor, setExecutor] = useState<ServerStatus['executor'] | undefined>(undefined);
  useEffect(() => {
    let stopped = false;
    const look = () =>
      get<ServerStatus>('/api/status').then(
        (s) => !stopped && setExecutor(s.executor),
        // The connection banner says when the daemon does not answer.
        () => undefined,
      );
    void look();
    const timer = setInterval(look, EVERY_MS);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, []);
  if (!executor?.problem) return null;
  return (
    <div class={`banner ${executor.reachable ? 'banner-connecting' : 'banner-lost'}`} role="status" data-executor={executor.reachable ? 'no-workers' : 'unreachable'}>
      Runs wait: {executor.problem}
    </div>
  );
}
