/** An edited platform.json takes effect in the running daemon; a broken edit is reported and changes nothing. */
import test from 'ava';
import { existsSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { WorkspaceGraph } from '../lib/graph/workspace-graph.js';
import { Platform } from '../lib/platform.js';
import { bash, makeWorkspace, startServer, waitForWant } from './helpers/jobs-fixture.js';

const job = (label: string) => ({ label, outputs: [`${label}/(?<n>\\d+)`], exec: bash(`touch ${label}-$1.done`), args: ['${n}'] });

test('a job added to platform.json is buildable without a restart; an invalid edit is a 400 and the old graph stays', async (t) => {
  const dir = makeWorkspace(t);
  const graphFile = join(dir, 'platform.json');
  writeFileSync(graphFile, JSON.stringify({ jobs: [job('alpha')] }));
  const logged: string[] = [];
  const platform = await Platform.open(dir, { tickMs: 60_000, logError: (m) => logged.push(m) });
  t.teardown(() => platform.close());
  const server = await startServer(t, platform);
  const post = (partitions: string[]) =>
    fetch(`${server.url}/api/wants`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ partitions }) });

  const before = await post(['beta/1']);
  t.is(before.status, 400, 'no job produces beta/1 yet');

  writeFileSync(graphFile, JSON.stringify({ jobs: [job('alpha'), job('beta')] }));
  const added = await post(['beta/1']);
  t.is(added.status, 201);
  const { want_id } = (await added.json()) as { want_id: string };
  await waitForWant(platform, want_id, ['successful']);
  t.true(existsSync(join(dir, 'beta-1.done')));

  writeFileSync(graphFile, '{"jobs": [');
  const broken = await post(['alpha/2']);
  t.is(broken.status, 400);
  const body = (await broken.json()) as { error: string };
  t.regex(body.error, /platform\.json/);
  t.regex(body.error, /last valid graph/);
  // The daemon goes on with the last good graph for work already accepted...
  t.is(platform.resolver.jobFor('beta/9').label, 'beta');
  // ...and its log says so, once for the edit however often the file is looked at.
  await post(['alpha/3']);
  const refusals = logged.filter((m) => /platform\.json was edited but not taken into use/.test(m));
  t.is(refusals.length, 1, logged.join('\n'));
  t.regex(refusals[0]!, /last valid graph goes on/);

  writeFileSync(graphFile, JSON.stringify({ jobs: [job('alpha')] }));
  const fixed = await post(['alpha/2']);
  t.is(fixed.status, 201);
  t.is((await post(['beta/2'])).status, 400, 'beta is gone again');
});

test("requests of one turn share a look at platform.json that comes after each of them; the step's look does not wait for the turn", async (t) => {
  const dir = makeWorkspace(t);
  const graphFile = join(dir, 'platform.json');
  writeFileSync(graphFile, JSON.stringify({ jobs: [job('alpha')] }));
  const graph = await WorkspaceGraph.open(dir);
  const labels = () => graph.current().graph.jobs.map((j) => j.label).join(',');

  // Two requests in one turn join one reload; an edit made between them is still seen by both (the stat is later).
  const first = graph.refreshAfterTurn();
  writeFileSync(graphFile, JSON.stringify({ jobs: [job('alpha'), job('beta')] }));
  const second = graph.refreshAfterTurn();
  t.is(first, second, 'one reload for the turn');
  await first;
  t.is(labels(), 'alpha,beta');

  // A request's reload waiting for the turn's end begins at once when the step asks: the step never waits a turn.
  // (The file is unchanged here: a changed one is read through the thread pool, which takes a turn or more anyway.)
  let turnEnded = false;
  setImmediate(() => (turnEnded = true));
  const request = graph.refreshAfterTurn();
  const step = graph.refresh();
  t.is(step, request, 'the step joins the reload the request queued');
  await step;
  t.false(turnEnded, "the step's reload did not wait for the turn to end");
  await request;
});

