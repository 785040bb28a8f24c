/** One partition: why it is stale, its builds, its lineage up and down as one graph, and a taint button. */
import { useState } from 'preact/hooks';
import type { LineageNode, LineageReply, PartitionDetailView, TaintReply } from '../../../lib/api/partitions-change.js';
import { get, send } from '../api.js';
import { Dag, type DagNode } from '../components/dag.js';
import { Link } from '../components/link.js';
import { Age, ErrorNote, Status } from '../components/status.js';
import { useLive } from '../hooks.js';
import { taintHref } from './taints-page.js';
import { groupDigits } from '../../../lib/group-digits.js';

interface Loaded {
  detail: PartitionDetailView;
  up: LineageReply;
  down: LineageReply;
}

const href = (ref: string) => `/partitions/${encodeURIComponent(ref)}`;

/** The two lineage trees as one graph: upstream edges point at their consumer, downstream ones away from it. */
export function lineageGraph(up: LineageNode, down: LineageNode): { nodes: DagNode[]; edges: Array<[string, string]> } {
  const nodes = new Map<string, DagNode>();
  const edges = new Set<string>();
  const add = (n: LineageNode) => {
    const status = n.stale && n.status === 'live' ? 'stale' : n.status;
    if (!nodes.has(n.partition_ref)) nodes.set(n.partition_ref, { id: n.partition_ref, label: n.partition_ref, status, href: href(n.partition_ref) });
  };
  const walk = (n: LineageNode, upstream: boolean) => {
    add(n);
    for (const c of n.children) {
      add(c);
      edges.add(upstream ? `${c.partition_ref}\u0000${n.partition_ref}` : `${n.partition_ref}\u0000${c.partition_ref}`);
      walk(c, upstream);
    }
  };
  walk(up, true);
  walk(down, false);
  return { nodes: [...nodes.values()], edges: [...edges].map((e) => e.split('\u0000') as [string, string]) };
}

function TaintForm({ refName, onDone }: { refName: string; onDone: (reply: TaintReply) => void }) {
  const [reason, setReason] = useState('');
  const [downstream, setDownstream] = useState(true);
  const [error, setError] = useState<string | undefined>(undefined);
  const submit = async (e: Event) => {
    e.preventDefault();
    try {
      const r = await send<TaintReply>('POST', '/api/taints', { partitions: [refName], reason, downstream });
      onDone(r);
      setError(undefined);
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    }
  };
  return (
    <form class="card row" onSubmit={submit} aria-label="Taint this partition">
      <label>
        Reason <input name="reason" value={reason} onInput={(e) => setReason(e.currentTarget.value)} placeholder="late rows" />
      </label>
      <label>
        <input type="checkbox" checked={downstream} onChange={(e) => setDownstream(e.currentTarget.checked)} /> and what consumed it
      </label>
      <button type="submit">Taint</button>
      <ErrorNote error={error} />
    </form>
  );
}

/** Levels of lineage the page asks for, each way. */
const LINEAGE_DEPTH = 6;
/** Most of the lineage's cuts said one by one; the rest are counted. */
const CUTS_SAID = 5;

/**
 * What the drawn lineage leaves out, a line a partition whose inputs (or consumers) are not all drawn: past the
 * answer's cap of nodes, or past the depth asked. The DAG alone showed 499 of 10,000 consumers as if they were all
 * (QA, session 36); `platform lineage` says each cut, in the same words.
 */
export function lineageCuts(reply: LineageReply): string[] {
  const cuts: string[] = [];
  const noun = (k: number) => (reply.direction === 'upstream' ? (k === 1 ? 'input' : 'inputs') : k === 1 ? 'consumer' : 'consumers');
  const walk = (n: LineageNode, level: number): void => {
    if (n.truncated) {
      const left = n.children_total - n.children.length;
      const what = left > 0 ? `${groupDigits(left)} more of its ${groupDigits(n.children_total)} ${noun(n.children_total)}` : `more ${noun(2)}`;
      cuts.push(
        level >= reply.depth
          ? `${n.partition_ref}: ${what} are not drawn (${reply.depth} levels are)`
          : `${n.partition_ref}: ${what} are not drawn (a lineage shows at most ${groupDigits(reply.max_nodes)} partitions)`,
      );
    }
    for (const c of n.children) walk(c, level + 1);
  };
  walk(reply.root, 0);
  return cuts;
}

/** The run a partition not (or no longer) built by its current build's run is at, by the partition's status. */
const LATEST_RUN: Record<string, string> = {
  failed: 'It failed in its latest run',
  canceled: 'Its latest run was canceled',
  building: 'It is being built by',
  // A rebuild failed or canceled: it stays on its build.
  live: 'Its build is kept; its latest run did not replace it',
  tainted: 'Its build is kept; its latest run did not replace it',
};

