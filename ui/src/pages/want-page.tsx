/** One want: its partitions, the tree of wants derived from it, its job runs; live, with a cancel button. */
import type { JobRunView, WantView } from '../../../lib/api/views.js';
import { get, send, type Page } from '../api.js';
import { Link } from '../components/link.js';
import { ErrorNote, Status, age, duration } from '../components/status.js';
import { useLive } from '../hooks.js';
import { useState } from 'preact/hooks';

const MAX_TREE = 200;
const MAX_RUNS = 100;

interface WantTree {
  want: WantView;
  children: WantTree[];
}

async function loadTree(id: string, signal: AbortSignal): Promise<{ tree: WantTree; runs: JobRunView[]; truncated: boolean }> {
  let budget = MAX_TREE;
  const runIds: string[] = [];
  // The want each run was first listed by.
  const listedBy = new Map<string, string>();
  const load = async (wantId: string): Promise<WantTree> => {
    budget--;
    const want = await get<WantView>(`/api/wants/${encodeURIComponent(wantId)}`, signal);
    for (const r of want.job_run_ids) {
      if (listedBy.has(r)) continue;
      listedBy.set(r, want.want_id);
      runIds.push(r);
    }
    const children: WantTree[] = [];
    for (const c of want.child_want_ids) if (budget > 0) children.push(await load(c));
    return { want, children };
  };
  const tree = await load(id);
  // The runs shown are the last MAX_RUNS listed: of each want that listed some of them, a page of its newest that
  // many, not a read a run; a run none of those pages holds is read on its own.
  const shown = runIds.slice(-MAX_RUNS);
  const perWant = new Map<string, number>();
  for (const r of shown) perWant.set(listedBy.get(r)!, (perWant.get(listedBy.get(r)!) ?? 0) + 1);
  const pages = await Promise.all(
    [...perWant].map(([w, n]) => get<Page<JobRunView>>(`/api/job_runs?want_id=${encodeURIComponent(w)}&order=desc&limit=${n}`, signal)),
  );
  const byId = new Map(pages.flatMap((p) => p.data.map((r) => [r.job_run_id, r] as const)));
  const runs = await Promise.all(shown.map((r) => byId.get(r) ?? get<JobRunView>(`/api/job_runs/${encodeURIComponent(r)}`, signal)));
  return { tree, runs, truncated: budget <= 0 || runIds.length > MAX_RUNS };
}

function TreeNode({ node }: { node: WantTree }) {
  const w = node.want;
  return (
    <li>
      <Link href={`/wants/${encodeURIComponent(w.want_id)}`}>{w.want_id}</Link> <Status status={w.status} />{' '}
      <span class="dim">{w.partitions.slice(0, 3).join(', ')}{w.partitions_total > 3 ? ` +${w.partitions_total - 3}` : ''}</span>
      {node.children.length > 0 ? (
        <ul>
          {node.children.map((c) => (
            <TreeNode node={c} />
          ))}
        </ul>
      ) : null}
    </li>
  );
}

export function RunsTable({ runs }: { runs: JobRunView[] }) {
  if (runs.length === 0) return <p class="empty">No job runs.</p>;
  return (
    <div class="scroll">
      <table>
        <thead>
          <tr>
            <th scope="col">Run</th>
            <th scope="col">Job</th>
            <th scope="col">Status</th>
            <th scope="col">Attempt</th>
            <th scope="col">Duration</th>
            <th scope="col">Exit</th>
            <th scope="col">Outputs</th>
          </tr>
        </thead>
        <tbody>
          {runs.map((r) => (
            <tr key={r.job_run_id}>
              <td>
                <Link href={`/job_runs/${encodeURIComponent(r.job_run_id)}`}>{r.job_run_id}</Link>
              </td>
              <td>{r.job_label}</td>
              <td>
                <Status status={r.status} />
              </td>
              <td>{r.attempt}</td>
              <td>{r.started_at ? duration((r.ended_at ? Date.parse(r.ended_at) : Date.now()) - Date.parse(r.started_at)) : ''}</td>
              <td>{r.exit_code ?? r.signal ?? ''}</td>
              <td class="dim">{r.outputs.slice(0, 3).join(', ')}{r.outputs.length > 3 ? ` +${r.outputs.length - 3}` : ''}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function WantPage({ id }: { id: string }) {
  const loaded = useLive((signal) => loadTree(id, signal), [id]);
  const [error, setError] = useState<string | undefined>(undefined);
  const t = loaded.data;
  const w = t?.tree.want;
  return (
    <section>
      <h1>
        Want {id} {w ? <Status status={w.status} /> : null}
      </h1>
      <ErrorNote error={loaded.error ?? error} />
      {w ? (
        <>
          <div class="card">
            <dl class="facts">
              <dt>Partitions</dt>
              <dd>
                {w.pattern ? `${w.pattern} (${w.partitions_total})` : w.partitions.slice(0, 20).map((p) => (
                  <Link href={`/partitions/${encodeURIComponent(p)}`} class="chip">{p}</Link>
                ))}
                {!w.pattern && w.partitions_total > 20 ? ` +${w.partitions_total - 20} more` : ''}
              </dd>
              <dt>Created</dt>
              <dd>{age(w.created_at)} ago</dd>
              <dt>Priority</dt>
              <dd>{w.priority}</dd>
              <dt>Rebuild</dt>
              <dd>{w.rebuild}</dd>
              <dt>Source</dt>
              <dd>{w.parent_want_id ? <>derived for <Link href={`/wants/${w.parent_want_id}`}>{w.parent_want_id}</Link></> : w.source}</dd>
              {w.sla_deadline ? (
                <>
                  <dt>SLA</dt>
                  <dd>{w.sla_missed ? 'missed' : `due ${w.sla_deadline}`}</dd>
                </>
              ) : null}
              {w.cancel_reason ? (
                <>
                  <dt>Canceled</dt>
                  <dd>{w.cancel_reason}</dd>
                </>
              ) : null}
            </dl>
            {['idle', 'building', 'upstream_building'].includes(w.status) ? (
              <button type="button" onClick={() => send('DELETE', `/api/wants/${encodeURIComponent(id)}`).catch((err: unknown) => setError(String(err)))}>
                Cancel want
              </button>
            ) : null}
          </div>
          <h2>Derived wants</h2>
          {t.tree.children.length === 0 ? (
            <p class="empty">None: its inputs were there.</p>
          ) : (
            <ul class="tree" aria-label="Derived wants">
              {t.tree.children.map((c) => (
                <TreeNode node={c} />
              ))}
            </ul>
          )}
          <h2>Job runs</h2>
          <RunsTable runs={t.runs} />
          {t.truncated ? <p class="dim">Showing the latest {MAX_RUNS} runs and at most {MAX_TREE} wants.</p> : null}
        </>
      ) : loaded.error ? null : (
        <p class="loading">Loading…</p>
      )}
    </section>
  );
}
