/** Taints, newest first, paged by the server; one taint's partitions and how many of them are still tainted. */
import type { TaintView } from '../../../lib/api/partitions-change.js';
import { get, qs, type Page } from '../api.js';
import { Fact, PartitionLinks } from '../components/facts.js';
import { Pager } from '../components/pager.js';
import { Link } from '../components/link.js';
import { Age, ErrorNote, When } from '../components/status.js';
import { VirtualList } from '../components/virtual-list.js';
import { useEventCount } from '../event-count.js';
import { useLive } from '../hooks.js';
import { queryOffset, setOffset, type Location } from '../router.js';
import { changesTaint, shownTaint, taintReadGap } from '../taint-changes.js';
import { groupDigits as n } from '../../../lib/group-digits.js';

/** How many of a taint's refs a list row shows. */
const ROW_REFS = 3;
/** A taint's page lists its refs this many at a time, as the API pages them (a taint downstream can hold 100,000). */
const SHOWN_REFS = 1000;

export const taintHref = (id: string) => `/taints/${encodeURIComponent(id)}`;

export function TaintsPage() {
  // A build moves a taint's count of its partitions still tainted: the rows shown are read again (a page of them).
  const events = useEventCount((e) => e.type === 'taint_created' || e.type === 'job_run_succeeded');
  return (
    <section>
      <h1>Taints</h1>
      <p class="dim">
        Taint a partition from its page, or with <code>platform taint 'raw/date=2026-01-05' --reason 'late rows'</code>.
      </p>
      <VirtualList<TaintView>
        label="Taints, newest first"
        empty="No taints yet."
        version={`#${events}`}
        rowHeight={36}
        fetchPage={(offset, limit) => get<Page<TaintView>>(`/api/taints${qs({ offset, limit, order: 'desc' })}`)}
        header={
          <>
            <span role="columnheader" class="c-id">Taint</span>
            <span role="columnheader" class="c-wide">Reason</span>
            <span role="columnheader" class="c-mid">Downstream</span>
            <span role="columnheader" class="c-mid">Partitions</span>
            <span role="columnheader" class="c-mid">Still tainted</span>
            <span role="columnheader" class="c-wide">First partitions</span>
            <span role="columnheader" class="c-num">Age</span>
          </>
        }
        row={(t) => (
          <>
            <span role="cell" class="c-id" data-taint={t.taint_id}>
              <Link href={taintHref(t.taint_id)}>{t.taint_id}</Link>
            </span>
            <span role="cell" class="c-wide" title={t.reason}>
              {t.reason || <span class="dim">no reason given</span>}
            </span>
            <span role="cell" class="c-mid">{t.downstream ? 'yes' : 'no'}</span>
            <span role="cell" class="c-mid">{n(t.partitions_total)}</span>
            <span role="cell" class="c-mid" data-still={t.still_tainted}>
              {t.still_tainted === 0 ? <span class="dim">none</span> : n(t.still_tainted)}
            </span>
            <span role="cell" class="c-wide" title={t.partitions.join('\n')}>
              {t.partitions.slice(0, ROW_REFS).join(', ')}
              {t.partitions_total > ROW_REFS ? ` +${n(t.partitions_total - ROW_REFS)}` : ''}
            </span>
            <span role="cell" class="c-num"><Age iso={t.created_at} /></span>
          </>
        )}
      />
    </section>
  );
}

export function TaintPage({ id, location }: { id: string; location: Location }) {
  // In the URL, so a reload or a shared link opens the same page; a link to another taint has none, so starts at 0.
  const offset = queryOffset(location.query);
  const loaded = useLive(
    async (signal) =>
      shownTaint(await get<TaintView>(`/api/taints/${encodeURIComponent(id)}${qs({ partitions_offset: offset, partitions_limit: SHOWN_REFS })}`, signal)),
    [id, offset],
    changesTaint,
    taintReadGap,
  );
  const t = loaded.data?.view;
  return (
    <section>
      <h1>Taint {id}</h1>
      <ErrorNote error={loaded.error} />
      {t ? (
        <>
          <div class="card">
            <dl class="facts">
              <Fact name="reason" label="Reason">
                {t.reason || <span class="dim">none given</span>}
              </Fact>
              <Fact name="downstream" label="Downstream">
                {t.downstream ? 'yes: what consumed them was tainted too' : 'no: only the partitions named'}
              </Fact>
              <Fact name="created" label="Created">
                <When iso={t.created_at} />
              </Fact>
              <Fact name="still_tainted" label="Still tainted">
                {n(t.still_tainted)} of {n(t.partitions_total)}
                {t.still_tainted === 0 ? <span class="dim"> (all rebuilt since)</span> : null}
              </Fact>
            </dl>
          </div>
          <h2>Partitions ({n(t.partitions_total)})</h2>
          <p aria-label="Tainted partitions">
            <PartitionLinks refs={t.partitions} total={t.partitions.length} max={SHOWN_REFS} />
          </p>
          {offset > 0 && offset >= t.partitions_total ? (
            <p class="empty">
              This page starts after its last partition (it has {t.partitions_total.toLocaleString('en')}).{' '}
              <Link href={taintHref(id)}>Go to its first partitions.</Link>
            </p>
          ) : t.partitions_total > SHOWN_REFS || offset > 0 ? (
            <Pager offset={offset} size={SHOWN_REFS} total={t.partitions_total} go={setOffset} />
          ) : null}
        </>
      ) : loaded.error ? null : (
        <p class="loading">Loading…</p>
      )}
    </section>
  );
}
