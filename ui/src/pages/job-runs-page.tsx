/** Job runs by status, paged by the server: the attempt that retried each retried one, duration, exit code, attempt, where it ran. */
import type { JobRunView } from '../../../lib/api/views.js';
import { placementText, waitingForWorker } from '../../../lib/api/run-placement.js';
import { JOB_RUN_STATUSES } from '../../../lib/state/build-state.js';
import { get, qs, type Page } from '../api.js';
import { Link } from '../components/link.js';
import { Status, duration } from '../components/status.js';
import { VirtualList } from '../components/virtual-list.js';
import { useEventCount } from '../event-count.js';
import { useNow } from '../clock.js';
import { setQuery, type Location } from '../router.js';
import { groupDigits as n } from '../../../lib/group-digits.js';

/**
 * How long it ran, or has run so far: nothing before it started, nor while it waits in a queue for a worker (its
 * recorded start is then when it was handed to the queue).
 */
export const runDuration = (r: JobRunView, now = Date.now()): string =>
  r.started_at && !waitingForWorker(r) ? duration((r.ended_at ? Date.parse(r.ended_at) : now) - Date.parse(r.started_at)) : '';

/** {@link runDuration}, counting each second while the run runs. */
export function RunDuration({ run }: { run: JobRunView }) {
  const now = useNow(run.started_at !== null && run.ended_at === null);
  return <>{runDuration(run, now)}</>;
}

/** A run that was retried: "retried as" its next attempt, a link to that run's page. Nothing for any other run. */
export function RetriedAs({ run }: { run: Pick<JobRunView, 'retried_by'> }) {
  if (!run.retried_by) return null;
  return (
    <span class="retried" data-retried-by={run.retried_by}>
      {' '}
      retried as <Link href={`/job_runs/${encodeURIComponent(run.retried_by)}`}>{run.retried_by}</Link>
    </span>
  );
}

/** Where a run ran: 'local' or a worker's name, or that it waits for one; nothing before it started. */
export const workerOf = (r: JobRunView): string => placementText(r.worker);

export function JobRunsPage({ location }: { location: Location }) {
  const status = location.query.get('status') ?? '';
  // `?want=`: one want's runs (the API's want_id), as its page links to them.
  const want = location.query.get('want') ?? '';
  const events = useEventCount((e) => e.type.startsWith('job_run_'));
  return (
    <section>
      <h1>
        Job runs
        {want ? (
          <>
            {' '}of <Link href={`/wants/${encodeURIComponent(want)}`}>{want}</Link>
          </>
        ) : null}
      </h1>
      <div class="filters">
        {want ? <Link href={status ? `/job_runs?status=${encodeURIComponent(status)}` : '/job_runs'}>All wants' runs</Link> : null}
        <label>
          Status{' '}
          <select value={status} onChange={(e) => setQuery({ want, status: e.currentTarget.value })}>
            <option value="">any</option>
            {JOB_RUN_STATUSES.map((s) => (
              <option value={s}>{s}</option>
            ))}
          </select>
        </label>
      </div>
      <VirtualList<JobRunView>
        label="Job runs, newest first"
        empty="No job runs yet."
        version={`${want}#${status}#${events}`}
        rowHeight={36}
        fetchPage={(offset, limit) => get<Page<JobRunView>>(`/api/job_runs${qs({ offset, limit, status, want_id: want, order: 'desc' })}`)}
        header={
          <>
            <span role="columnheader" class="c-id">Run</span>
            <span role="columnheader" class="c-mid">Job</span>
            <span role="columnheader" class="c-outcome">Status</span>
            <span role="columnheader" class="c-num">Duration</span>
            <span role="columnheader" class="c-num">Exit</span>
            <span role="columnheader" class="c-num">Attempt</span>
            <span role="columnheader" class="c-mid">Worker</span>
            <span role="columnheader" class="c-wide">Outputs</span>
          </>
        }
        row={(r) => (
          <>
            <span role="cell" class="c-id">
              <Link href={`/job_runs/${encodeURIComponent(r.job_run_id)}`}>{r.job_run_id}</Link>
            </span>
            <span role="cell" class="c-mid">{r.job_label}</span>
            <span role="cell" class="c-outcome">
              <Status status={r.status} />
              <RetriedAs run={r} />
            </span>
            <span role="cell" class="c-num">
              <RunDuration run={r} />
            </span>
            <span role="cell" class="c-num">{r.exit_code ?? r.signal ?? ''}</span>
            <span role="cell" class="c-num">{r.attempt}</span>
            <span role="cell" class="c-mid">{workerOf(r)}</span>
            {/* A run in a list carries its first 20 outputs: the count is outputs_total (a batch run builds hundreds). */}
            <span role="cell" class="c-wide">{r.outputs.slice(0, 2).join(', ')}{r.outputs_total > 2 ? ` +${n(r.outputs_total - 2)}` : ''}</span>
          </>
        )}
      />
    </section>
  );
}
