/** How `platform job-runs list` says a run ended: a retry to come, and one whose time has passed. */
import test from 'ava';
import { runOutcome } from '../lib/cli/commands/job-runs-command.js';

const failed = (retry_at: string | null) => ({ status: 'failed' as const, exit_code: 3, signal: null, reason: 'exited with code 3', retry_at });

test('a failed run with a retry to come says when; once that time passed it no longer promises one', (t) => {
  const soon = new Date(Date.now() + 60_000).toISOString();
  const gone = new Date(Date.now() - 60_000).toISOString();
  t.regex(runOutcome(failed(soon)), /^exited with code 3; retry at \d{4}-/);
  t.regex(runOutcome(failed(gone)), /^exited with code 3; retry was due \d{4}-/);
  t.is(runOutcome(failed(null)), 'exited with code 3');
});
