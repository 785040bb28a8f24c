/**
 * `platform partitions get` on a partition left `canceled` says why (found by QA, session 32: one whose run reported an
 * input missing, which then failed, read only "Its last run ... dep_missed."): no active want needs it, the wants it
 * was built for and how they ended, and where the inputs its run reported missing stand.
 */
import test from 'ava';
import { REPO_ROOT, runCli, startServer } from './helpers/server-fixture.js';

test('a canceled partition whose run reported a failed input missing says so, with its ended wants', async (t) => {
  const f = await startServer(t, {
    graph: {
      jobs: [
        { label: 'dm', outputs: ['dm/(?<k>.+)'], exec: ['bash', '-c', 'echo \'PLATFORM_MISSING_DEPS {"missing": ["src/a2"]}\'; exit 1'] },
        { label: 'src', outputs: ['src/(?<k>.+)'], exec: ['bash', '-c', 'exit 3'] },
      ],
    },
  });
  const build = runCli(t, ['--server-url', f.url, 'build', 'dm/a2'], REPO_ROOT);
  const { code } = await build.exited;
  t.not(code, 0, build.stdout());
  const get = runCli(t, ['--server-url', f.url, 'partitions', 'get', 'dm/a2'], REPO_ROOT);
  t.is((await get.exited).code, 0, get.stderr());
  const out = get.stdout();
  t.regex(out, /Its last run r-\d+ \(dm\) dep_missed/);
  t.regex(out, /It is canceled because no active want needs it any more: the wants it was built for ended \(w-1 upstream_failed\)\./, out);
  t.regex(out, /It reported its input missing: src\/a2 failed \(r-\d+\)\./, out);
});
