/**
 * A backfill's progress redrawn in place on a terminal fits its width: a line the terminal wrapped is a row the redraw
 * does not go back over, so each redraw left one behind (on 80 columns the counts line of a large backfill is ~95
 * characters). In a pipe (no width) it is as before: one line each, joined.
 */
import test from 'ava';
import type { BackfillView } from '../lib/client/platform-client.js';
import { renderBackfill } from '../lib/cli/backfill-progress.js';

const view: BackfillView = {
  backfill_id: 'bf-12',
  want_id: 'w-9',
  status: 'upstream_building',
  pattern: 'agg/date={2010-01-01..2023-09-09}',
  partitions: 100_000,
  policy: 'failed',
  priority: 0,
  max_concurrent_job_runs: 8,
  comment: '',
  counts: { live: 45_380, failed: 1_200, skipped: 0, building: 6, waiting: 10, pending: 53_404, canceled: 0 },
  progress: 0.4658,
  running_job_runs: 6,
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-01T00:00:00.000Z',
  cancel_reason: null,
};

test('every line fits the width at 80, 60, 40 and 20 columns, and every count is still there', (t) => {
  for (const width of [79, 59, 39, 20]) {
    const lines = renderBackfill(view, 83_000, undefined, width);
    for (const l of lines) t.true(l.length <= width, `${width}: ${JSON.stringify(l)} is ${l.length}`);
    const text = lines.join(' ');
    if (width >= 39) {
      for (const count of ['live 45,380', 'failed 1,200', 'skipped 0', 'building 6', 'waiting 10', 'pending 53,404', '6 running (cap 8)']) t.true(text.includes(count), `${width}: ${count} in ${text}`);
    }
    if (width >= 59) t.regex(lines[0]!, /^bf-12 upstream_building \[#+-+\] 46% 46,580\/100,000( partitions)? · 1m23s$/, `${width}`);
  }
  t.deepEqual(renderBackfill(view, 83_000, undefined, 59).slice(1), ['  live 45,380 · failed 1,200 · skipped 0 · building 6', '  waiting 10 · pending 53,404 · 6 running (cap 8)']);
  t.is(renderBackfill(view, 83_000, undefined, 59)[0], 'bf-12 upstream_building [##----] 46% 46,580/100,000 · 1m23s', 'the word goes first');
  t.is(renderBackfill(view, 83_000, undefined, 39)[0], 'bf-12 upstream_building 46% 46,580/100…', 'no room for a bar: none, and the rest cut');
});

test('in a pipe (no width) it is one head and one line of counts, the bar 24 wide', (t) => {
  const [head, counts, ...rest] = renderBackfill(view, 83_000);
  t.is(head, `bf-12 upstream_building [${'#'.repeat(11)}${'-'.repeat(13)}] 46% 46,580/100,000 partitions · 1m23s`);
  t.is(counts, '  live 45,380 · failed 1,200 · skipped 0 · building 6 · waiting 10 · pending 53,404 · 6 running (cap 8)');
  t.deepEqual(rest, []);
});
