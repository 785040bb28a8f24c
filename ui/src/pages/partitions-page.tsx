/** Partitions by prefix and status, paged by the server, with stale marks. */
import type { PartitionView } from '../../../lib/api/views.js';
import { PARTITION_STATUSES } from '../../../lib/state/build-state.js';
import { get, qs, type Page } from '../api.js';
import { Link } from '../components/link.js';
import { Age, Status } from '../components/status.js';
import { VirtualList } from '../components/virtual-list.js';
import { useEventCount } from '../event-count.js';
import { setQuery, type Location } from '../router.js';

export function PartitionsPage({ location }: { location: Location }) {
  const prefix = location.query.get('prefix') ?? '';
  const status = location.query.get('status') ?? '';
  const events = useEventCount();
  return (
    <section>
      <h1>Partitions</h1>
      <div class="filters">
        <label>
          Prefix <input type="search" value={prefix} placeholder="daily/revenue/" onInput={(e) => setQuery({ prefix: e.currentTarget.value, status })} />
        </label>
        <label>
          Status{' '}
          <select value={status} onChange={(e) => setQuery({ prefix, status: e.currentTarget.value })}>
            <option value="">any</option>
            {PARTITION_STATUSES.map((s) => (
              <option value={s}>{s}</option>
            ))}
          </select>
        </label>
      </div>
      <VirtualList<PartitionView>
        label="Partitions by ref"
        empty="No partitions match."
        version={`${prefix}|${status}#${events}`}
        rowHeight={36}
        fetchPage={(offset, limit) => get<Page<PartitionView>>(`/api/partitions${qs({ offset, limit, prefix, status })}`)}
        header={
          <>
            <span role="columnheader" class="c-wide">Partition</span>
            <span role="columnheader" class="c-status">Status</span>
            <span role="columnheader" class="c-mid">Stale</span>
            <span role="columnheader" class="c-mid">Build</span>
            <span role="columnheader" class="c-mid">Job run</span>
            <span role="columnheader" class="c-num">Updated</span>
          </>
        }
        row={(p) => (
          <>
            <span role="cell" class="c-wide">
              <Link href={`/partitions/${encodeURIComponent(p.partition_ref)}`}>{p.partition_ref}</Link>
            </span>
            <span role="cell" class="c-status" data-partition={p.partition_ref}>
              <Status status={p.status} />
            </span>
            <span role="cell" class="c-mid">{p.stale ? <span class="status status-stale">stale</span> : ''}</span>
            <span role="cell" class="c-mid">{p.build_id ?? ''}</span>
            <span role="cell" class="c-mid">
              {p.job_run_id ? <Link href={`/job_runs/${encodeURIComponent(p.job_run_id)}`}>{p.job_run_id}</Link> : ''}
            </span>
            <span role="cell" class="c-num"><Age iso={p.updated_at} /></span>
          </>
        )}
      />
    </section>
  );
}
