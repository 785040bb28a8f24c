/**
 * The job graph of refs, as AnalyzeGraph answers it, drawn as a DAG of partitions (an edge per input), each node
 * coloured by its partition's status and kept current as runs move.
 */
import { useState } from 'preact/hooks';
import type { GraphAnalyzeResponseJson } from '../../../lib/api/platform-service.js';
import type { PartitionView } from '../../../lib/api/views.js';
import { expandPatterns } from '../../../lib/graph/partition-pattern.js';
import { ApiError, get, send } from '../api.js';
import { Dag, type DagNode } from '../components/dag.js';
import { ErrorNote } from '../components/status.js';
import { useLive } from '../hooks.js';
import { setQuery, type Location } from '../router.js';

/** Most partitions drawn: beyond this a drawing is no longer read. */
const MAX_NODES = 400;

interface Drawn {
  nodes: DagNode[];
  edges: Array<[string, string]>;
  truncated: boolean;
}

async function statusOf(ref: string, signal: AbortSignal): Promise<string> {
  try {
    const p = await get<PartitionView>(`/api/partitions/${encodeURIComponent(ref)}`, signal);
    return p.stale && p.status === 'live' ? 'stale' : p.status;
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return 'absent';
    throw err;
  }
}

async function analyze(text: string, signal: AbortSignal): Promise<Drawn | undefined> {
  const refs = expandPatterns(text.split(/\s+/).filter((r) => r !== ''));
  if (refs.length === 0) return undefined;
  const reply = await send<GraphAnalyzeResponseJson>('POST', '/platform.v1.PlatformService/AnalyzeGraph', { outputRefs: refs });
  const refsSeen = new Set<string>();
  const edges: Array<[string, string]> = [];
  for (const task of reply.graph?.nodes ?? []) {
    for (const out of task.config?.outputs ?? []) {
      refsSeen.add(out);
      for (const input of task.config?.inputs ?? []) {
        if (!input.partitionRef) continue;
        refsSeen.add(input.partitionRef);
        edges.push([input.partitionRef, out]);
      }
    }
  }
  const all = [...refsSeen];
  const shown = all.slice(0, MAX_NODES);
  const statuses = new Map<string, string>();
  // A few reads at a time: the daemon answers each from memory.
  for (let i = 0; i < shown.length; i += 16) {
    const batch = shown.slice(i, i + 16);
    const got = await Promise.all(batch.map((r) => statusOf(r, signal)));
    batch.forEach((r, k) => statuses.set(r, got[k]!));
  }
  return {
    nodes: shown.map((ref) => ({ id: ref, label: ref, status: statuses.get(ref) ?? '', href: `/partitions/${encodeURIComponent(ref)}` })),
    edges,
    truncated: all.length > shown.length,
  };
}

export function GraphPage({ location }: { location: Location }) {
  const refs = location.query.get('refs') ?? '';
  const [text, setText] = useState(refs);
  const loaded = useLive((signal) => analyze(refs, signal), [refs], (e) => e.type.startsWith('job_run_') || e.type === 'taint_created');
  return (
    <section>
      <h1>Job graph</h1>
      <form
        class="card row"
        aria-label="Draw the graph of refs"
        onSubmit={(e) => {
          e.preventDefault();
          setQuery({ refs: text.trim() });
        }}
      >
        <label>
          Refs or patterns <input name="refs" size={50} value={text} placeholder="weekly/revenue/week=2026-W02" onInput={(e) => setText(e.currentTarget.value)} />
        </label>
        <button type="submit">Draw</button>
      </form>
      <ErrorNote error={loaded.error} />
      {loaded.data ? (
        <>
          <p class="legend" aria-label="Legend">
            {['live', 'stale', 'building', 'failed', 'tainted', 'canceled', 'absent'].map((s) => (
              <span class={`legend-item status-${s}`}>{s}</span>
            ))}
          </p>
          <Dag nodes={loaded.data.nodes} edges={loaded.data.edges} label={`Job graph of ${refs}`} />
          {loaded.data.truncated ? <p class="dim">Only the first {MAX_NODES} partitions are drawn.</p> : null}
        </>
      ) : refs && !loaded.error ? (
        <p class="loading">Loading…</p>
      ) : null}
    </section>
  );
}
