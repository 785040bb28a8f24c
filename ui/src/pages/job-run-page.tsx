/** One job run: its config and how it ended, and its log streamed live (SSE) while it runs. */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { JobRunView } from '../../../lib/api/views.js';
import { get } from '../api.js';
import { Link } from '../components/link.js';
import { ErrorNote, Status } from '../components/status.js';
import { useLive } from '../hooks.js';
import { runDuration, workerOf } from './job-runs-page.js';

/** Most lines kept on the page; older ones scroll away (the whole log: the raw link). */
const MAX_LINES = 5000;

function LiveLog({ id, stream }: { id: string; stream: 'stdout' | 'stderr' }) {
  const [lines, setLines] = useState<string[]>([]);
  const [ended, setEnded] = useState<string | undefined>(undefined);
  const [gone, setGone] = useState<string | undefined>(undefined);
  const box = useRef<HTMLPreElement>(null);
  useEffect(() => {
    setLines([]);
    setEnded(undefined);
    setGone(undefined);
    const source = new EventSource(`/api/job_runs/${encodeURIComponent(id)}/logs/${stream}?follow=true`);
    let pending: string[] = [];
    let frame = 0;
    source.addEventListener('log', (m) => {
      pending.push((m as MessageEvent<string>).data);
      frame ||= requestAnimationFrame(() => {
        frame = 0;
        const add = pending;
        pending = [];
        setLines((old) => [...old, ...add].slice(-MAX_LINES));
      });
    });
    source.addEventListener('end', (m) => {
      setEnded((m as MessageEvent<string>).data);
      source.close();
    });
    // A refused stream (not a dropped one, which EventSource retries): say why, e.g. 410 when retention removed the log.
    source.addEventListener('error', () => {
      if (source.readyState !== EventSource.CLOSED) return;
      fetch(`/api/job_runs/${encodeURIComponent(id)}/logs/${stream}?tail=1`)
        .then(async (r) => (r.ok ? undefined : ((await r.json()) as { error?: string }).error ?? `HTTP ${r.status}`))
        .then(setGone, () => setGone('The daemon cannot be reached.'));
    });
    return () => {
      source.close();
      cancelAnimationFrame(frame);
    };
  }, [id, stream]);
  useEffect(() => {
    const el = box.current;
    if (el) el.scrollTop = el.scrollHeight;
  }, [lines.length]);
  return (
    <>
      <pre class="log" ref={box} aria-label={`${stream} of ${id}`} aria-live="polite" data-lines={lines.length}>
        {lines.join('\n')}
      </pre>
      <p class="dim">
        {gone ?? (ended ? `The run ended (${ended}).` : 'Following the log…')}{' '}
        <a href={`/api/job_runs/${encodeURIComponent(id)}/logs/${stream}`}>raw</a>
      </p>
    </>
  );
}

export function JobRunPage({ id }: { id: string }) {
  const loaded = useLive((signal) => get<JobRunView>(`/api/job_runs/${encodeURIComponent(id)}`, signal), [id], (e) => e.type.startsWith('job_run_'));
  const [stream, setStream] = useState<'stdout' | 'stderr'>('stdout');
  const r = loaded.data;
  return (
    <section>
      <h1>
        Job run {id} {r ? <Status status={r.status} /> : null}
      </h1>
      <ErrorNote error={loaded.error} />
      {r ? (
        <div class="card">
          <dl class="facts">
            <dt>Job</dt>
            <dd>{r.job_label}</dd>
            <dt>Outputs</dt>
            <dd>
              {r.outputs.slice(0, 20).map((o) => (
                <Link href={`/partitions/${encodeURIComponent(o)}`} class="chip">{o}</Link>
              ))}
            </dd>
            <dt>Wants</dt>
            <dd>
              {r.want_ids.slice(0, 20).map((w) => (
                <Link href={`/wants/${encodeURIComponent(w)}`} class="chip">{w}</Link>
              ))}
              {r.wants_total > 20 ? <span class="dim"> +{r.wants_total - 20} more</span> : null}
            </dd>
            <dt>Attempt</dt>
            <dd>{r.attempt}</dd>
            <dt>Duration</dt>
            <dd>{runDuration(r)}</dd>
            <dt>Exit</dt>
            <dd>{r.exit_code ?? r.signal ?? ''} {r.reason ?? ''}</dd>
            <dt>Worker</dt>
            <dd>{workerOf(r)}</dd>
            <dt>Command</dt>
            <dd>
              <code>{[...r.exec, ...r.config.args].join(' ')}</code>
            </dd>
          </dl>
        </div>
      ) : null}
      <div class="row" role="tablist" aria-label="Log stream">
        {(['stdout', 'stderr'] as const).map((s) => (
          <button type="button" role="tab" aria-selected={stream === s} class={stream === s ? 'tab active' : 'tab'} onClick={() => setStream(s)}>
            {s}
          </button>
        ))}
      </div>
      <LiveLog id={id} stream={stream} />
    </section>
  );
}