// A script that edits platform.json and then asks the RPCs got the graph before the edit ("No job produces" the job it
// just added), and, while the file was broken, the last valid graph's answer without a word of it.
test('the PlatformService RPCs answer from platform.json as it is now; a broken file is failed_precondition saying so', async (t) => {
  const dir = makeWorkspace(t);
  const graphFile = join(dir, 'platform.json');
  writeFileSync(graphFile, JSON.stringify({ jobs: [job('alpha')] }));
  const platform = await Platform.open(dir, { tickMs: 60_000, logError: () => {} });
  t.teardown(() => platform.close());
  const server = await startServer(t, platform);
  const call = async (refs: string[]) => {
    const res = await fetch(`${server.url}/platform.v1.PlatformService/GetJobConfigs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ outputRefs: refs }),
    });
    return { status: res.status, body: (await res.json()) as { configs?: Array<{ outputs: string[] }>; code?: string; message?: string } };
  };
  t.is((await call(['beta/1'])).body.code, 'invalid_argument', 'no job produces beta/1 yet');

  writeFileSync(graphFile, JSON.stringify({ jobs: [job('alpha'), job('beta')] }));
  const added = await call(['beta/1']);
  t.is(added.status, 200, JSON.stringify(added.body));
  t.deepEqual(added.body.configs?.map((c) => c.outputs), [['beta/1']]);

  writeFileSync(graphFile, '{"jobs": [');
  const broken = await call(['alpha/1']);
  t.is(broken.status, 400);
  t.is(broken.body.code, 'failed_precondition');
  t.regex(broken.body.message ?? '', /platform\.json.*not valid JSON.*last valid graph; fix the file and retry/);
});

test('platform.json gone for a while is refused as a broken edit: work under way goes on with the last valid graph and ends; a start without it on a log with history is refused, saying what to do', async (t) => {
  const dir = makeWorkspace(t);
  const graphFile = join(dir, 'platform.json');
  // A run that waits until the test lets it end, so the file is gone while its want is active.
  const gated = { label: 'gated', outputs: ['gated/(?<n>\\d+)'], exec: bash('for i in $(seq 200); do [ -f go ] && break; sleep 0.05; done; touch gated-$1.done'), args: ['${n}'] };
  const text = JSON.stringify({ jobs: [gated] });
  writeFileSync(graphFile, text);
  const logged: string[] = [];
  const platform = await Platform.open(dir, { tickMs: 100, logError: (m) => logged.push(m) });
  const w = await platform.createWant({ partitions: ['gated/1'] });
  const wantId = w.want_id!;
  // Moved away and back as it was (a stash and its pop): the same size, time and inode.
  const away = join(dir, 'platform.json.away');
  renameSync(graphFile, away);
  t.truthy(await platform.refreshGraph(), 'the file on disk has a problem');
  await platform.refreshGraph();
  t.is(logged.filter((m) => /is missing/.test(m)).length, 1, 'said once, not at every look');
  t.is(platform.resolver.jobFor('gated/2').label, 'gated', 'the last valid graph goes on');
  t.regex(logged.join('\n'), /platform\.json was edited but not taken into use, the last valid graph goes on: .*platform\.json is missing\. Put it back; a graph with no jobs is \{"jobs": \[\]\}/);
  await new Promise((r) => setTimeout(r, 400)); // steps and ticks while it is gone
  renameSync(away, graphFile);
  t.is(await platform.refreshGraph(), undefined, 'put back as it was, it is read again');
  writeFileSync(join(dir, 'go'), '');
  const state = await waitForWant(platform, wantId, ['successful', 'failed']);
  t.is(state.wants.get(wantId)!.status, 'successful');
  await platform.close();

  // Started without it, on a log with history: refused, not started on no jobs.
  rmSync(graphFile);
  const err = await t.throwsAsync(Platform.open(dir, { start: false }));
  t.regex(err!.message, /platform\.json is missing, and this workspace's event log holds \d+ events .*Put platform\.json back/);
  writeFileSync(graphFile, text);
  const again = await Platform.open(dir, { start: false });
  t.is(again.resolver.jobFor('gated/3').label, 'gated');
  await again.close();
});

test('a taint of a partition no job in platform.json produces any more is a 400 saying so: nothing could rebuild it', async (t) => {
  const dir = makeWorkspace(t);
  const graphFile = join(dir, 'platform.json');
  writeFileSync(graphFile, JSON.stringify({ jobs: [job('alpha'), job('beta')] }));
  const platform = await Platform.open(dir, { tickMs: 60_000 });
  t.teardown(() => platform.close());
  const w = await platform.createWant({ partitions: ['alpha/1', 'beta/1'] });
  await waitForWant(platform, w.want_id!, ['successful']);
  writeFileSync(graphFile, JSON.stringify({ jobs: [job('beta')] }));
  await platform.refreshGraph();
  const refused = await platform.createTaint({ partitions: ['alpha/1', 'beta/1'] });
  if (refused.ok) return t.fail('the taint was taken');
  t.is(refused.status, 400);
  t.regex(refused.error, /^Cannot taint 'alpha\/1': no one job in platform\.json produces it any more \(none, or two\), so nothing could rebuild it\. Put back the job that made it first/);
  t.is(platform.state().partitions.get('alpha/1')!.status, 'live', 'nothing tainted');
  t.true((await platform.createTaint({ partitions: ['beta/1'] })).ok, 'one a job still produces');
});
