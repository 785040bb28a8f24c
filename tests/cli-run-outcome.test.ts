/** How `platform job-runs list` says a run ended (a retry to come, one whose time has passed, the run that retried it) and when it started. */
import test from 'ava';
import { runOutcome, startedCell } from '../lib/cli/commands/job-runs-command.js';

const failed = (retry_at: string | null) => ({ status: 'failed' as const, exit_code: 3, signal: null, reason: 'exited with code 3', retry_at });

test('a failed run with a retry to come says when; once that time passed it no longer promises one', (t) => {
  const soon = new Date(Date.now() + 60_000).toISOString();
  const gone = new Date(Date.now() - 60_000).toISOString();
  t.regex(runOutcome(failed(soon)), /^exited with code 3; retry at \d{4}-/);
  t.regex(runOutcome(failed(gone)), /^exited with code 3; retry was due \d{4}-/);
  t.is(runOutcome(failed(null)), 'exited with code 3');
});

test('a failed run that was retried names the run that retried it, whether its retry time passed or not', (t) => {
  const soon = new Date(Date.now() + 60_000).toISOString();
  const gone = new Date(Date.now() - 60_000).toISOString();
  t.is(runOutcome({ ...failed(gone), retried_by: 'r-7' }), 'exited with code 3; retried as r-7');
  t.is(runOutcome({ ...failed(soon), retried_by: 'r-7' }), 'exited with code 3; retried as r-7');
});

test('Started: a time once it started; "waiting" while it waits in a queue for a worker, though a hand-over time is recorded', (t) => {
  const handedOver = '2026-01-05T10:00:00.000Z';
  t.is(startedCell({ status: 'running', worker: 'redis:platform-runs', started_at: handedOver }), 'waiting');
  t.regex(startedCell({ status: 'running', worker: 'w1', started_at: handedOver }), /^2026-01-0\d \d\d:\d\d:\d\d$/);
  t.regex(startedCell({ status: 'running', worker: 'local', started_at: handedOver }), /^2026-/);
  t.is(startedCell({ status: 'queued', worker: null, started_at: null }), '');
  // Ended without a worker ever taking it (canceled in the queue): what was recorded is shown.
  t.regex(startedCell({ status: 'canceled', worker: 'redis:platform-runs', started_at: handedOver }), /^2026-/);
});
