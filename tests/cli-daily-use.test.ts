/**
 * The CLI as a data engineer uses it over a day (the QA pass of session 28): a chain of dated jobs, one of which
 * fails for some dates, a slow one, and the commands run on them as a subprocess: what each prints, how it exits.
 */
import test from 'ava';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cliAgainst, type CliResult } from './helpers/cli-against.js';
import { sharedServer } from './helpers/shared-server.js';
import { until } from './helpers/until.js';

const GRAPH = {
  max_concurrent_job_runs: 4,
  jobs: [
    { label: 'raw', outputs: ['raw/date=(?<date>\\d{4}-\\d{2}-\\d{2})'], exec: ['bash', '-c', 'exit 0', 'raw'] },
    { label: 'ref', outputs: ['ref/date=(?<date>\\d{4}-\\d{2}-\\d{2})'], exec: ['bash', '-c', 'exit 0', 'ref'] },
    // A feed that is incomplete on days ending in 3.
    {
      label: 'daily',
      outputs: ['daily/date=(?<date>\\d{4}-\\d{2}-\\d{2})'],
      inputs: [{ partition_ref: 'raw/date=${date}', dep_type: 'MATERIALIZE' }],
      args: ['${date}'],
      exec: ['bash', '-c', 'case "$1" in *3) echo "feed incomplete for $1" >&2; exit 3;; esac', 'daily'],
    },
    {
      label: 'report',
      outputs: ['report/date=(?<date>\\d{4}-\\d{2}-\\d{2})'],
      inputs: [
        { partition_ref: 'daily/date=${date}', dep_type: 'MATERIALIZE' },
        { partition_ref: 'raw/date=${date}', dep_type: 'MATERIALIZE' },
        { partition_ref: 'ref/date=${date}', dep_type: 'MATERIALIZE' },
      ],
      exec: ['bash', '-c', 'exit 0', 'report'],
    },
    { label: 'slow', outputs: ['slow/(?<n>\\d+)'], exec: ['bash', '-c', 'sleep 60', 'slow'] },
    // Its input is a typo: no job makes it.
    { label: 'orphan', outputs: ['orphan/(?<n>\\d+)'], inputs: [{ partition_ref: 'misspelt/${n}', dep_type: 'MATERIALIZE' }], exec: ['bash', '-c', 'exit 0', 'orphan'] },
  ],
};

const shared = sharedServer(GRAPH, 'platform-daily-use-');
const cli = cliAgainst(shared.url);

const REPO = fileURLToPath(new URL('../../', import.meta.url));

