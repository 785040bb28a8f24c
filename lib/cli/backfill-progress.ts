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

/**
 * `bf-1 building [#####-----] 42% 4,200/10,000 · 3m10s` then `live 4,100 · failed 2 · skipped 98 · building 2 ...`.
 * With a `width` (a terminal's, redrawn in place) no line is longer: the bar narrows (and goes below 4 columns), the
 * counts go on over more lines, between two counts, and what still does not fit is cut with `…`; a line the terminal
 * wrapped would be a row the redraw does not go back over, left behind at each redraw.
 */
export function renderBackfill(b: BackfillView, elapsedMs: number, paint: BackfillPaint = plain, width?: number): string[] {
  const done = settledCount(b);
  const ratio = b.partitions === 0 ? 1 : done / b.partitions;
  // In integers: 29 / 100 * 100 is 28.999..., which read 28%.
  const pct = b.partitions === 0 ? 100 : Math.floor((done * 100) / b.partitions);
  const before = `${b.backfill_id} ${b.status} `;
  const tail = (word: string) => ` ${pct}% ${groupDigits(done)}/${word ? partitionCount(b.partitions) : groupDigits(b.partitions)} · ${elapsed(elapsedMs)}`;
  const bar = (barWidth: number, after: string) => {
    const filled = Math.floor(ratio * barWidth);
    return `${before}[${paint.good('#'.repeat(filled))}${paint.dim('-'.repeat(barWidth - filled))}]${after}`;
  };
  let head: string;
  if (width === undefined) head = bar(BAR_WIDTH, tail('partitions'));
  else {
    // Narrower, it gives up the word "partitions", then the bar, then what does not fit.
    const room = (after: string) => Math.min(BAR_WIDTH, width - before.length - after.length - 2);
    const after = [tail('partitions'), tail('')].find((a) => room(a) >= 4);
    head = after !== undefined ? bar(room(after), after) : cut(`${before.trimEnd()}${tail('')}`, width);
  }
  const c = b.counts;
  const parts: Array<[string, ((s: string) => string)?]> = [
    [`live ${groupDigits(c.live)}`],
    [`failed ${groupDigits(c.failed)}`, c.failed > 0 ? paint.bad : undefined],
    [`skipped ${groupDigits(c.skipped)}`],
    [`building ${groupDigits(c.building)}`, c.building > 0 ? paint.busy : undefined],
    [`waiting ${groupDigits(c.waiting)}`],
    [`pending ${groupDigits(c.pending)}`],
    // Only a canceled backfill has any: a "canceled 0" on every other line says nothing.
    ...(c.canceled > 0 ? [[`canceled ${groupDigits(c.canceled)}`, paint.bad] as [string, (s: string) => string]] : []),
    [`${groupDigits(b.running_job_runs)} running${b.max_concurrent_job_runs > 0 ? ` (cap ${groupDigits(b.max_concurrent_job_runs)})` : ''}`],
  ];
  const lines = [head];
  let line = '';
  let room = 0;
  for (const [text, colour] of parts) {
    const t = cut(text, width === undefined ? undefined : width - 2);
    if (line !== '' && width !== undefined && room < t.length + 3) {
      lines.push(line);
      line = '';
    }
    if (line === '') {
      line = '  ';
      room = width === undefined ? Infinity : width - 2;
    } else {
      line += ' · ';
      room -= 3;
    }
    line += colour ? colour(t) : t;
    room -= t.length;
  }
  lines.push(line);
  return lines;
}

/** The text cut to `width` columns with `…` (counts and ids: one column a character). */
function cut(text: string, width: number | undefined): string {
  if (width === undefined || text.length <= width) return text;
  return width > 1 ? `${text.slice(0, width - 1)}…` : '…';
}

/** For a pipe: a line when the backfill crosses each tenth of its range, or changes status. */
export function plainMilestone(before: BackfillView | undefined, now: BackfillView): boolean {
  if (!before) return true;
  if (before.status !== now.status) return true;
  const tenth = (b: BackfillView) => (b.partitions === 0 ? 10 : Math.floor((settledCount(b) / b.partitions) * 10));
  return tenth(now) > tenth(before);
}
