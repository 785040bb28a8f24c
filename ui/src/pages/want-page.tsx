/** One want: its partitions, the tree of wants derived from it, its job runs; live, with a cancel button. */
import type { JobRunView, WantView } from '../../../lib/api/views.js';
import { BACKFILL_POLICY_OF } from '../../../lib/api/backfill-policy.js';
import { WANT_TREE_DEFAULT, type WantTreeNode, type WantTreeReply } from '../../../lib/api/want-tree.js';
import { ApiError, get, messageOf, send, type Page } from '../api.js';
import { Link } from '../components/link.js';
import { Fact, PartitionLinks } from '../components/facts.js';
import { ErrorNote, Status, When, duration } from '../components/status.js';
import { useLive } from '../hooks.js';
import { useRef, useState } from 'preact/hooks';
import { RetriedAs, RunDuration } from './job-runs-page.js';
import { groupDigits as n } from '../../../lib/group-digits.js';

const MAX_TREE = WANT_TREE_DEFAULT;
const MAX_RUNS = 100;
/** How many of the partitions it rebuilt the facts list (the API keeps the first 1000). */
const REBUILT_SHOWN = 10;

interface WantTree {
  want: WantTreeNode;
  children: WantTree[];
}

interface Loaded {
  want: WantView;
  tree: WantTree;
  runs: JobRunView[];
  /** Wants of the tree or runs were left out. */
  truncated: boolean;
}

/** The reply's breadth-first nodes as a tree (each node comes after its parent). */
function nest(reply: WantTreeReply): WantTree {
  const byId = new Map<string, WantTree>();
  let root: WantTree | undefined;
  for (const n of reply.nodes) {
    const node: WantTree = { want: n, children: [] };
    byId.set(n.want_id, node);
    if (n.parent_want_id === null) root = node;
    else byId.get(n.parent_want_id)?.children.push(node);
  }
  return root!;
}

/**
 * The want, its tree (GET /api/wants/:id/tree) and its runs, however large the tree: the want's newest runs and,
 * when it has fewer than MAX_RUNS of its own, its derived wants' newest, breadth first, a page a want, read at once.
 */
async function loadWant(id: string, signal: AbortSignal): Promise<Loaded> {
  const path = encodeURIComponent(id);
  const [want, reply] = await Promise.all([
    get<WantView>(`/api/wants/${path}`, signal),
    get<WantTreeReply>(`/api/wants/${path}/tree?limit=${MAX_TREE}`, signal),
  ]);
  const plan: Array<[string, number]> = [];
  let room = MAX_RUNS;
  let runsLeftOut = false;
  for (const n of reply.nodes) {
    const take = Math.min(n.job_runs_total, room);
    if (take > 0) plan.push([n.want_id, take]);
    if (take < n.job_runs_total) runsLeftOut = true;
    room -= take;
  }
  const pages = await Promise.all(
    plan.map(([wantId, limit]) => get<Page<JobRunView>>(`/api/job_runs?want_id=${encodeURIComponent(wantId)}&order=desc&limit=${limit}`, signal)),
  );
  // A run two wants of the tree share is listed once.
  const runs = new Map<string, JobRunView>();
  for (const page of pages) for (const r of page.data) if (!runs.has(r.job_run_id)) runs.set(r.job_run_id, r);
  return { want, tree: nest(reply), runs: [...runs.values()], truncated: reply.truncated || runsLeftOut };
}

