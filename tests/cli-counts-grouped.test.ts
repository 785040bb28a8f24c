/**
 * Counts of thousands read grouped (`12,345`) wherever the CLI prints a backfill's progress, a page's footer, a want's
 * tree or a taint: a backfill of 10,000 read "9928/10000 partitions · live 9928 · pending 64", a taint "tainted 15014
 * partitions", a tree "+4997 (user, 5000 job runs)".
 */
import test from 'ava';
import type { BackfillView } from '../lib/client/platform-client.js';
import { renderBackfill } from '../lib/cli/backfill-progress.js';
import { wantDetail, wantTreeLines } from '../lib/cli/commands/want-command.js';
import type { WantView } from '../lib/api/views.js';
import { colors, pageFooter } from '../lib/cli/output.js';

colors.level = 0;

const backfill: BackfillView = {
  backfill_id: 'bf-2',
  want_id: 'w-9',
  status: 'building',
  pattern: 'b/n={1..12000}',
  partitions: 12_000,
  policy: 'missing',
  priority: 0,
  max_concurrent_job_runs: 2_000,
  comment: '',
  counts: { live: 9_928, failed: 1_001, skipped: 1_000, building: 1_000, waiting: 1_000, pending: 1_064, canceled: 1_234 },
  progress: 0.99,
  running_job_runs: 1_500,
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-01T00:00:00.000Z',
  cancel_reason: null,
};

test("a backfill's progress groups its counts", (t) => {
  const [head, counts] = renderBackfill(backfill, 12_000);
  t.regex(head!, / 11,929\/12,000 partitions · /);
  t.is(counts, '  live 9,928 · failed 1,001 · skipped 1,000 · building 1,000 · waiting 1,000 · pending 1,064 · canceled 1,234 · 1,500 running (cap 2,000)');
});

test("a page's footer and a want's tree group their counts", (t) => {
  t.is(pageFooter({ data: [1], total: 35_001, offset: 1_999 }, 'partitions'), 'showing 2,000-2,000 of 35,001 partitions (use --offset and --limit for more)');
  t.is(pageFooter({ data: [], total: 20_000, offset: 99_999 }, 'partitions'), 'no partitions at offset 99999 (there are 20,000; use a smaller --offset)');
  const lines = wantTreeLines({
    want_id: 'w-1',
    nodes: [{ want_id: 'w-1', parent_want_id: null, depth: 0, status: 'successful', source: 'user', partitions: ['a', 'b', 'c'], partitions_total: 5_000, job_runs_total: 5_000, children_total: 1_017 }],
    truncated: true,
    limit: 1,
  });
  t.deepEqual(lines, ['w-1 successful a, b, c +4,997 more (user, 5,000 job runs)', '└─ … 1,017 more derived wants (raise --limit)']);
});

const want = (rebuilt: string[], rebuilt_total: number): WantView => ({
  want_id: 'w-3',
  partitions: ['p/1'],
  partitions_total: 1,
  status: 'successful',
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-01T00:00:00.000Z',
  comment: '',
  data_timestamp: null,
  ttl_seconds: 0,
  sla_seconds: 0,
  sla_deadline: null,
  expires_at: null,
  source: 'user',
  parent_want_id: null,
  root_want_id: 'w-3',
  child_want_ids: [],
  child_wants_total: 0,
  job_run_ids: [],
  job_runs_total: 0,
  partition_status: { 'p/1': 'live' },
  cancel_reason: null,
  rebuild: 'all',
  sla_missed: false,
  rebuilt,
  rebuilt_total,
  priority: 0,
  backfill_id: null,
  max_concurrent_job_runs: 0,
  pattern: '',
  schedule_tick: null,
});

test("a want's rebuilds past the reply's bounded list are counted once, by their total", (t) => {
  const refs = (n: number) => Array.from({ length: n }, (_, i) => `p/${i}`);
  // The API lists at most 1,000: the rest is known only as the total (it said "… 990 more" and "(10,000 rebuilds in all)").
  const capped = wantDetail(want(refs(1_000), 10_000));
  t.regex(capped, /p\/9\b[^\n]*\n[^\n]*… \(10,000 rebuilds in all\)/);
  t.notRegex(capped, /990 more/);
  // All listed: how many more than the ten shown.
  const listed = wantDetail(want(refs(1_000), 1_000));
  t.regex(listed, /… 990 more/);
  t.notRegex(listed, /in all/);
  // A partition rebuilt twice: the total says so under the list.
  t.regex(wantDetail(want(refs(3), 4)), /p\/2[^\n]*\n[^\n]*… \(4 rebuilds in all\)/);
});
