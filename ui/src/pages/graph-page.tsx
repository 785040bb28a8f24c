/**
 * The job graph of refs, as AnalyzeGraph answers it, drawn as a DAG of partitions (an edge per input), each node
 * coloured by its partition's status and kept current as runs move.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { GraphAnalyzeResponseJson } from '../../../lib/api/platform-service.js';
import type { PartitionLookupBody, PartitionLookupReply } from '../../../lib/api/partition-lookup.js';
import { expandPatterns } from '../../../lib/graph/partition-pattern.js';
import { send } from '../api.js';
import { Dag, type DagNode } from '../components/dag.js';
import { ErrorNote } from '../components/status.js';
import { useLive } from '../hooks.js';
import { rereadsOf, type GraphShape, type SeenPartition } from '../graph-rereads.js';
import { onEvents } from '../live.js';
import { setQuery, type Location } from '../router.js';

/** Most partitions drawn: beyond this a drawing is no longer read. */
const MAX_NODES = 400;

interface Drawn {
  nodes: DagNode[];
  edges: Array<[string, string]>;
  truncated: boolean;
}

/** What the page read of its refs: the graph's shape, and the partitions drawn as last read. */
interface GraphRead {
  refs: string;
  shape: GraphShape;
  edges: Array<[string, string]>;
  /** The refs drawn, in order: the first MAX_NODES of the graph. */
  shown: string[];
  truncated: boolean;
  seen: Map<string, SeenPartition>;
}

function statusOf(p: SeenPartition & { stale: boolean }): string {
  return p.stale && p.status === 'live' ? 'stale' : p.status;
}

/** The partitions of `refs` in one read; a ref never seen is absent from the map. */
async function lookup(refs: readonly string[], signal: AbortSignal): Promise<Map<string, SeenPartition>> {
  const out = new Map<string, SeenPartition>();
  if (refs.length === 0) return out;
  const reply = await send<PartitionLookupReply>('POST', '/api/partitions/lookup', { refs: [...refs] } satisfies PartitionLookupBody, signal);
  for (const p of reply.data) out.set(p.partition_ref, { status: statusOf(p), job_run_id: p.job_run_id });
  return out;
}

async function analyze(text: string, signal: AbortSignal): Promise<GraphRead | undefined> {
  const refs = expandPatterns(text.split(/\s+/).filter((r) => r !== ''));
  if (refs.length === 0) return undefined;
  const reply = await send<GraphAnalyzeResponseJson>('POST', '/platform.v1.PlatformService/AnalyzeGraph', { outputRefs: refs }, signal);
  const refsSeen = new Set<string>();
  const built = new Set<string>();
  const edges: Array<[string, string]> = [];
  const consumers = new Map<string, string[]>();
  for (const task of reply.graph?.nodes ?? []) {
    for (const out of task.config?.outputs ?? []) {
      refsSeen.add(out);
      built.add(out);
      for (const input of task.config?.inputs ?? []) {
        if (!input.partitionRef) continue;
        refsSeen.add(input.partitionRef);
        edges.push([input.partitionRef, out]);
        const list = consumers.get(input.partitionRef);
        if (list) list.push(out);
        else consumers.set(input.partitionRef, [out]);
      }
    }
  }
  const all = [...refsSeen];
  const shown = all.slice(0, MAX_NODES);
  return {
    refs: text,
    shape: { refs: refsSeen, consumers, open: all.filter((r) => !built.has(r)) },
    edges,
    shown,
    truncated: all.length > shown.length,
    seen: await lookup(shown, signal),
  };
}

/** `last` with the drawn partitions among `refs` read again. */
async function reread(last: GraphRead, refs: ReadonlySet<string>, signal: AbortSignal): Promise<GraphRead> {
  const again = last.shown.filter((r) => refs.has(r));
  if (again.length === 0) return last;
  const got = await lookup(again, signal);
  const seen = new Map(last.seen);
  for (const ref of again) {
    const p = got.get(ref);
    if (p) seen.set(ref, p);
    else seen.delete(ref);
  }
  return { ...last, seen };
}

function drawn(read: GraphRead): Drawn {
  return {
    nodes: read.shown.map((ref) => ({ id: ref, label: ref, status: read.seen.get(ref)?.status ?? 'absent', href: `/partitions/${encodeURIComponent(ref)}` })),
    edges: read.edges,
    truncated: read.truncated,
  };
}

function merged(a: Set<string> | 'graph', b: Set<string> | 'graph'): Set<string> | 'graph' {
  return a === 'graph' || b === 'graph' ? 'graph' : new Set([...a, ...b]);
}

/**
 * The graph of `refs`, kept current: analyzed and read whole at first (and when a job definition changes), then
 * after each batch of events only the drawn partitions the batch may change are read again, in one lookup.
 */
function useGraph(refs: string) {
  const last = useRef<GraphRead | undefined>(undefined);
  /** What the events since the last read ask to read: refs, or everything ('graph'). */
  const pending = useRef<Set<string> | 'graph'>(new Set());
  const runs = useRef(new Map<string, readonly string[]>());
  const loaded = useLive(
    async (signal) => {
      const asked = pending.current;
      pending.current = new Set();
      const before = last.current?.refs === refs ? last.current : undefined;
      try {
        const read = before === undefined || asked === 'graph' ? await analyze(refs, signal) : await reread(before, asked, signal);
        last.current = read;
        return read === undefined ? undefined : drawn(read);
      } catch (err) {
        // Read again next time what this read did not.
        pending.current = merged(asked, pending.current);
        throw err;
      }
    },
    [refs],
    // Events are sorted out below, by what they touch.
    () => false,
  );
  const reload = useRef(loaded.reload);
  reload.current = loaded.reload;
  useEffect(() => {
    last.current = undefined;
    pending.current = new Set();
    runs.current = new Map();
    return onEvents((events, resync) => {
      const read = last.current;
      // Not read yet (or read for other refs): the read under way may predate these events. Events missed
      // (resync): all of it.
      const wanted = read?.refs === refs && !resync ? rereadsOf(events, read.shape, read.seen, runs.current) : 'graph';
      if (wanted !== 'graph' && wanted.size === 0) return;
      pending.current = merged(pending.current, wanted);
      reload.current();
    });
  }, [refs]);
  return loaded;
}

export function GraphPage({ location }: { location: Location }) {
  const refs = location.query.get('refs') ?? '';
  const [text, setText] = useState(refs);
  const loaded = useGraph(refs);
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
