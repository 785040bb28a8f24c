/**
 * Schedules from platform.json (in its order, a page of 100 at a time): their cron and zone, whether they are paused
 * (with a button to pause or resume each), their last tick and how its want is doing, what they skipped, their next
 * tick.
 */
import { useState } from 'preact/hooks';
import type { ScheduleChangeReply, ScheduleView } from '../../../lib/api/schedules.js';
import type { EventView } from '../../../lib/api/views.js';
import { get, qs, send, type Page } from '../api.js';
import { Pager } from '../components/pager.js';
import { Link } from '../components/link.js';
import { ErrorNote, Status, When, duration } from '../components/status.js';
import { useLive } from '../hooks.js';
import { queryOffset, setOffset, type Location } from '../router.js';

const PAGE = 100;

const SCHEDULE_EVENTS = new Set(['want_created', 'schedules_changed', 'schedule_ticks_skipped', 'schedule_paused', 'schedule_resumed']);
/** Events that may end a want: what moves a last tick's want that is still going. */
const ENDINGS = new Set(['job_run_succeeded', 'job_run_failed', 'job_run_canceled', 'job_run_dep_missed', 'want_canceled']);
const ACTIVE = new Set(['idle', 'building', 'upstream_building']);

/**
 * What changes a schedule's row: a tick's want, a skip, a pause or resume, platform.json's schedules; and, while a
 * shown last want is still going, whatever may end it (a want that ended never changes again, so then nothing does).
 */
const relevant = (e: EventView, last: Page<ScheduleView> | undefined) =>
  SCHEDULE_EVENTS.has(e.type) || (ENDINGS.has(e.type) && (last?.data.some((s) => s.last_want_status !== null && ACTIVE.has(s.last_want_status)) ?? true));

/** Pause or resume, by the button; the row changes when the event comes back on the stream. */
function PauseButton({ schedule }: { schedule: ScheduleView }) {
  const [error, setError] = useState<string | undefined>(undefined);
  const verb = schedule.paused ? 'resume' : 'pause';
  return (
    <>
      <button
        type="button"
        class="small"
        data-action={verb}
        aria-label={`${schedule.paused ? 'Resume' : 'Pause'} schedule ${schedule.name}`}
        onClick={() =>
          send<ScheduleChangeReply>('POST', `/api/schedules/${encodeURIComponent(schedule.name)}/${verb}`, verb === 'pause' ? {} : undefined).then(
            () => setError(undefined),
            (err: unknown) => setError(err instanceof Error ? err.message : String(err)),
          )
        }
      >
        {schedule.paused ? 'Resume' : 'Pause'}
      </button>
      {error ? (
        <span class="error" role="alert">
          {error}
        </span>
      ) : null}
    </>
  );
}

const seconds = (s: number) => (s > 0 ? duration(s * 1000) : '');

export function SchedulesPage({ location }: { location: Location }) {
  const offset = queryOffset(location.query);
  const loaded = useLive((signal) => get<Page<ScheduleView>>(`/api/schedules${qs({ offset, limit: PAGE })}`, signal), [offset], relevant);
  const page = loaded.data;
  const rows = page?.data ?? [];
  return (
    <section>
      <h1>Schedules</h1>
      <ErrorNote error={loaded.error} />
      {page && page.total === 0 ? <p class="empty">No schedules: add "schedules" to platform.json.</p> : null}
      {rows.length > 0 ? (
        <div class="scroll">
          <table aria-label="Schedules, in the order of platform.json">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">State</th>
                <th scope="col">Cron</th>
                <th scope="col">Partitions</th>
                <th scope="col">Since</th>
                <th scope="col">Last tick</th>
                <th scope="col">Its want</th>
                <th scope="col">Skipped</th>
                <th scope="col">Next tick</th>
                <th scope="col">Offset</th>
                <th scope="col">Priority</th>
                <th scope="col">Catch-up</th>
                <th scope="col">TTL / SLA</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((s) => (
                <tr key={s.name} data-schedule={s.name}>
                  <td>{s.name}</td>
                  <td data-field="state">
                    {s.paused ? (
                      <>
                        <Status status="paused" />{' '}
                        <span class="dim" data-field="paused_at">
                          since <When iso={s.paused_at} />
                        </span>
                        {s.paused_reason ? <div data-field="paused_reason">{s.paused_reason}</div> : null}
                      </>
                    ) : (
                      <span class="dim">running</span>
                    )}{' '}
                    <PauseButton schedule={s} />
                  </td>
                  <td data-field="cron">
                    <code>{s.cron}</code> <span class="dim" data-field="timezone">{s.timezone}</span>
                  </td>
                  <td class="dim">{s.partitions.join(', ')}</td>
                  <td data-field="since">{s.since ? <When iso={s.since} /> : <span class="dim">not yet run</span>}</td>
                  <td data-field="last_tick">
                    <When iso={s.last_tick} />
                  </td>
                  <td data-field="last_want">
                    {s.last_want_id ? <Link href={`/wants/${encodeURIComponent(s.last_want_id)}`}>{s.last_want_id}</Link> : ''}{' '}
                    {s.last_want_status ? <Status status={s.last_want_status} /> : null}
                    {s.recent_failed > 0 ? (
                      <div class="dim" data-field="recent_failed">
                        {s.recent_failed} of the last {s.recent_ticks} failed
                      </div>
                    ) : null}
                  </td>
                  <td data-field="skipped">
                    {s.skipped_ticks > 0 ? (
                      <>
                        <span data-field="skipped_ticks">
                          {s.skipped_ticks_at_least ? 'at least ' : ''}
                          {s.skipped_ticks.toLocaleString('en')}
                        </span>
                        <div class="dim" data-field="last_skipped_tick">
                          latest <When iso={s.last_skipped_tick} />
                        </div>
                      </>
                    ) : (
                      ''
                    )}
                  </td>
                  <td data-field="next_tick">
                    {s.paused ? <span class="dim">none while paused</span> : <When iso={s.next_tick} />}
                    {s.next_partitions.length > 0 ? (
                      <div class="dim" data-field="next_partitions">
                        {s.next_partitions.slice(0, 3).join(', ')}
                        {s.next_partitions.length > 3 ? ` +${s.next_partitions.length - 3}` : ''}
                      </div>
                    ) : null}
                  </td>
                  <td data-field="offset">{s.offset}</td>
                  <td data-field="priority">{s.priority}</td>
                  <td data-field="catchup">{s.catchup}</td>
                  <td>
                    {[seconds(s.ttl_seconds) && `ttl ${seconds(s.ttl_seconds)}`, seconds(s.sla_seconds) && `sla ${seconds(s.sla_seconds)}`].filter(Boolean).join(', ')}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      {page && offset > 0 && offset >= page.total ? (
        <p class="empty">
          This page starts after the last schedule (there are {page.total.toLocaleString('en')}).{' '}
          <Link href="/schedules">Go to the first schedules.</Link>
        </p>
      ) : page && page.total > PAGE ? (
        <Pager offset={offset} size={PAGE} total={page.total} go={setOffset} />
      ) : page && page.total > 0 ? (
        <p class="count">{page.total.toLocaleString('en')} in all</p>
      ) : null}
    </section>
  );
}
