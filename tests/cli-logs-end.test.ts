/**
 * `platform logs -f` of a run that did not succeed ends saying why and which run to follow next: a run lost or
 * canceled read as a bare "canceled", and a failed attempt's retry was not named. The real server, the real CLI.
 */
import test from 'ava';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cliAgainst } from './helpers/cli-against.js';
import { createWant, startServer, waitForWant } from './helpers/server-fixture.js';
import { poll } from './helpers/jobs-fixture.js';

const graph = {
  jobs: [
    // Fails its first attempt, succeeds its retry.
    { label: 'once', outputs: ['once/(?<n>\\d+)'], exec: ['sh', '-c', 'if [ -e .failed-once ]; then exit 0; fi; touch .failed-once; exit 3'], retries: 1 },
    { label: 'held', outputs: ['held/(?<n>\\d+)'], exec: ['sh', '-c', 'while [ ! -e release ]; do sleep 0.05; done'] },
  ],
};

test('a followed run that failed and was tried again ends naming its retry; one canceled with its want says why', async (t) => {
  const f = await startServer(t, { graph, platform: { executor: 'supervised' } });
  t.teardown(() => writeFileSync(join(f.dir, 'release'), ''));
  const cli = cliAgainst(() => f.url);

  const once = await waitForWant(f, await createWant(f, ['once/1']), ['successful']);
  const [first, retry] = once.job_run_ids as string[];
  const followed = await cli('logs', '-f', first!);
  t.is(followed.code, 0, followed.stderr);
  t.regex(followed.stderr, new RegExp(`^job run ${first} failed \\(exit 3\\); once/1 is built by ${retry} now: platform logs -f ${retry}\\n$`));

  const held = await createWant(f, ['held/1']);
  let run = '';
  t.true(await poll(async () => !!(run = ((await f.getJson(`/api/wants/${held}`)) as { job_run_ids: string[] }).job_run_ids[0] ?? ''), 10_000), 'its run was queued');
  const following = cli('logs', '-f', run);
  t.true(await poll(async () => ((await f.getJson(`/api/job_runs/${run}`)) as { status: string }).status === 'running', 10_000));
  t.is((await f.api(`/api/wants/${held}`, { method: 'DELETE' })).status, 200);
  const canceled = await following;
  t.is(canceled.code, 0, canceled.stderr);
  t.regex(canceled.stderr, new RegExp(`^job run ${run} canceled[^\\n]*: want ${held} canceled`));
  t.notRegex(canceled.stderr, /is built by/, 'nothing took its place');
});
