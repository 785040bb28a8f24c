/**
 * What list footers, a run's Detail and `platform logs` say at their edges, as QA met them: a page past the end of
 * a list (it read "showing 5000-5000 of 205"), a `dep_missed` run in `job-runs list` (its Detail was empty where the
 * build's table names the refs it missed), the log of a run that never started (nothing, exit 0). The real CLI as a
 * subprocess against the real server with real job processes.
 */
import test from 'ava';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, startServer, waitFor, waitForWant, createWant } from './helpers/server-fixture.js';

const GRAPH = {
  max_concurrent_job_runs: 1,
  jobs: [
    { label: 'src', outputs: ['src/(?<n>[a-z0-9]+)'], exec: ['bash', '-c', 'echo built'] },
    // Holds the only slot until the test releases it: what a queued run waits behind.
    { label: 'hold', outputs: ['hold/(?<n>[a-z0-9]+)'], exec: ['bash', '-c', 'while [ ! -e release ]; do sleep 0.05; done'] },
    {
      // Reports its input missing the first time (a dep_missed run), then succeeds once it was built.
      label: 'miss',
      outputs: ['miss/(?<n>[a-z0-9]+)'],
      args: ['${n}', 'src/${n}1'],
      exec: ['bash', '-c', 'test -e "missed-$1" && exit 0; touch "missed-$1"; echo "PLATFORM_MISSING_DEPS {\\"missing\\": [\\"$2\\"]}"; exit 1', 'miss'],
    },
  ],
};

async function cli(t: Parameters<typeof startServer>[0], url: string, cwd: string, ...args: string[]) {
  const p = runCli(t, ['--server-url', url, ...args], cwd);
  const { code } = await p.exited;
  return { code, stdout: p.stdout(), stderr: p.stderr() };
}

test('a page past the end of a list says there is nothing at that offset and how many there are, on every list', async (t) => {
  const f = await startServer(t, { graph: GRAPH });
  for (const ref of ['src/a', 'src/b']) await waitForWant(f, await createWant(f, [ref]), ['successful']);
  for (const [args, noun] of [
    [['want', 'list'], 'wants'],
    [['job-runs', 'list'], 'job runs'],
    [['partitions', 'list'], 'partitions'],
  ] as const) {
    for (const offset of ['2', '5000']) {
      const r = await cli(t, f.url, f.dir, ...args, '--offset', offset);
      t.is(r.code, 0, r.stderr);
      t.is(r.stdout, `no ${noun} at offset ${offset} (there are 2; use a smaller --offset)\n`, `${args.join(' ')} --offset ${offset}`);
    }
    const last = await cli(t, f.url, f.dir, ...args, '--offset', '1');
    t.regex(last.stdout, new RegExp(`showing 2-2 of 2 ${noun}`), 'a page within the list: its range, as before');
  }
  const one = await cli(t, f.url, f.dir, 'want', 'list', '--status', 'successful', '--limit', '1', '--offset', '9');
  t.regex(one.stdout, /^no wants at offset 9 \(there are 2; use a smaller --offset\)$/m);
});

test("a dep_missed run's Detail in job-runs list names the refs it missed, as the build's table does", async (t) => {
  const f = await startServer(t, { graph: GRAPH });
  await waitForWant(f, await createWant(f, ['miss/x']), ['successful']);
  const list = await cli(t, f.url, f.dir, 'job-runs', 'list', '--status', 'dep_missed');
  t.is(list.code, 0, list.stderr);
  t.regex(list.stdout, /│ r-1\s+│ miss\s+│ dep_missed\s+│.*│ missing src\/x1\s+│/);
});

test('platform logs of a run that has not started, or never did, says so on stderr (there is no log), not nothing', async (t) => {
  const f = await startServer(t, { graph: GRAPH });
  const holding = await createWant(f, ['hold/a']);
  await waitFor('hold/a to run', () => (f.platform.state().job_runs_by_status.running.size === 1 ? true : undefined));
  const queued = await createWant(f, ['src/q']);
  const run = await waitFor('src/q to be queued', () => [...f.platform.state().job_runs.values()].find((r) => r.config.outputs.includes('src/q')));
  const waiting = await cli(t, f.url, f.dir, 'logs', run.job_run_id);
  t.is(waiting.code, 0);
  t.is(waiting.stdout, '');
  t.is(waiting.stderr, `job run ${run.job_run_id} has not started yet (queued): it has no log yet; 'platform logs -f ${run.job_run_id}' waits for it and follows it.\n`);
  const cancel = await cli(t, f.url, f.dir, 'want', 'cancel', queued);
  t.is(cancel.code, 0, cancel.stderr);
  await waitForWant(f, queued, ['canceled']);
  const never = await cli(t, f.url, f.dir, 'logs', run.job_run_id, '--stderr');
  t.is(never.stdout, '');
  t.regex(never.stderr, new RegExp(`^job run ${run.job_run_id} never started \\(canceled: .*\\): it has no log\\. More: platform job-runs get ${run.job_run_id}\\.\\n$`));
  const json = await cli(t, f.url, f.dir, '--json', 'logs', run.job_run_id);
  t.deepEqual(JSON.parse(json.stdout), { job_run_id: run.job_run_id, stream: 'stdout', text: '' }, '--json: the text as it is');
  writeFileSync(join(f.dir, 'release'), '');
  await waitForWant(f, holding, ['successful']);
  // A run that started and printed nothing: nothing said, as before.
  const empty = await cli(t, f.url, f.dir, 'logs', 'r-1', '--stderr');
  t.is(empty.stdout, '');
  t.is(empty.stderr, '');
});
