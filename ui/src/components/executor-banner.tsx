/**
 * Says, above every page, what the daemon's status finds wrong: runs that cannot run where they are sent (a Redis that
 * does not answer, no worker taking from the queue), and a platform.json it refuses (the last valid graph is in use,
 * so what the edit added does not exist yet), and an executor in use that is not the configured one (kept for runs in
 * flight placed on it, or an edit not applied live: restart to switch). Read from `/api/status` every 5 s; nothing shown while all is well.
 */
import { useEffect, useState } from 'preact/hooks';
import type { ServerStatus } from '../../../lib/api/server-status.js';
import { get } from '../api.js';

const EVERY_MS = 5000;

export function ExecutorBanner() {
  const [status, setStatus] = useState<Pick<ServerStatus, 'executor' | 'graph_problem' | 'executor_config'> | undefined>(undefined);
  useEffect(() => {
    let stopped = false;
    const look = () =>
      get<ServerStatus>('/api/status').then(
        (s) => !stopped && setStatus({ executor: s.executor, graph_problem: s.graph_problem ?? null, executor_config: s.executor_config ?? null }),
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
  const executor = status?.executor;
  const graphProblem = status?.graph_problem;
  // The executor in use is not the configured one (kept for runs placed on it, or an edit not applied live).
  const executorNote = status?.executor_config?.note;
  if (!executor?.problem && !graphProblem && !executorNote) return null;
  return (
    <>
      {executor?.problem ? (
        <div class={`banner ${executor.reachable ? 'banner-connecting' : 'banner-lost'}`} role="status" data-executor={executor.reachable ? 'no-workers' : 'unreachable'}>
          Runs wait: {executor.problem}
        </div>
      ) : null}
      {executorNote ? (
        <div class="banner banner-connecting" role="status" data-executor-config>
          {executorNote}
        </div>
      ) : null}
      {graphProblem ? (
        <div class="banner banner-lost" role="status" data-graph-problem>
          platform.json is refused, and the last valid graph is in use: {graphProblem}
        </div>
      ) : null}
    </>
  );
}
