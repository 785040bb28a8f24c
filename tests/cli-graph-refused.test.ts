/**
 * While platform.json is refused (an edit the daemon does not take: the last valid graph goes on), `GET /api/status`
 * says why in `graph_problem`, `platform status` shows it, and `platform schedules` says the file was refused rather
 * than "add schedules to platform.json" to a user whose file has one. The real server reading a real platform.json,
 * the real CLI as a subprocess.
 */
import test from 'ava';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeWorkspace, runCli, startServer } from './helpers/server-fixture.js';

const JOBS = [{ label: 'ok', outputs: ['ok/(?<n>[a-z0-9]+)'], exec: ['true'] }];

async function cli(t: Parameters<typeof startServer>[0], url: string, cwd: string, ...args: string[]) {
  const p = runCli(t, ['--server-url', url, ...args], cwd);
  const { code } = await p.exited;
  return { code, stdout: p.stdout(), stderr: p.stderr() };
}

test('a refused platform.json is said by /api/status (graph_problem), platform status and the empty schedules list', async (t) => {
  const dir = await makeWorkspace(t);
  const file = join(dir, 'platform.json');
  writeFileSync(file, JSON.stringify({ jobs: JOBS }));
  // The graph read from the file (not given), so that an edit of it is looked at.
  const f = await startServer(t, { dir, platform: { graph: undefined } });
  t.is((await f.getJson('/api/status')).graph_problem, null, 'a valid file: null');
  const valid = await cli(t, f.url, dir, 'status');
  t.notRegex(valid.stdout, /graph/);
  t.regex((await cli(t, f.url, dir, 'schedules')).stdout, /^no schedules: add "schedules" to platform\.json/);

  writeFileSync(file, JSON.stringify({ jobs: JOBS, schedules: [{ name: 'hourly', cron: '0 * * * *', partitions: ['ok/h'], catchup: -1 }] }));
  const problem = (await f.getJson('/api/status')).graph_problem as string;
  t.regex(problem, /platform\.json: schedules\[0\] \(schedule "hourly"\)\.catchup: must be a whole number from 0 to 1000 .*got -1\./);

  const status = await cli(t, f.url, dir, 'status');
  t.is(status.code, 0, status.stderr);
  t.true(status.stdout.includes(`  graph      platform.json is refused, the daemon goes on with the last valid graph until it is fixed: ${problem}`), status.stdout);
  const json = JSON.parse((await cli(t, f.url, dir, '--json', 'status')).stdout) as { graph_problem: string };
  t.is(json.graph_problem, problem);

  const schedules = await cli(t, f.url, dir, 'schedules');
  t.is(schedules.code, 0, schedules.stderr);
  t.is(schedules.stdout, `no schedules in use: platform.json is refused, the daemon goes on with the last valid graph until it is fixed: ${problem}\n`);
  t.notRegex(schedules.stdout, /add "schedules"/);

  // Removed: refused too (the last valid graph goes on), and said so.
  rmSync(file);
  t.regex((await f.getJson('/api/status')).graph_problem as string, /platform\.json is missing\. Put it back/);
  // Fixed: nothing said any more.
  writeFileSync(file, JSON.stringify({ jobs: JOBS }));
  t.is((await f.getJson('/api/status')).graph_problem, null);
});