export function PartitionPage({ refName }: { refName: string }) {
  const enc = encodeURIComponent(refName);
  const loaded = useLive<Loaded>(
    async (signal) => ({
      detail: await get<PartitionDetailView>(`/api/partitions/${enc}?builds_limit=50`, signal),
      up: await get<LineageReply>(`/api/partitions/${enc}/lineage?direction=upstream&depth=${LINEAGE_DEPTH}`, signal),
      down: await get<LineageReply>(`/api/partitions/${enc}/lineage?direction=downstream&depth=${LINEAGE_DEPTH}`, signal),
    }),
    [refName],
  );
  const [tainted, setTainted] = useState<TaintReply | undefined>(undefined);
  const d = loaded.data?.detail;
  const graph = loaded.data ? lineageGraph(loaded.data.up.root, loaded.data.down.root) : undefined;
  const cuts = loaded.data ? [...lineageCuts(loaded.data.up), ...lineageCuts(loaded.data.down)] : [];
  return (
    <section>
      <h1>
        {refName} {d ? <Status status={d.status} /> : null} {d?.stale ? <span class="status status-stale">stale</span> : null}
      </h1>
      <ErrorNote error={loaded.error} />
      {d ? (
        <>
          {d.build_tainted && d.status !== 'tainted' ? (
            <p class="card reasons" role="note" data-field="build_tainted">
              Its build {d.current_build?.build_id ?? ''} is tainted and not yet replaced: what consumed it is stale.
            </p>
          ) : null}
          {d.stale_reasons.length > 0 ? (
            <ul class="card reasons" aria-label="Why it is stale">
              {d.stale_reasons.map((r) => (
                <li>{r}</li>
              ))}
              {d.stale_reasons_total > d.stale_reasons.length ? <li class="dim">… {groupDigits(d.stale_reasons_total - d.stale_reasons.length)} more</li> : null}
            </ul>
          ) : null}
          {d.job_run_id && d.job_run_id !== d.current_build?.job_run_id ? (
            <p class="card reasons" role="note" data-field="latest_run">
              {d.rebuild_failed ? 'Its build is kept; its latest run, a rebuild, failed' : (LATEST_RUN[d.status] ?? 'Its latest run')}: <Link href={`/job_runs/${encodeURIComponent(d.job_run_id)}`}>{d.job_run_id}</Link>; its
              page says why, with its log.
            </p>
          ) : null}
          <TaintForm refName={refName} onDone={setTainted} />
          {tainted ? (
            <p role="status">
              <Link href={taintHref(tainted.taint_id)}>{tainted.taint_id}</Link>: tainted {groupDigits(tainted.partitions_total)} partition
              {tainted.partitions_total === 1 ? '' : 's'}.
            </p>
          ) : null}
          <h2>Lineage</h2>
          {graph ? <Dag nodes={graph.nodes} edges={graph.edges} label={`Lineage of ${refName}`} /> : null}
          {cuts.length > 0 ? (
            <ul class="dim" data-field="lineage_cut" aria-label="What the lineage leaves out">
              {cuts.slice(0, CUTS_SAID).map((c) => (
                <li>{c}</li>
              ))}
              {cuts.length > CUTS_SAID ? <li>and {groupDigits(cuts.length - CUTS_SAID)} more partitions whose lineage is cut here</li> : null}
            </ul>
          ) : null}
          <h2>Builds ({groupDigits(d.builds_total)})</h2>
          <div class="scroll">
            <table>
              <thead>
                <tr>
                  <th scope="col">Build</th>
                  <th scope="col">Job run</th>
                  <th scope="col">Job</th>
                  <th scope="col">Built</th>
                  <th scope="col">Consumed</th>
                </tr>
              </thead>
              <tbody>
                {d.builds.map((b) => (
                  <tr key={b.build_id}>
                    <td>{b.build_id}</td>
                    <td>
                      <Link href={`/job_runs/${encodeURIComponent(b.job_run_id)}`}>{b.job_run_id}</Link>
                    </td>
                    <td>{b.job_label}</td>
                    <td><Age iso={b.built_at} /> ago</td>
                    <td class="dim">
                      {b.inputs.map((i) => `${i.partition_ref} @ ${i.build_id}`).join(', ')}
                      {b.inputs_total > b.inputs.length ? ` +${groupDigits(b.inputs_total - b.inputs.length)} more` : ''}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      ) : loaded.error ? null : (
        <p class="loading">Loading…</p>
      )}
    </section>
  );
}
