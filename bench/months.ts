/**
 * Issue 14's retention over months: the same partitions rebuilt day after day (each rebuild a want, a run and a
 * build: the events a daemon writes for them, appended straight to the log), `retention.events_keep` applied by
 * `POST /api/gc` at the end of each month, then a restart after kill -9. With history pruned along with its events,
 * the event log, the compaction base and the restart must stay flat while the events ever written grow.
 */
import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { EventPayload } from '../lib/events/build-event.js';
import { EventLog } from '../lib/events/event-log.js';
import { dirMiB, wantEvents } from './history.js';
import { kill, serve } from './serve-process.js';

export interface MonthFigures {
  month: number;
  eventsWritten: number;
  belMiB: number;
  baseMiB: number;
  gcMs: number;
  restartMs: number;
  wantsKept: number;
}

export async function monthsBench(root: string, partitions: number, months: number, rebuildsPerMonth: number): Promise<MonthFigures[]> {
  const dir = join(root, 'months');
  mkdirSync(dir, { recursive: true });
  const keep = partitions * rebuildsPerMonth; // about a week of events: a quarter of a month's
  writeFileSync(
    join(dir, 'platform.json'),
    JSON.stringify({ retention: { events_keep: keep }, jobs: [{ label: 'hist', outputs: ['hist/(?<n>\\d+)'], exec: ['true'] }] }),
  );
  const figures: MonthFigures[] = [];
  let made = 0;
  let clock = Date.now() - months * rebuildsPerMonth * partitions;
  for (let month = 1; month <= months; month++) {
    const log = await EventLog.open(join(dir, '.platform', 'bel'));
    for (let r = 0; r < rebuildsPerMonth; r++) {
      for (let p = 1; p <= partitions; p += 250) {
        const batch: EventPayload[] = [];
        for (let k = p; k < Math.min(partitions + 1, p + 250); k++) batch.push(...wantEvents(++made, `hist/${k}`));
        await log.append(batch, (clock += 250), { sync: false });
      }
    }
    const eventsWritten = log.latestId();
    await log.close();
    let { url, child } = await serve(dir);
    const t0 = performance.now();
    const gc = await fetch(`${url}/api/gc`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    if (!gc.ok) throw new Error(`POST /api/gc answered ${gc.status}: ${await gc.text()}`);
    const gcMs = performance.now() - t0;
    await kill(child, 'SIGKILL');
    const again = await serve(dir);
    ({ url, child } = again);
    const status = (await (await fetch(`${url}/api/status`)).json()) as { counts?: { wants?: number } };
    figures.push({
      month,
      eventsWritten,
      belMiB: dirMiB(join(dir, '.platform', 'bel')),
      baseMiB: statSync(join(dir, '.platform', 'compacted.bin')).size / 1024 / 1024,
      gcMs,
      restartMs: again.startedMs,
      wantsKept: status.counts?.wants ?? -1,
    });
    await kill(child, 'SIGTERM');
  }
  return figures;
}