function TreeNode({ node }: { node: WantTree }) {
  const w = node.want;
  return (
    <li>
      <Link href={`/wants/${encodeURIComponent(w.want_id)}`}>{w.want_id}</Link> <Status status={w.status} />{' '}
      <span class="dim">{w.partitions.join(', ')}{w.partitions_total > w.partitions.length ? ` +${n(w.partitions_total - w.partitions.length)}` : ''}</span>
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
                <RetriedAs run={r} />
              </td>
              <td>{r.attempt}</td>
              <td>
                <RunDuration run={r} />
              </td>
              <td>{r.exit_code ?? r.signal ?? ''}</td>
              {/* A run in a list carries its first 20 outputs: the count is outputs_total. */}
              <td class="dim">{r.outputs.slice(0, 3).join(', ')}{r.outputs_total > 3 ? ` +${n(r.outputs_total - 3)}` : ''}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function WantPage({ id }: { id: string }) {
  // The id the daemon last answered 404 for: its page waits for that want's creation, not for any event.
  const missing = useRef<string | undefined>(undefined);
  const loaded = useLive(
    async (signal) => {
      try {
        const read = await loadWant(id, signal);
        missing.current = undefined;
        return read;
      } catch (err) {
        if (err instanceof ApiError && err.status === 404) missing.current = id;
        throw err;
      }
    },
    [id],
    (e) => missing.current !== id || (e.type === 'want_created' && e.want_created.want_id === id),
  );
  const [error, setError] = useState<string | undefined>(undefined);
  const t = loaded.data;
  const w = t?.want;
  if (!w && loaded.error && missing.current === id) {
    return (
      <section>
        <h1>No want {id}</h1>
        <ErrorNote error={loaded.error} />
        <p>
          There is no want with this id. This page shows it if one is made with it; the <Link href="/wants">wants</Link> page lists
          those there are.
        </p>
      </section>
    );
  }
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
                {w.pattern ? `${w.pattern} (${n(w.partitions_total)})` : <PartitionLinks refs={w.partitions} total={w.partitions_total} />}
              </dd>
              {w.comment ? (
                <Fact name="comment" label="Comment">
                  {w.comment}
                </Fact>
              ) : null}
              <Fact name="created" label="Created">
                <When iso={w.created_at} />
              </Fact>
              <Fact name="updated" label="Updated">
                <When iso={w.updated_at} />
              </Fact>
              {w.data_timestamp ? (
                <Fact name="data_timestamp" label="Data time">
                  <When iso={w.data_timestamp} />
                </Fact>
              ) : null}
              <Fact name="priority" label="Priority">
                {w.priority}
              </Fact>
              <Fact name="rebuild" label="Rebuild">
                {w.rebuild}
                {w.backfill_id && BACKFILL_POLICY_OF[w.rebuild] ? <span className="dim">{` (the backfill's policy ${BACKFILL_POLICY_OF[w.rebuild]})`}</span> : null}
              </Fact>
              <Fact name="source" label="Source">
                {w.parent_want_id ? <>derived for <Link href={`/wants/${encodeURIComponent(w.parent_want_id)}`}>{w.parent_want_id}</Link></> : w.source}
              </Fact>
              {w.backfill_id ? (
                <Fact name="backfill" label="Backfill">
                  <Link href={`/backfills/${encodeURIComponent(w.backfill_id)}`}>{w.backfill_id}</Link>
                </Fact>
              ) : null}
              {w.schedule_tick ? (
                <Fact name="schedule_tick" label="Schedule tick">
                  <When iso={w.schedule_tick} />
                </Fact>
              ) : null}
              {w.max_concurrent_job_runs > 0 ? (
                <Fact name="cap" label="Cap">
                  {w.max_concurrent_job_runs} runs at once
                </Fact>
              ) : null}
              {w.ttl_seconds > 0 ? (
                <Fact name="ttl" label="TTL">
                  {duration(w.ttl_seconds * 1000)}
                  {w.expires_at ? (
                    <>
                      , expires <When iso={w.expires_at} />
                    </>
                  ) : null}
                </Fact>
              ) : null}
              {w.sla_seconds > 0 || w.sla_deadline ? (
                <Fact name="sla" label="SLA">
                  {w.sla_seconds > 0 ? `${duration(w.sla_seconds * 1000)}, ` : ''}due <When iso={w.sla_deadline} />
                  {w.sla_missed ? (
                    <>
                      {' '}
                      <span class="status status-failed">missed</span>
                    </>
                  ) : null}
                </Fact>
              ) : null}
              {w.rebuilt.length > 0 ? (
                <Fact name="rebuilt" label="Rebuilt">
                  <PartitionLinks refs={w.rebuilt} max={REBUILT_SHOWN} />
                  {(w.rebuilt_total ?? 0) > w.rebuilt.length ? <span class="dim"> ({n(w.rebuilt_total ?? 0)} rebuilds in all)</span> : null}
                </Fact>
              ) : null}
              {w.cancel_reason ? (
                <Fact name="cancel_reason" label="Canceled">
                  {w.cancel_reason}
                </Fact>
              ) : null}
            </dl>
            {['idle', 'building', 'upstream_building'].includes(w.status) ? (
              <button type="button" onClick={() => send('DELETE', `/api/wants/${encodeURIComponent(id)}`).catch((err: unknown) => setError(messageOf(err)))}>
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
          {t.truncated ? <p class="dim">Showing at most {MAX_RUNS} runs (the want's newest, then its derived wants') and {MAX_TREE} wants.</p> : null}
          <p class="dim">
            All {n(w.job_runs_total)} of its own runs, paged and by status: <Link href={`/job_runs?want=${encodeURIComponent(id)}`}>its job runs</Link>
            {t.runs.some((r) => r.status === 'failed') || w.status === 'failed' ? (
              <>
                {' '}(<Link href={`/job_runs?want=${encodeURIComponent(id)}&status=failed`}>failed</Link>)
              </>
            ) : null}
            .
          </p>
        </>
      ) : loaded.error ? null : (
        <p class="loading">Loading…</p>
      )}
    </section>
  );
}
