/** Backfills with their progress bars, live; one backfill's counts and a cancel button. */
import { useState } from 'preact/hooks';
import type { BackfillView } from '../../../lib/api/backfills.js';
import { get, messageOf, qs, send, type Page } from '../api.js';
import { Link } from '../components/link.js';
import { Fact } from '../components/facts.js';
import { Age, ErrorNote, Progress, Status, When } from '../components/status.js';
import { VirtualList } from '../components/virtual-list.js';
import { useEventCount } from '../event-count.js';
import { useLive } from '../hooks.js';
import { groupDigits as n } from '../../../lib/group-digits.js';

export function BackfillsPage() {
  const events = useEventCount();
  return (
    <section>
      <h1>Backfills</h1>
      <p class="dim">Start one with <code>platform backfill 'daily/revenue/date={'{'}2026-01-01..2026-03-31{'}'}'</code>.</p>
      <VirtualList<BackfillView>
        label="Backfills, newest first"
        empty="No backfills yet."
        version={`#${events}`}
        rowHeight={40}
        fetchPage={(offset, limit) => get<Page<BackfillView>>(`/api/backfills${qs({ offset, limit, order: 'desc' })}`)}
        header={
          <>
            <span role="columnheader" class="c-id">Backfill</span>
            <span role="columnheader" class="c-status">Status</span>
            <span role="columnheader" class="c-wide">Range</span>
            <span role="columnheader" class="c-wide">Progress</span>
            <span role="columnheader" class="c-num">Failed</span>
            <span role="columnheader" class="c-num">Running</span>
            <span role="columnheader" class="c-num">Age</span>
          </>
        }
        row={(b) => (
          <>
            <span role="cell" class="c-id">
              <Link href={`/backfills/${encodeURIComponent(b.backfill_id)}`}>{b.backfill_id}</Link>
            </span>
            <span role="cell" class="c-status">
              <Status status={b.status} />
            </span>
            <span role="cell" class="c-wide">{b.pattern || `${n(b.partitions)} partition${b.partitions === 1 ? '' : 's'}`}</span>
            <span role="cell" class="c-wide">
              <Progress value={b.progress} label={`${b.backfill_id} progress`} />
            </span>
            <span role="cell" class="c-num">{n(b.counts.failed)}</span>
            <span role="cell" class="c-num">{b.running_job_runs}</span>
            <span role="cell" class="c-num"><Age iso={b.created_at} /></span>
          </>
        )}
      />
    </section>
  );
}

export function BackfillPage({ id }: { id: string }) {
  const loaded = useLive((signal) => get<BackfillView>(`/api/backfills/${encodeURIComponent(id)}`, signal), [id]);
  const [error, setError] = useState<string | undefined>(undefined);
  const b = loaded.data;
  return (
    <section>
      <h1>
        Backfill {id} {b ? <Status status={b.status} /> : null}
      </h1>
      <ErrorNote error={loaded.error ?? error} />
      {b ? (
        <div class="card">
          <Progress value={b.progress} label="Progress" />
          <dl class="facts">
            <Fact name="range" label="Range">
              {b.pattern ? `${b.pattern} (${n(b.partitions)})` : `${n(b.partitions)} listed partition${b.partitions === 1 ? '' : 's'}`}
            </Fact>
            {b.comment ? (
              <Fact name="comment" label="Comment">
                {b.comment}
              </Fact>
            ) : null}
            <dt>Want</dt>
            <dd>
              <Link href={`/wants/${encodeURIComponent(b.want_id)}`}>{b.want_id}</Link>
            </dd>
            <dt>Policy</dt>
            <dd>{b.policy}</dd>
            <dt>Priority</dt>
            <dd>{b.priority}</dd>
            <dt>Cap</dt>
            <dd>{b.max_concurrent_job_runs > 0 ? `${b.max_concurrent_job_runs} runs at once` : 'none of its own'}</dd>
            {(['live', 'failed', 'skipped', 'building', 'waiting', 'pending', 'canceled'] as const).map((k) => (
              <>
                <dt>{k}</dt>
                <dd data-count={k}>{n(b.counts[k])}</dd>
              </>
            ))}
            <dt>Running now</dt>
            <dd>{n(b.running_job_runs)}</dd>
            <Fact name="created" label="Created">
              <When iso={b.created_at} />
            </Fact>
            <Fact name="updated" label="Updated">
              <When iso={b.updated_at} />
            </Fact>
            {b.cancel_reason ? (
              <Fact name="cancel_reason" label="Canceled">
                {b.cancel_reason}
              </Fact>
            ) : null}
          </dl>
          {['idle', 'building', 'upstream_building'].includes(b.status) ? (
            <button type="button" onClick={() => send('DELETE', `/api/backfills/${encodeURIComponent(id)}`).catch((err: unknown) => setError(messageOf(err)))}>
              Cancel backfill
            </button>
          ) : null}
        </div>
      ) : null}
    </section>
  );
}
