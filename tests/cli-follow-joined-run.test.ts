/**
 * A build that joins a run already going learns of that run only from the server's answer to a read of its
 * derived want's runs, while the run's own events come on the stream. When the run ends before that answer
 * arrives, the answer says "running" and its end event came first: the follow holds such events and applies them
 * after the read (lib/cli/held-run-events.ts). Here the real CLI follows through a proxy that keeps the answer
 * until the joined run has ended on the server, so the race is staged, not hoped for.
 */
import test from 'ava';
import { writeFileSync } from 'node:fs';
import { createServer, request } from 'node:http';
import { join } from 'node:path';
import { REPO_ROOT, runCli, startServer } from './helpers/server-fixture.js';
import { listenOnLoopback } from './helpers/http-stub.js';

interface RunView {
  job_run_id: string;
  status: string;
}

test('platform build shows a joined run ending when it ends, though the read that told of the run came back after its end', async (t) => {
  const graph = {
    max_concurrent_job_runs: 2,
    jobs: [
      // Runs until the follow has read it running (the proxy below lets it go then): the build's CLI starts in ~0.3 s,
      // more on a loaded machine, where a fixed 1 s, then 3 s, was over first and nothing was joined. 20 s at most, so
      // that a follow that never reads it fails the test rather than hang it.
      { label: 'slow', outputs: ['slow/(?<n>\\d+)'], exec: ['sh', '-c', 'i=0; while [ ! -e release-slow ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i + 1)); done'] },
      { label: 'top', outputs: ['top/(?<n>\\d+)'], inputs: [{ partition_ref: 'slow/${n}', dep_type: 'MATERIALIZE' }], exec: ['sleep', '1'] },
    ],
  };
  const f = await startServer(t, { graph });
  // The run the build will join: started for a want of its own, before the build.
  await f.postWant({ partitions: ['slow/1'] });
  let joined: RunView | undefined;
  for (const end = Date.now() + 20_000; joined?.status !== 'running' && Date.now() < end; ) {
    joined = (await f.getJson<{ data: RunView[] }>('/api/job_runs?limit=10')).data.find((r) => r.status === 'running');
    if (joined?.status !== 'running') await new Promise((r) => setTimeout(r, 10));
  }
  t.is(joined?.status, 'running', 'the run to join is running before the build begins');
  const joinedId = joined!.job_run_id;

  const ended = async () => {
    for (;;) {
      const run = await f.getJson<RunView>(`/api/job_runs/${joinedId}`);
      if (run.status === 'succeeded') return;
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  // Answers to reads of runs are taken from the server at once and handed on only once the joined run has ended
  // there (and its end has had time to reach the follow's event stream): each says what was true when it was read.
  let staleAnswers = 0;
  const proxy = createServer((req, res) => {
    const upstream = request(`${f.url}${req.url}`, { method: req.method, headers: req.headers }, (answer) => {
      if (!(req.method === 'GET' && req.url?.startsWith('/api/job_runs?'))) {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
        return;
      }
      const chunks: Buffer[] = [];
      answer.on('data', (c: Buffer) => chunks.push(c));
      answer.on('end', () => {
        const body = Buffer.concat(chunks);
        const runs = (JSON.parse(body.toString('utf8')) as { data: RunView[] }).data;
        if (runs.some((r) => r.job_run_id === joinedId && r.status === 'running')) {
          staleAnswers++;
          // Read while it ran: the joined run may end now, and this answer is handed on after its end.
          writeFileSync(join(f.dir, 'release-slow'), '');
        }
        void ended()
          .then(() => new Promise((r) => setTimeout(r, 300)))
          .then(() => {
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            res.end(body);
          });
      });
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  const proxyUrl = await listenOnLoopback(t, proxy);

  const build = runCli(t, ['--server-url', proxyUrl, 'build', 'top/1'], REPO_ROOT);
  const { code } = await build.exited;
  const out = build.stdout();
  t.is(code, 0, out + build.stderr());
  t.true(staleAnswers >= 1, `the follow read the joined run while it ran (the race was staged):\n${out}`);
  const lines = out.split('\n');
  const joinedEnd = lines.findIndex((l) => new RegExp(`\\] ${joinedId} slow succeeded$`).test(l));
  const topEnd = lines.findIndex((l) => / top succeeded$/.test(l));
  t.true(joinedEnd >= 0, `the joined run's end is shown:\n${out}`);
  t.true(topEnd >= 0, `the build's own run's end is shown:\n${out}`);
  // Shown when it came, before the run that waited for it ended: not first learned by the catch-up at the end.
  t.true(joinedEnd < topEnd, `the joined run's end is shown before the run that needed it ended:\n${out}`);
  t.regex(out, new RegExp(`${joinedId}\\s+slow\\s+succeeded`), 'the summary lists the joined run as succeeded');
});
