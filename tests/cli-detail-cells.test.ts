/**
 * A detail table's cells are cut to CELL_LINES: a record of a thousand lines is a wall to scroll through (--json has
 * it all), and a list's "+N more" counts the whole, not the page. (Before session 28 the cut also kept cli-table3 out
 * of its slow path for cells of many lines, which took a run's thousand inputs beyond printing; cli-table3 is now
 * given a cell's lines as rows of their own, tests/table-layout.test.ts.)
 */
import test from 'ava';
import { groupDigits } from '../lib/group-digits.js';
import type { JobRunView } from '../lib/api/views.js';
import { jobRunDetail } from '../lib/cli/commands/job-runs-command.js';
import { partitionDetail } from '../lib/cli/commands/partitions-command.js';
import { CELL_LINES, detailTable, listShort, printable } from '../lib/cli/output.js';

test("a run's thousand inputs print as their first CELL_LINES and how many more of all of them", (t) => {
  const inputs = Array.from({ length: 1000 }, (_, i) => ({ dep_type: 'MATERIALIZE' as const, partition_ref: `in/${i} with space` }));
  const run: JobRunView = {
    job_run_id: 'r-1', job_label: 'fan', status: 'succeeded', outputs: ['out/1'], outputs_total: 1,
    config: { outputs: ['out/1'], inputs, args: [], env: {} }, inputs_total: 2000, env_total: 0, truncated: true,
    want_ids: [], wants_total: 0, attempt: 1, exec: ['true'], timeout_seconds: 0, pid: 1, worker: 'local', exit_code: 0, signal: null,
    reason: null, missing: [], retry_at: null, retried_by: null, queued_at: '2026-01-01T00:00:00.000Z', started_at: null, ended_at: null, duration_ms: null, priority: 0,
  };
  const out = jobRunDetail(run);
  t.is(out.split('\n').filter((l) => l.includes('(MATERIALIZE)')).length, CELL_LINES);
  t.regex(out, new RegExp(`… ${groupDigits(2000 - CELL_LINES)} more`), "grouped: 1,980");
});

test('any cell built by hand is cut too; a list says how many more of the whole', (t) => {
  const lines = Array.from({ length: 500 }, (_, i) => `line ${i} of a long cell`);
  const out = detailTable([['many', lines.join('\n')]]);
  t.regex(out, new RegExp(`… ${500 - CELL_LINES} more lines \\(--json has them all\\)`));
  t.is(listShort(['a', 'b', 'c'], 2, 1200), 'a, b +1,198 more');
  t.is(listShort(['a', 'b'], 3), 'a, b');
});

test("partitions get of a partition whose tainted build's rebuild failed says its build is still tainted", (t) => {
  const detail = {
    partition_ref: 'raw/a', status: 'failed' as const, stale: false, stale_reasons: [], stale_reasons_total: 0, build_tainted: true, rebuild_failed: false,
    current_build: { build_id: 'b-3', job_run_id: 'r-1', job_label: 'raw', built_at: '2026-01-01T00:00:00.000Z', inputs: [], inputs_total: 0 },
    builds: [], builds_total: 1, downstream: [], downstream_total: 0, job_run_id: 'r-2', created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z',
  };
  t.regex(partitionDetail(detail), /its build b-3 is tainted and not yet replaced/);
  t.notRegex(partitionDetail({ ...detail, build_tainted: false }), /is tainted/);
  t.regex(partitionDetail(detail), /nothing consumed this build/);
  // Never live: no build, so no word of what consumed it.
  const never = partitionDetail({ ...detail, build_tainted: false, current_build: null, builds_total: 0 });
  t.regex(never, /no build to consume/);
  t.notRegex(never, /consumed this build/);
});

test("printable: a job's terminal sequences are dropped from a quote of its stderr, other control characters shown as their pictures", (t) => {
  t.is(printable('\u001b[31merror:\u001b[0m disk full'), 'error: disk full');
  t.is(printable('x\u001b]0;pwned\u0007y\u001b[2Jz'), 'xyz', 'a title and a clear screen dropped');
  t.is(printable('a\tb\u007fc\u009bd\u0000'), 'a\u2409b\u2421c\ufffdd\u2400');
  t.is(printable('plain, émoji 🚀'), 'plain, émoji 🚀');
});