/** The CLI with more in its environment (COLUMNS), as a pipe gets it. */
function cliWith(env: Record<string, string>, ...args: string[]): Promise<CliResult> {
  const childEnv = { ...process.env, ...env };
  delete childEnv.FORCE_COLOR;
  delete childEnv.NO_COLOR;
  const child = spawn(process.execPath, [join(REPO, 'bin', 'platform'), '--server-url', shared.url(), ...args], { cwd: REPO, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

/** The `[1.2s]` of each line of a plain (piped) progress, in the order printed. */
function progressTimes(stdout: string): number[] {
  return [...stdout.matchAll(/^\[(\d+(?:\.\d+)?)s\]/gm)].map((m) => Number(m[1]));
}

test.serial('backfills: a pipe gets the last progress line once; skipped partitions are said, with how to rebuild them', async (t) => {
  const failed = await cli('backfill', 'daily/date={2026-01-01..2026-01-04}');
  t.is(failed.code, 1, failed.stderr);
  const last = (s: string) => s.split('\n').filter((l) => /^bf-\d+ (failed|successful) \[/.test(l));
  t.is(last(failed.stdout).length, 1, `one final progress line:\n${failed.stdout}`);

  const skipped = await cli('backfill', 'daily/date={2026-01-01..2026-01-04}');
  t.is(skipped.code, 0, skipped.stderr);
  t.is(last(skipped.stdout).length, 1, `one final progress line:\n${skipped.stdout}`);
  t.regex(skipped.stdout, /3 live, 0 failed, 1 skipped of 4/);
  t.regex(skipped.stdout, /1 skipped: it had failed or was tainted before the backfill.*--policy failed/);

  // Its want names its rebuild as the backfill's policy too.
  const wantId = /^backfill bf-\d+ \(want (w-\d+)\)/m.exec(skipped.stdout)![1]!;
  t.regex((await cli('want', 'get', wantId)).stdout, /│ rebuild +│ absent \(the backfill's policy missing\) +│/);

  // Waited for after it ended: its state once, not twice.
  const id = /^backfill (bf-\d+)/m.exec(skipped.stdout)![1]!;
  const waited = await cli('backfills', 'wait', id);
  t.is(waited.code, 0, waited.stderr);
  t.is(last(waited.stdout).length, 1, `one progress line:\n${waited.stdout}`);
});

test.serial('list --status takes only the statuses of what it lists: a typo is a usage error (exit 2) naming --status', async (t) => {
  for (const [what, good] of [['want', 'successful'], ['job-runs', 'succeeded'], ['partitions', 'live']] as const) {
    const bad = await cli(what, 'list', '--status', 'sucessful');
    t.is(bad.code, 2, `${what}: ${bad.stderr}`);
    t.regex(bad.stderr, /--status must be one of /, what);
    t.notRegex(bad.stderr, /Query parameter/, what);
    const ok = await cli(what, 'list', '--status', good);
    t.is(ok.code, 0, `${what}: ${ok.stderr}`);
  }
  const json = await cli('--json', 'want', 'list', '--status', 'bogus');
  t.is(json.code, 2);
  t.like(JSON.parse(json.stderr.trim().split('\n').pop()!), { exit_code: 2 });
});

test.serial('want wait tells a want\'s history in the order it happened, its inputs\' runs first', async (t) => {
  const built = await cli('build', 'report/date=2026-02-01');
  t.is(built.code, 0, built.stderr);
  const id = /want (w-\d+) created/.exec(built.stdout)![1]!;
  const waited = await cli('want', 'wait', id);
  t.is(waited.code, 0, waited.stderr);
  const times = progressTimes(waited.stdout);
  t.true(times.length >= 8, waited.stdout);
  t.deepEqual(times, [...times].sort((a, b) => a - b), `times go forward:\n${waited.stdout}`);
  const order = [...waited.stdout.matchAll(/^\[[\d.]+s\] r-\d+ (\w+) succeeded/gm)].map((m) => m[1]);
  t.is(order[order.length - 1], 'report', 'the report ran last, after its inputs');
  // The summary lists the runs as they were queued: the report's last.
  const rows = [...waited.stdout.matchAll(/^│ r-\d+\s+│ (\w+)/gm)].map((m) => m[1]);
  t.is(rows[rows.length - 1], 'report', waited.stdout);
});

test.serial('partitions get: a past build\'s inputs are summed up in the history, not listed on one line', async (t) => {
  const got = await cli('partitions', 'get', 'report/date=2026-02-01');
  t.is(got.code, 0, got.stderr);
  const history = got.stdout.split('\n').filter((l) => /^│ b-\d+/.test(l));
  t.is(history.length, 1, got.stdout);
  t.regex(history[0]!, /\+1 more/, 'three inputs: two shown, then how many more');
});

test.serial('backfills get: a backfill still building counts its time until now, not until its last change', async (t) => {
  const started = await cli('--json', 'backfill', 'slow/{1..3}', '--max-concurrent', '1', '--detach');
  t.is(started.code, 0, started.stderr);
  const id = JSON.parse(started.stdout).backfill_id as string;
  const b = await until(
    async () => JSON.parse((await cli('--json', 'backfills', 'get', id)).stdout),
    (x) => x.running_job_runs === 1 && Date.now() - Date.parse(x.created_at) > 2_000 && Date.now() - Date.parse(x.updated_at) > 2_000,
    'its first run to start, and 2 s to pass since',
  );
  const got = await cli('backfills', 'get', id);
  t.is(got.code, 0, got.stderr);
  const shown = /partitions · (\d+(?:\.\d+)?)s/.exec(got.stdout);
  t.truthy(shown, got.stdout);
  t.true(Number(shown![1]) >= 2, `at least the 2 s since it was created (${b.created_at}):\n${got.stdout}`);
  t.is((await cli('backfills', 'cancel', id)).code, 0);
});

test.serial('want create --ttl and --sla take days too (1d), as a schedule\'s offset does', async (t) => {
  const r = await cli('--json', 'want', 'create', '--partition', 'raw/date=2026-03-01', '--ttl', '1d', '--sla', '2d');
  t.is(r.code, 0, r.stderr);
  t.like(JSON.parse(r.stdout).want, { ttl_seconds: 86_400, sla_seconds: 172_800 });
  // Answered 'idle' (the orchestrator has not stepped yet): it says how to follow it, not only that it idles.
  const text = await cli('want', 'create', '--partition', 'slow/9');
  t.is(text.code, 0, text.stderr);
  const [, id] = /^Created want (w-\d+) \((?:idle|building)\)\.[^]*\nFollow it: platform want wait (w-\d+)\n$/.exec(text.stdout) ?? [];
  t.truthy(id, text.stdout);
  t.is((await cli('want', 'cancel', id!)).code, 0);
});

test.serial('a table fits the terminal width COLUMNS gives: long cells wrap, none is lost', async (t) => {
  const long = 'raw/date=2026-04-01';
  t.is((await cli('want', 'create', '--partition', long, '--comment', 'a long comment that says why this is wanted, in words')).code, 0);
  const r = await cliWith({ COLUMNS: '60' }, 'want', 'list', '--order', 'desc', '--limit', '3');
  t.is(r.code, 0, r.stderr);
  const widths = r.stdout.split('\n').filter((l) => l !== '').map((l) => [...l].length);
  t.true(Math.max(...widths) <= 60, `every line within 60 columns:\n${r.stdout}`);
  // The comment column shows its first 40 characters (as it did); none of those is lost to the width.
  t.true(r.stdout.replace(/[│\s]/g, '').includes('alongcommentthatsayswhythisiswa'), r.stdout);
  t.true(r.stdout.replace(/[│\s]/g, '').includes('raw/date=2026-04-01'), r.stdout);
  const wide = await cli('want', 'list', '--order', 'desc', '--limit', '3');
  t.regex(wide.stdout, /│ raw\/date=2026-04-01 +│ .*│ a long comment that says why this is wa/, 'a pipe without COLUMNS keeps each row on one line');
});

test.serial('a build whose input no job makes names the run without doubled parentheses', async (t) => {
  const r = await cli('build', 'orphan/1');
  t.is(r.code, 1, r.stderr);
  t.regex(r.stderr, /job run r-\d+ \(unresolved\) failed: No job produces ref "misspelt\/1"/);
  t.notRegex(r.stderr, /\(\(unresolved\)\)/);
});

test.serial("a failed build quotes the last line its failed run wrote to stderr: why, not only 'exit code 3'", async (t) => {
  const r = await cli('build', 'daily/date=2026-05-13');
  t.is(r.code, 1, r.stderr);
  t.regex(r.stderr, /job run (r-\d+) \(daily\) failed: exited with code 3\n {4}its stderr ends: feed incomplete for 2026-05-13\nSee why: platform logs \1/);
  const json = await cli('--json', 'build', 'daily/date=2026-05-23');
  t.is(json.code, 1);
  t.regex(JSON.parse(json.stderr.trim().split('\n').pop()!).error, /its stderr ends: feed incomplete for 2026-05-23/);
});

test.serial('taint and want create take brace patterns as build does: a week of late data is one command', async (t) => {
  t.is((await cli('build', 'raw/date={2026-06-01..2026-06-07}')).code, 0);
  const tainted = await cli('--json', 'taint', 'raw/date={2026-06-01..2026-06-07}', '--reason', 'late rows');
  t.is(tainted.code, 0, tainted.stderr);
  t.is(JSON.parse(tainted.stdout).partitions_total, 7);
  const wanted = await cli('--json', 'want', 'create', '--partition', 'raw/date={2026-06-08..2026-06-09}', '-p', 'ref/date=2026-06-08');
  t.is(wanted.code, 0, wanted.stderr);
  t.deepEqual(JSON.parse(wanted.stdout).want.partitions, ['raw/date=2026-06-08', 'raw/date=2026-06-09', 'ref/date=2026-06-08']);
  const bad = await cli('taint', 'raw/date={2026-06-01..2026-06-07');
  t.is(bad.code, 2, 'a malformed pattern is a usage error, as build says it');
  // Every usage error starts as commander's own do ("error: option ..."), so it reads as one kind of mistake.
  t.regex(bad.stderr, /^error: Partition pattern .* is never closed/);
  const none = await cli('want', 'create');
  t.is(none.code, 2);
  t.regex(none.stderr, /^error: a want needs at least one --partition/);
  const json = await cli('--json', 'taint', 'raw/date={2026-06-01..2026-06-07');
  t.is(json.code, 2);
  t.regex((JSON.parse(json.stderr) as { error: string }).error, /^Partition pattern /, 'under --json the error is the message alone');
});
