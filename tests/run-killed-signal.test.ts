/**
 * A job killed by a signal has no exit code: every surface says which signal killed it, with exit_code null, where
 * they said -1 (the log's int32 stand-in for none). The real server and the real CLI, with the in-process and the
 * supervised executor (whose launcher reports a signal death as 128+n, read back as the signal). The events are
 * written as every earlier version wrote them (exit_code -1, signal named), so this is also how old logs fold.
 */
import test from 'ava';
import { cliAgainst } from './helpers/cli-against.js';
import { createWant, startServer, waitForWant, type ServerFixture } from './helpers/server-fixture.js';

const graph = {
  jobs: [
    { label: 'killed', outputs: ['killed/(?<n>\\d+)'], exec: ['bash', '-c', 'kill -KILL $$'] },
    { label: 'sour', outputs: ['sour/(?<n>\\d+)'], exec: ['bash', '-c', 'exit 3'] },
  ],
};

async function failedRun(f: ServerFixture, ref: string): Promise<string> {
  const w = await createWant(f, [ref]);
  const want = await waitForWant(f, w, ['failed']);
  return want.job_run_ids[0] as string;
}

for (const executor of ['in-process', 'supervised'] as const) {
  test(`${executor}: a job killed by SIGKILL reads exit_code null and signal SIGKILL in the REST view, the log's end, the CLI and the embedding API; one that exited 3 reads 3`, async (t) => {
    const f = await startServer(t, { graph, platform: { executor } });
    const cli = cliAgainst(() => f.url);
    const killed = await failedRun(f, 'killed/1');
    const view = await f.getJson(`/api/job_runs/${killed}`);
    t.like(view, { status: 'failed', exit_code: null, signal: 'SIGKILL', reason: 'killed by SIGKILL' });
    t.like(f.platform.state().job_runs.get(killed), { exit_code: null, signal: 'SIGKILL' }, 'the embedding API');
    const end = /^event: end\ndata: (.*)$/m.exec(await (await f.api(`/api/job_runs/${killed}/logs/stdout?follow=true`)).text())?.[1];
    t.deepEqual(JSON.parse(end ?? 'null'), { status: 'failed', exit_code: null, signal: 'SIGKILL' }, "the followed log's end");

    const table = await cli('job-runs', 'get', killed);
    t.is(table.code, 0, table.stderr);
    t.notRegex(table.stdout, /exit code.*-1/, 'no exit code -1 in the table');
    t.regex(table.stdout, /│ signal +│ SIGKILL +│/);
    const json = await cli('job-runs', 'get', killed, '--json');
    t.like(JSON.parse(json.stdout), { exit_code: null, signal: 'SIGKILL' });
    const logs = await cli('logs', '-f', killed);
    t.regex(logs.stderr, new RegExp(`job run ${killed} failed \\(killed by SIGKILL\\)`));

    const sour = await failedRun(f, 'sour/1');
    t.like(await f.getJson(`/api/job_runs/${sour}`), { exit_code: 3, signal: null, reason: 'exited with code 3' });
    const sourTable = await cli('job-runs', 'get', sour);
    t.regex(sourTable.stdout, /│ exit code +│ 3 +│/);
  });
}
