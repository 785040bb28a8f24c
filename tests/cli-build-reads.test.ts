/**
 * What `platform build` asks of the daemon while it follows a build: the events stream, and the want only when the
 * build may have ended. A read of the root want after every event cost a build of 2,000 runs half its time (the
 * want's JSON written by the daemon and parsed by the command, thousands of times). The real CLI talks to the real
 * daemon through a proxy that counts the requests by path. The runs it reads, it reads a page of a want's at a time.
 */
import test from 'ava';
import { createServer, request } from 'node:http';
import { REPO_ROOT, runCli, startServer } from './helpers/server-fixture.js';
import { listenOnLoopback } from './helpers/http-stub.js';

async function countingProxy(t: { teardown: (fn: () => Promise<void>) => void }, target: string): Promise<{ url: string; paths: string[] }> {
  const paths: string[] = [];
  const server = createServer((req, res) => {
    paths.push(`${req.method} ${req.url}`);
    const upstream = request(`${target}${req.url}`, { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  return { url: await listenOnLoopback(t, server), paths };
}

test('platform build reads its want when the build may have ended, not after each of its events', async (t) => {
  // Two at a time, each a little while: the build is followed by its events, not found done by the first reads.
  const f = await startServer(t, { graph: { max_concurrent_job_runs: 2, jobs: [{ label: 'nap', outputs: ['nap/(?<n>\\d+)'], exec: ['sleep', '0.02'] }] } });
  const proxy = await countingProxy(t, f.url);
  const build = runCli(t, ['--server-url', proxy.url, '--json', 'build', 'nap/{1..30}'], REPO_ROOT);
  const { code } = await build.exited;
  t.is(code, 0, build.stderr());
  const out = JSON.parse(build.stdout()) as { want: { want_id: string; status: string } };
  t.is(out.want.status, 'successful');
  // 30 runs: 90 events (queued, started, succeeded) on the stream, all of them about this build.
  const runs = (await f.getJson<{ data: unknown[] }>('/api/job_runs?limit=100')).data;
  t.is(runs.length, 30);
  const reads = proxy.paths.filter((p) => p === `GET /api/wants/${out.want.want_id}`);
  // The poll's first read and one after the last run ended (one more each time no run was left to go): far fewer
  // than the 90 events, each of which was a read before (60 here, the rest coming in bursts).
  t.true(reads.length >= 1, proxy.paths.join('\n'));
  t.true(reads.length <= 10, `${reads.length} reads of the want:\n${proxy.paths.join('\n')}`);
  t.true(proxy.paths.some((p) => p.startsWith('GET /api/events/stream')), 'the build followed the events stream');
  // The runs the want had at its creation, and every run's detail for --json: a page of the want's runs each time,
  // not a request a run (60 here before).
  t.deepEqual(proxy.paths.filter((p) => p.startsWith('GET /api/job_runs/')), []);
  const pages = proxy.paths.filter((p) => p.startsWith(`GET /api/job_runs?`));
  t.true(pages.length >= 1 && pages.length <= 4, pages.join('\n'));
  t.true(pages.every((p) => p.includes(`want_id=${out.want.want_id}`)), pages.join('\n'));
  const printed = JSON.parse(build.stdout()) as { job_runs: Array<{ job_run_id: string; status: string }> };
  t.is(printed.job_runs.length, 30);
  t.true(printed.job_runs.every((r) => r.status === 'succeeded'));
});

test('want wait reads the tree of a building want in one request, not each derived want, and names the run that failed', async (t) => {
  // top/<n> needs mid/<n> needs leaf/<n>; leaf/3 fails, a while after the follow began.
  const graph = {
    max_concurrent_job_runs: 2,
    jobs: [
      { label: 'leaf', outputs: ['leaf/(?<n>\\d+)'], args: ['${n}'], exec: ['bash', '-c', 'sleep 0.4; [ "$1" != 3 ]', 'leaf'] },
      { label: 'mid', outputs: ['mid/(?<n>\\d+)'], inputs: [{ partition_ref: 'leaf/${n}', dep_type: 'MATERIALIZE' }], exec: ['true'] },
      { label: 'top', outputs: ['top/(?<n>\\d+)'], inputs: [{ partition_ref: 'mid/${n}', dep_type: 'MATERIALIZE' }], exec: ['true'] },
    ],
  };
  const f = await startServer(t, { graph });
  const res = await f.postWant({ partitions: ['top/1', 'top/2', 'top/3'] });
  const { want_id } = (await res.json()) as { want_id: string };
  // Its derived wants exist before the follow begins: the follow must read them.
  for (let i = 0; i < 200; i++) {
    const tree = await f.getJson<{ nodes: Array<{ depth: number }> }>(`/api/wants/${want_id}/tree`);
    if (tree.nodes.some((n) => n.depth === 2)) break;
    await new Promise((r) => setTimeout(r, 10));
  }
  const proxy = await countingProxy(t, f.url);
  const wait = runCli(t, ['--server-url', proxy.url, 'want', 'wait', want_id], REPO_ROOT);
  const { code } = await wait.exited;
  t.is(code, 1, wait.stdout() + wait.stderr());
  t.regex(wait.stdout() + wait.stderr(), /upstream_failed/);
  t.regex(wait.stdout() + wait.stderr(), /leaf/);
  const wantReads = proxy.paths.filter((p) => p.startsWith('GET /api/wants/'));
  t.true(wantReads.includes(`GET /api/wants/${want_id}/tree?limit=1000`), wantReads.join('\n'));
  // Derived wants of at most three partitions are whole in the tree: none is read on its own.
  t.deepEqual(wantReads.filter((p) => !p.startsWith(`GET /api/wants/${want_id}`)), []);
});
