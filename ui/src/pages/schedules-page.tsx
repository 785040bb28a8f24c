/** Schedules from platform.json (in its order, a page of 100 at a time): their cron and zone, last and next tick. */
import type { ScheduleView } from '../../../lib/api/schedules.js';
import { get, qs, type Page } from '../api.js';
import { Pager } from '../components/pager.js';
import { Link } from '../components/link.js';
import { ErrorNote, When, duration } from '../components/status.js';
import { useLive } from '../hooks.js';
import { queryOffset, setOffset, type Location } from '../router.js';

const PAGE = 100;

/** What changes a schedule's row: a tick's want, or platform.json's schedules. */
const relevant = (e: { type: string }) => e.type === 'want_created' || e.type === 'schedules_changed';

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
                <th scope="col">Cron</th>
                <th scope="col">Partitions</th>
                <th scope="col">Since</th>
                <th scope="col">Last tick</th>
                <th scope="col">Its want</th>
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
                  <td data-field="cron">
                    <code>{s.cron}</code> <span class="dim" data-field="timezone">{s.timezone}</span>
                  </td>
                  <td class="dim">{s.partitions.join(', ')}</td>
                  <td data-field="since">{s.since ? <When iso={s.since} /> : <span class="dim">not yet run</span>}</td>
                  <td data-field="last_tick">
                    <When iso={s.last_tick} />
                  </td>
                  <td>{s.last_want_id ? <Link href={`/wants/${encodeURIComponent(s.last_want_id)}`}>{s.last_want_id}</Link> : ''}</td>
                  <td data-field="next_tick">
                    <When iso={s.next_tick} />
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
      {page && page.total > PAGE ? (
        <Pager offset={offset} size={PAGE} total={page.total} go={setOffset} />
      ) : page && page.total > 0 ? (
        <p class="count">{page.total.toLocaleString('en')} in all</p>
      ) : null}
    </section>
  );
}
