/**
 * A backfill's progress as the terminal shows it: one aggregate bar and its counts, however many partitions and
 * runs it has (a line per run is for builds; ten thousand of them are not read, they are counted). Pure: a view
 * of the backfill in, lines out.
 */
import { groupDigits } from '../group-digits.js';
import type { BackfillView } from '../client/platform-client.js';
import { elapsed } from './build-progress.js';

const BAR_WIDTH = 24;

export interface BackfillPaint {
  good: (s: string) => string;
  bad: (s: string) => string;
  busy: (s: string) => string;
  dim: (s: string) => string;
}

const plain: BackfillPaint = { good: (s) => s, bad: (s) => s, busy: (s) => s, dim: (s) => s };

/** `1 partition`, `2 partitions`: a backfill of one listed ref is not '1 partitions'. */
export function partitionCount(n: number, kind = ''): string {
  return `${groupDigits(n)} ${kind ? `${kind} ` : ''}partition${n === 1 ? '' : 's'}`;
}

export function settledCount(b: BackfillView): number {
  return b.counts.live + b.counts.failed + b.counts.skipped;
}

/** `bf-1 building [#####-----] 42% 4200/10000 · 3m10s` then `live 4100 · failed 2 · skipped 98 · building 2 ...`. */
export function renderBackfill(b: BackfillView, elapsedMs: number, paint: BackfillPaint = plain): string[] {
  const done = settledCount(b);
  const filled = b.partitions === 0 ? BAR_WIDTH : Math.floor((done / b.partitions) * BAR_WIDTH);
  const pct = b.partitions === 0 ? 100 : Math.floor((done / b.partitions) * 100);
  const head =
    `${b.backfill_id} ${b.status} [${paint.good('#'.repeat(filled))}${paint.dim('-'.repeat(BAR_WIDTH - filled))}] ` +
    `${pct}% ${groupDigits(done)}/${partitionCount(b.partitions)} · ${elapsed(elapsedMs)}`;
  const c = b.counts;
  const parts = [
    `live ${groupDigits(c.live)}`,
    c.failed > 0 ? paint.bad(`failed ${groupDigits(c.failed)}`) : `failed 0`,
    `skipped ${groupDigits(c.skipped)}`,
    c.building > 0 ? paint.busy(`building ${groupDigits(c.building)}`) : 'building 0',
    `waiting ${groupDigits(c.waiting)}`,
    `pending ${groupDigits(c.pending)}`,
    // Only a canceled backfill has any: a "canceled 0" on every other line says nothing.
    ...(c.canceled > 0 ? [paint.bad(`canceled ${groupDigits(c.canceled)}`)] : []),
    `${groupDigits(b.running_job_runs)} running${b.max_concurrent_job_runs > 0 ? ` (cap ${groupDigits(b.max_concurrent_job_runs)})` : ''}`,
  ];
  return [head, `  ${parts.join(' · ')}`];
}

/** For a pipe: a line when the backfill crosses each tenth of its range, or changes status. */
export function plainMilestone(before: BackfillView | undefined, now: BackfillView): boolean {
  if (!before) return true;
  if (before.status !== now.status) return true;
  const tenth = (b: BackfillView) => (b.partitions === 0 ? 10 : Math.floor((settledCount(b) / b.partitions) * 10));
  return tenth(now) > tenth(before);
}
