/** Schedules from platform.json, with their last and next tick. */
import { get } from '../api.js';
import { Link } from '../components/link.js';
import { ErrorNote } from '../components/status.js';
import { useLive } from '../hooks.js';

interface ScheduleRow {
  name: string;
  cron: string;
  partitions: string[];
  last_tick: string | number | null;
  last_want_id?: string | null;
  next_tick: string | number | null;
  [more: string]: unknown;
}

const when = (t: string | number | null | undefined): string => (t === null || t === undefined || t === '' || t === 0 ? '' : new Date(t).toISOString());

export function SchedulesPage() {
  const loaded = useLive((signal) => get<{ data: ScheduleRow[] }>('/api/schedules', signal), [], (e) => e.type === 'want_created');
  const rows = loaded.data?.data ?? [];
  return (
    <section>
      <h1>Schedules</h1>
      <ErrorNote error={loaded.error} />
      {loaded.data && rows.length === 0 ? <p class="empty">No schedules: add "schedules" to platform.json.</p> : null}
      {rows.length > 0 ? (
        <div class="scroll">
          <table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Cron</th>
                <th scope="col">Partitions</th>
                <th scope="col">Last tick</th>
                <th scope="col">Its want</th>
                <th scope="col">Next tick</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((s) => (
                <tr key={s.name}>
                  <td>{s.name}</td>
                  <td>
                    <code>{s.cron}</code>
                  </td>
                  <td class="dim">{s.partitions.join(', ')}</td>
                  <td>{when(s.last_tick)}</td>
                  <td>{s.last_want_id ? <Link href={`/wants/${encodeURIComponent(s.last_want_id)}`}>{s.last_want_id}</Link> : ''}</td>
                  <td>{when(s.next_tick)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </section>
  );
}
