/** Wants: a live, virtually rendered list paged by the server, a create form and cancel buttons. */
import { useState } from 'preact/hooks';
import { tooManyRefs, type CreateWantReply } from '../../../lib/api/create-want.js';
import type { WantView } from '../../../lib/api/views.js';
import type { RebuildPolicy } from '../../../lib/events/build-event.js';
import { expandPatterns } from '../../../lib/graph/partition-pattern.js';
import { WANT_STATUSES } from '../../../lib/state/build-state.js';
import { get, messageOf, qs, send, type Page } from '../api.js';
import { Link } from '../components/link.js';
import { Age, ErrorNote, Status } from '../components/status.js';
import { VirtualList } from '../components/virtual-list.js';
import { useEventCount } from '../event-count.js';
import { navigate, setQuery, type Location } from '../router.js';
import { groupDigits as n } from '../../../lib/group-digits.js';

const ACTIVE = new Set(['idle', 'building', 'upstream_building']);
/** Most characters of a comment a row shows (the whole of it: its title, and the want's page). */
const COMMENT_CHARS = 40;

const short = (text: string): string => (text.length > COMMENT_CHARS ? `${text.slice(0, COMMENT_CHARS - 1)}…` : text);

function CreateWant() {
  const [refs, setRefs] = useState('');
  const [rebuild, setRebuild] = useState<RebuildPolicy>('missing');
  const [priority, setPriority] = useState('0');
  const [error, setError] = useState<string | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    let partitions: string[];
    try {
      partitions = expandPatterns(refs.split(/\s+/).filter((r) => r !== ''));
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
      return;
    }
    // Too many for a want: said as the CLI says it, before anything is sent (the server's 400 names a field, and past
    // 1 MiB of refs its 413 only the body's size).
    const tooMany = tooManyRefs(refs.split(/\s+/).filter((r) => r !== ''), partitions.length, 'a want');
    if (tooMany) {
      setError(tooMany);
      return;
    }
    if (partitions.length === 0) {
      setError("Give at least one partition ref, like daily/revenue/date=2026-01-05, or a pattern like h={00..23}.");
      return;
    }
    setBusy(true);
    try {
      const reply = await send<CreateWantReply>('POST', '/api/wants', { partitions, rebuild, priority: Number(priority) || 0 });
      setRefs('');
      navigate(`/wants/${encodeURIComponent(reply.want_id)}`);
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="card create" onSubmit={submit} aria-label="Create a want">
      <h2>Want partitions built</h2>
      <label for="want-refs">Partition refs or brace patterns (space or newline separated)</label>
      <textarea id="want-refs" name="refs" rows={2} value={refs} placeholder="daily/revenue/date={2026-01-01..2026-01-31}" onInput={(e) => setRefs(e.currentTarget.value)} />
      <div class="row">
        <label>
          Rebuild{' '}
          <select name="rebuild" value={rebuild} onChange={(e) => setRebuild(e.currentTarget.value as RebuildPolicy)}>
            <option value="missing">missing (anything not live)</option>
            <option value="stale">stale (also stale or tainted)</option>
            <option value="all">all (everything)</option>
            <option value="absent">absent (never built only)</option>
          </select>
        </label>
        <label>
          Priority <input name="priority" type="number" step="1" value={priority} onInput={(e) => setPriority(e.currentTarget.value)} />
        </label>
        <button type="submit" disabled={busy}>
          Create want
        </button>
      </div>
      <ErrorNote error={error} />
    </form>
  );
}

/** A row's cancel; a refusal is said above the list (`onError`), where it is read: a row has no room for it. */
function CancelButton({ want, onError }: { want: WantView; onError: (error: string | undefined) => void }) {
  if (!ACTIVE.has(want.status)) return null;
  return (
    <button
      type="button"
      class="small"
      aria-label={`Cancel want ${want.want_id}`}
      onClick={() =>
        send('DELETE', `/api/wants/${encodeURIComponent(want.want_id)}`).then(
          () => onError(undefined),
          (err: unknown) => onError(`${want.want_id} was not canceled: ${messageOf(err)}`),
        )
      }
    >
      Cancel
    </button>
  );
}

export function WantsPage({ location }: { location: Location }) {
  const status = location.query.get('status') ?? '';
  const events = useEventCount();
  const [cancelError, setCancelError] = useState<string | undefined>(undefined);
  return (
    <section>
      <h1>Wants</h1>
      <CreateWant />
      <div data-cancel-error>
        <ErrorNote error={cancelError} />
      </div>
      <div class="filters">
        <label>
          Status{' '}
          <select value={status} onChange={(e) => setQuery({ status: e.currentTarget.value })}>
            <option value="">any</option>
            {WANT_STATUSES.map((s) => (
              <option value={s}>{s}</option>
            ))}
          </select>
        </label>
      </div>
      <VirtualList<WantView>
        label="Wants, newest first"
        empty="No wants yet."
        version={`${status}#${events}`}
        rowHeight={36}
        fetchPage={(offset, limit) => get<Page<WantView>>(`/api/wants${qs({ offset, limit, status, order: 'desc' })}`)}
        header={
          <>
            <span role="columnheader" class="c-id">Want</span>
            <span role="columnheader" class="c-status">Status</span>
            <span role="columnheader" class="c-wide">Partitions</span>
            <span role="columnheader" class="c-num">Age</span>
            <span role="columnheader" class="c-num">Priority</span>
            <span role="columnheader" class="c-mid">Source</span>
            <span role="columnheader" class="c-mid">SLA</span>
            <span role="columnheader" class="c-wide">Comment</span>
            <span role="columnheader" class="c-mid" />
          </>
        }
        row={(w) => (
          <>
            <span role="cell" class="c-id">
              <Link href={`/wants/${encodeURIComponent(w.want_id)}`}>{w.want_id}</Link>
            </span>
            <span role="cell" class="c-status" data-want={w.want_id}>
              <Status status={w.status} />
            </span>
            <span role="cell" class="c-wide" title={w.partitions.slice(0, 20).join('\n')}>
              {w.pattern || w.partitions.slice(0, 2).join(', ')}
              {w.partitions_total > 2 && !w.pattern ? ` +${n(w.partitions_total - 2)}` : ''}
            </span>
            <span role="cell" class="c-num"><Age iso={w.created_at} /></span>
            <span role="cell" class="c-num">{w.priority}</span>
            <span role="cell" class="c-mid">{w.backfill_id ? `backfill ${w.backfill_id}` : w.source}</span>
            <span role="cell" class="c-mid">{w.sla_missed ? <span class="status status-failed">missed</span> : w.sla_deadline ? 'ok' : ''}</span>
            <span role="cell" class="c-wide" data-comment={w.want_id} title={w.comment}>
              {short(w.comment)}
            </span>
            <span role="cell" class="c-mid">
              <CancelButton want={w} onError={setCancelError} />
            </span>
          </>
        )}
      />
    </section>
  );
}
