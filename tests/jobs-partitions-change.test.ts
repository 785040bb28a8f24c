/**
 * Partitions that change, with real job processes: build ids and lineage, staleness after a rebuild, `stale` and
 * `all` rebuild policies, taints with and without downstream, a want joining a rebuild in flight, a job's
 * `version` edit, history across a restart and a snapshot, and the sla miss recorded once.
 */
import { listArray, listItems } from '../lib/state/append-list.js';
import test, { type ExecutionContext } from 'ava';
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { EventPayload, RebuildPolicy } from '../lib/events/build-event.js';
import { EventLog } from '../lib/events/event-log.js';
import { Platform } from '../lib/platform.js';
import { fromSnapshot, toSnapshot } from '../lib/state/snapshot.js';
import { LINEAGE_MAX_NODES, lineage, partitionDetail } from '../lib/server/lineage-queries.js';
import { lineageTree } from '../lib/cli/commands/lineage-command.js';
import { colors } from '../lib/cli/output.js';
import { LATER, planAt } from './helpers/plan-at.js';
import { bash, lines, makeWorkspace, openPlatform, runsFor, startServer, waitFor, waitForWant } from './helpers/jobs-fixture.js';
import { cliAgainst } from './helpers/cli-against.js';

/** raw/<n> -> clean/<n> -> report/<n>; each run appends "<job> <n>" to runs.txt. */
const chain = (version = '1') => ({
  jobs: [
    { label: 'raw', outputs: ['raw/(?<n>\\d+)'], args: ['${n}'], exec: bash('echo "raw $1" >> runs.txt'), version },
    {
      label: 'clean',
      outputs: ['clean/(?<n>\\d+)'],
      inputs: [{ partition_ref: 'raw/${n}', dep_type: 'MATERIALIZE' }],
      args: ['${n}'],
      exec: bash('echo "clean $1" >> runs.txt'),
    },
    {
      label: 'report',
      outputs: ['report/(?<n>\\d+)'],
      inputs: [{ partition_ref: 'clean/${n}', dep_type: 'MATERIALIZE' }],
      args: ['${n}'],
      exec: bash('echo "report $1" >> runs.txt'),
    },
  ],
});

async function build(platform: Platform, refs: string[], rebuild: RebuildPolicy = 'missing'): Promise<string> {
  const r = await platform.createWant({ partitions: refs, comment: '', data_timestamp: 0, ttl_seconds: 0, sla_seconds: 0, rebuild });
  if (!r.ok) throw new Error(r.error);
  const s = await waitForWant(platform, r.want_id);
  if (s.wants.get(r.want_id)?.status !== 'successful') throw new Error(`want ${r.want_id} ended ${s.wants.get(r.want_id)?.status}`);
  return r.want_id;
}

/** A platform reading platform.json (so an edit of it is picked up), no tick, closed at teardown. */
async function openFromFile(t: ExecutionContext, dir: string): Promise<Platform> {
  const platform = await Platform.open(dir, { tickMs: 60_000 });
  t.teardown(() => platform.close());
  return platform;
}

const detail = (platform: Platform, ref: string) => partitionDetail(platform.state(), ref, { builds_offset: 0, builds_limit: 20, downstream_limit: 100 })!;

test('every build gets an id with the builds it consumed; a rebuild makes the two above stale; build --stale rebuilds exactly those', async (t) => {
  const dir = makeWorkspace(t);
  const platform = await openPlatform(t, dir, chain());
  await build(platform, ['report/1']);
  t.deepEqual(lines(dir, 'runs.txt'), ['raw 1', 'clean 1', 'report 1']);
  const report = detail(platform, 'report/1');
  const clean = detail(platform, 'clean/1');
  const raw = detail(platform, 'raw/1');
  t.regex(raw.current_build!.build_id, /^b-\d+$/);
  t.deepEqual(clean.current_build!.inputs, [{ partition_ref: 'raw/1', build_id: raw.current_build!.build_id }]);
  t.deepEqual(report.current_build!.inputs, [{ partition_ref: 'clean/1', build_id: clean.current_build!.build_id }]);
  t.is(report.current_build!.job_label, 'report');
  t.deepEqual(raw.downstream, ['clean/1']);
  t.false(report.stale);

  // Rebuild the bottom (as `build --force raw/1` does).
  await build(platform, ['raw/1'], 'all');
  t.deepEqual(lines(dir, 'runs.txt').slice(3), ['raw 1']);
  const rawAfter = detail(platform, 'raw/1');
  t.is(rawAfter.builds_total, 2);
  t.deepEqual(rawAfter.builds.map((b) => b.build_id), [rawAfter.current_build!.build_id, raw.current_build!.build_id], 'newest first');
  t.deepEqual(detail(platform, 'clean/1').stale_reasons, [`input raw/1 was rebuilt since ${raw.current_build!.build_id}`]);
  t.deepEqual(detail(platform, 'report/1').stale_reasons, ['input clean/1 is stale']);
  t.true(detail(platform, 'report/1').stale);
  // What is downstream of raw/1 now: clean/1 took its earlier build (stale since), and report/1 clean's current one.
  // Its current build has no consumer yet: a lineage of that alone said nothing was downstream.
  t.deepEqual(rawAfter.downstream, []);
  const staleDown = lineage(platform.state(), 'raw/1', 'downstream', 5)!;
  t.is(staleDown.children_total, 1);
  t.like(staleDown.children[0], { partition_ref: 'clean/1', stale: true, rebuilt_since: true, children_total: 1 });
  t.like(staleDown.children[0]!.children[0], { partition_ref: 'report/1', stale: true, rebuilt_since: false });
  colors.level = 0;
  t.true(lineageTree(staleDown, 5, LINEAGE_MAX_NODES, 'downstream').some((l) => /clean\/1 b-\d+ live stale took an earlier build$/.test(l)));

  // A `missing` want of the top does nothing; a `stale` one brings the chain up to date, each partition once.
  await build(platform, ['report/1']);
  t.is(lines(dir, 'runs.txt').length, 4);
  const top = await build(platform, ['report/1'], 'stale');
  t.deepEqual(lines(dir, 'runs.txt').slice(4), ['clean 1', 'report 1'], 'clean, then report; raw was not stale');
  for (const ref of ['raw/1', 'clean/1', 'report/1']) t.false(detail(platform, ref).stale, `${ref} up to date`);
  t.deepEqual(detail(platform, 'report/1').current_build!.inputs, [{ partition_ref: 'clean/1', build_id: detail(platform, 'clean/1').current_build!.build_id }]);
  const s = platform.state();
  const rebuilt = [top, ...listItems(s.wants.get(top)!.child_want_ids)].flatMap((id) => s.wants.get(id)!.rebuilt);
  t.deepEqual(rebuilt.sort(), ['clean/1', 'report/1']);

  // Lineage: upstream of report is clean then raw; downstream of raw is clean then report.
  const up = lineage(platform.state(), 'report/1', 'upstream', 5)!;
  t.deepEqual([up.partition_ref, up.children[0]!.partition_ref, up.children[0]!.children[0]!.partition_ref], ['report/1', 'clean/1', 'raw/1']);
  const down = lineage(platform.state(), 'raw/1', 'downstream', 1)!;
  t.deepEqual(down.children.map((c) => c.partition_ref), ['clean/1']);
  t.false(down.children[0]!.rebuilt_since, 'clean/1 took the current build of raw/1 in its rebuild');
  t.true(down.children[0]!.truncated, 'depth 1 stops below clean');
  t.is(runsFor(platform.state(), 'raw/1').length, 2);
});

test('`all` rebuilds the whole closure once; a taint without downstream marks one partition and its consumers stale', async (t) => {
  const dir = makeWorkspace(t);
  const platform = await openPlatform(t, dir, chain());
  await build(platform, ['report/2']);
  await build(platform, ['report/2'], 'all');
  t.deepEqual(lines(dir, 'runs.txt'), ['raw 2', 'clean 2', 'report 2', 'raw 2', 'clean 2', 'report 2']);

  const taint = await platform.createTaint({ partitions: ['clean/2'], reason: 'late rows', downstream: false });
  if (!taint.ok) return t.fail(taint.error);
  t.deepEqual(taint.taint!.partitions, ['clean/2']);
  t.is(platform.state().partitions.get('clean/2')!.status, 'tainted');
  t.deepEqual(detail(platform, 'report/2').stale_reasons, ['input clean/2 is tainted']);
  t.is(platform.state().taints.get(taint.taint!.taint_id)!.reason, 'late rows');
  // A want for the tainted partition rebuilds it, which clears the taint (its consumer is now "rebuilt since").
  await build(platform, ['clean/2']);
  t.deepEqual(lines(dir, 'runs.txt').slice(6), ['clean 2']);
  t.is(platform.state().partitions.get('clean/2')!.status, 'live');
  t.regex(detail(platform, 'report/2').stale_reasons[0]!, /^input clean\/2 was rebuilt since b-/);
});

test('a taint with downstream taints every consumer transitively; a want then rebuilds the chain; a never-built ref is refused', async (t) => {
  const dir = makeWorkspace(t);
  const platform = await openPlatform(t, dir, chain());
  await build(platform, ['report/3']);
  const refused = await platform.createTaint({ partitions: ['raw/3', 'raw/99'], reason: '', downstream: true });
  t.false(refused.ok);
  if (!refused.ok) {
    t.is(refused.status, 400);
    t.regex(refused.error, /raw\/99/);
  }
  t.is(platform.state().partitions.get('raw/3')!.status, 'live', 'a refused taint taints nothing');

  const taint = await platform.createTaint({ partitions: ['raw/3'], reason: 'bad load', downstream: true });
  if (!taint.ok) return t.fail(taint.error);
  t.deepEqual(taint.taint!.partitions, ['raw/3', 'clean/3', 'report/3']);
  for (const ref of ['raw/3', 'clean/3', 'report/3']) t.is(platform.state().partitions.get(ref)!.status, 'tainted');
  await build(platform, ['report/3']);
  t.deepEqual(lines(dir, 'runs.txt').slice(3), ['raw 3', 'clean 3', 'report 3']);
  for (const ref of ['raw/3', 'clean/3', 'report/3']) t.false(detail(platform, ref).stale);
});

test('a taint of a partition being rebuilt names it and marks its build: when that rebuild fails, what consumed it stays stale', async (t) => {
  const dir = makeWorkspace(t);
  const graph = chain();
  // raw takes a moment, and fails once fail-raw exists.
  graph.jobs[0]!.exec = bash('sleep 0.5; [ ! -e fail-raw ] && echo "raw $1" >> runs.txt');
  const platform = await openPlatform(t, dir, graph);
  await build(platform, ['clean/4']);
  writeFileSync(join(dir, 'fail-raw'), '');
  const rebuild = await platform.createWant({ partitions: ['raw/4'], comment: '', data_timestamp: 0, ttl_seconds: 0, sla_seconds: 0, rebuild: 'all' });
  if (!rebuild.ok) return t.fail(rebuild.error);
  await waitFor(platform, (s) => s.partitions.get('raw/4')?.status === 'building', 'raw/4 being rebuilt');
  const taint = await platform.createTaint({ partitions: ['raw/4'], reason: 'bad load', downstream: true });
  if (!taint.ok) return t.fail(taint.error);
  t.deepEqual(taint.taint!.partitions, ['raw/4', 'clean/4'], 'the partition being rebuilt is tainted too, not left out silently');
  t.is(taint.taint!.partitions_total, 2);
  t.is(platform.state().partitions.get('raw/4')!.status, 'building', 'its run goes on');
  await waitForWant(platform, rebuild.want_id, ['failed']);
  t.is(platform.state().partitions.get('raw/4')!.status, 'tainted', 'the failed rebuild left it on its build, tainted');
  t.deepEqual(detail(platform, 'clean/4').stale_reasons, ['input raw/4 is tainted'], 'the failed rebuild left the tainted build in place');
});

test('build --stale after a taint of the bottom input rebuilds the chain above it, inputs first, and ends only then', async (t) => {
  const dir = makeWorkspace(t);
  const platform = await openPlatform(t, dir, chain());
  await build(platform, ['report/4']);
  const taint = await platform.createTaint({ partitions: ['raw/4'], reason: 'bad load', downstream: false });
  if (!taint.ok) return t.fail(taint.error);
  t.deepEqual(detail(platform, 'clean/4').stale_reasons, ['input raw/4 is tainted']);
  // The want saw clean/4 fresh for a moment, while raw/4 was rebuilt (the taint no longer told, the new build not yet
  // in), and ended there: successful, with clean/4 and report/4 left stale.
  const wantId = await build(platform, ['report/4'], 'stale');
  t.deepEqual(lines(dir, 'runs.txt').slice(3), ['raw 4', 'clean 4', 'report 4']);
  for (const ref of ['raw/4', 'clean/4', 'report/4']) t.false(detail(platform, ref).stale, ref);
  t.deepEqual([...platform.state().wants.get(wantId)!.rebuilt], ['report/4']);
});

test('while an input is being rebuilt what consumed it is stale, and it is told once the new build is in', async (t) => {
  const dir = makeWorkspace(t);
  const graph = chain();
  // raw waits for a file, so the rebuild can be looked at while it runs.
  graph.jobs[0]!.exec = bash('while [ ! -e go ]; do sleep 0.01; done; echo "raw $1" >> runs.txt');
  writeFileSync(join(dir, 'go'), '');
  const platform = await openPlatform(t, dir, graph);
  await build(platform, ['clean/5']);
  const { rmSync } = await import('node:fs');
  rmSync(join(dir, 'go'));
  const r = await platform.createWant({ partitions: ['raw/5'], comment: '', data_timestamp: 0, ttl_seconds: 0, sla_seconds: 0, rebuild: 'all' });
  if (!r.ok) return t.fail(r.error);
  await waitFor(platform, (s) => s.partitions.get('raw/5')?.status === 'building', 'raw/5 is being rebuilt');
  t.deepEqual(detail(platform, 'clean/5').stale_reasons, ['input raw/5 is being rebuilt']);
  writeFileSync(join(dir, 'go'), '');
  await waitForWant(platform, r.want_id);
  t.regex(detail(platform, 'clean/5').stale_reasons[0]!, /^input raw\/5 was rebuilt since b-/);
});

test('a canceled rebuild of a live partition leaves it live on its build, its consumer fresh, and a plain build of it builds nothing; a tainted one stays tainted', async (t) => {
  const dir = makeWorkspace(t);
  const graph = chain();
  graph.jobs[0]!.exec = bash('while [ ! -e go ]; do sleep 0.01; done; echo "raw $1" >> runs.txt');
  writeFileSync(join(dir, 'go'), '');
  const platform = await openPlatform(t, dir, graph);
  await build(platform, ['clean/6', 'clean/7']);
  const { rmSync } = await import('node:fs');
  rmSync(join(dir, 'go'));
  const before = platform.state().partitions.get('raw/6')!.build_id;
  const r = await platform.createWant({ partitions: ['raw/6'], comment: '', data_timestamp: 0, ttl_seconds: 0, sla_seconds: 0, rebuild: 'all' });
  if (!r.ok) return t.fail(r.error);
  await waitFor(platform, (s) => s.partitions.get('raw/6')?.status === 'building', 'raw/6 is being rebuilt');
  t.deepEqual(detail(platform, 'clean/6').stale_reasons, ['input raw/6 is being rebuilt']);
  t.true((await platform.cancelWant(r.want_id)).ok);
  const raw = platform.state().partitions.get('raw/6')!;
  t.is(raw.status, 'live', 'its build is as it was: the cancel changed no data');
  t.is(raw.build_id, before);
  t.deepEqual(detail(platform, 'clean/6').stale_reasons, [], 'its consumer is told it is not being rebuilt');
  writeFileSync(join(dir, 'go'), '');
  const runsBefore = lines(dir, 'runs.txt').length;
  await build(platform, ['raw/6']);
  t.is(lines(dir, 'runs.txt').length, runsBefore, 'nothing rebuilt: it was live');

  // Tainted, then its rebuild canceled: tainted still, its consumer stale for it.
  rmSync(join(dir, 'go'));
  const taint = await platform.createTaint({ partitions: ['raw/7'], reason: 'bad load', downstream: false });
  if (!taint.ok) return t.fail(taint.error);
  const again = await platform.createWant({ partitions: ['raw/7'], comment: '', data_timestamp: 0, ttl_seconds: 0, sla_seconds: 0, rebuild: 'missing' });
  if (!again.ok) return t.fail(again.error);
  await waitFor(platform, (s) => s.partitions.get('raw/7')?.status === 'building', 'raw/7 is being rebuilt');
  t.true((await platform.cancelWant(again.want_id)).ok);
  t.is(platform.state().partitions.get('raw/7')!.status, 'tainted');
  t.deepEqual(detail(platform, 'clean/7').stale_reasons, ['input raw/7 is tainted']);
  writeFileSync(join(dir, 'go'), '');
});

test('a failed rebuild of a live partition leaves it live on its build and its consumer fresh, the want that forced it failed; the API and CLI say so; a tainted one stays tainted', async (t) => {
  const dir = makeWorkspace(t);
  const graph = chain();
  graph.jobs[0]!.exec = bash('if [ -e fail-raw ]; then echo "no rows for $1" >&2; exit 3; fi; echo "raw $1" >> runs.txt');
  const platform = await openPlatform(t, dir, graph);
  await build(platform, ['clean/6', 'clean/7']);
  const before = platform.state().partitions.get('raw/6')!.build_id;
  writeFileSync(join(dir, 'fail-raw'), '');
  const r = await platform.createWant({ partitions: ['raw/6'], comment: '', data_timestamp: 0, ttl_seconds: 0, sla_seconds: 0, rebuild: 'all' });
  if (!r.ok) return t.fail(r.error);
  const s = await waitForWant(platform, r.want_id);
  t.is(s.wants.get(r.want_id)!.status, 'failed', 'the want reports its rebuild failed');
  const raw = s.partitions.get('raw/6')!;
  t.is(raw.status, 'live', 'its build is as it was: the failure changed no data');
  t.is(raw.build_id, before);
  t.is(s.job_runs.get(raw.job_run_id)!.status, 'failed', 'its latest run is the one that failed');
  t.deepEqual(detail(platform, 'clean/6').stale_reasons, [], 'its consumer is told it is not being rebuilt');

  // What consumers read: the partition's view over HTTP, and `platform partitions get`.
  const server = await startServer(t, platform);
  const view = (await (await fetch(`${server.url}/api/partitions/${encodeURIComponent('raw/6')}`)).json()) as { status: string; current_build: { build_id: string } | null; job_run_id: string; rebuild_failed: boolean };
  t.is(view.status, 'live');
  t.true(view.rebuild_failed, 'the view says its latest run was a rebuild that failed');
  t.false(((await (await fetch(`${server.url}/api/partitions/${encodeURIComponent('clean/6')}`)).json()) as { rebuild_failed: boolean }).rebuild_failed);
  t.is(view.current_build?.build_id, before);
  t.is(view.job_run_id, raw.job_run_id);
  const cli = await cliAgainst(() => server.url)('partitions', 'get', 'raw/6');
  t.is(cli.code, 0, cli.stderr);
  t.regex(cli.stdout, new RegExp(`Its last run ${raw.job_run_id} \\(raw\\) failed: exited with code 3\\. Its build ${before} is kept \\(live\\)\\.`));

  // A plain build of it builds nothing (it is live); `all` made again rebuilds it once it can.
  const runsBefore = lines(dir, 'runs.txt').length;
  await build(platform, ['raw/6']);
  t.is(lines(dir, 'runs.txt').length, runsBefore, 'nothing rebuilt: it was live');

  // Tainted, then its rebuild failed: tainted still, its consumer stale for it, the want failed.
  const taint = await platform.createTaint({ partitions: ['raw/7'], reason: 'bad load', downstream: false });
  if (!taint.ok) return t.fail(taint.error);
  const again = await platform.createWant({ partitions: ['raw/7'], comment: '', data_timestamp: 0, ttl_seconds: 0, sla_seconds: 0, rebuild: 'missing' });
  if (!again.ok) return t.fail(again.error);
  const s2 = await waitForWant(platform, again.want_id);
  t.is(s2.wants.get(again.want_id)!.status, 'failed');
  t.is(s2.partitions.get('raw/7')!.status, 'tainted');
  t.deepEqual(detail(platform, 'clean/7').stale_reasons, ['input raw/7 is tainted']);
  // Tainted again after its failed rebuild, a want asks for it anew, and it is rebuilt once it can be.
  const { rmSync } = await import('node:fs');
  rmSync(join(dir, 'fail-raw'));
  await build(platform, ['raw/7']);
  t.is(platform.state().partitions.get('raw/7')!.status, 'live');
  t.not(platform.state().partitions.get('raw/7')!.build_id, s2.partitions.get('raw/7')!.build_id);
  // The same after a restart (the fold of the log) and through a snapshot.
  const viaSnapshot = fromSnapshot(JSON.parse(JSON.stringify(toSnapshot(platform.state()))));
  t.deepEqual(viaSnapshot.partitions.get('raw/6'), platform.state().partitions.get('raw/6'));
});

test('a want for a tainted partition joins the rebuild already in flight', async (t) => {
  const dir = makeWorkspace(t);
  const platform = await openPlatform(t, dir, {
    jobs: [{ label: 'gate', outputs: ['gate/(?<n>\\d+)'], exec: bash('echo run >> gate.txt; while [ ! -f release ]; do sleep 0.02; done') }],
  });
  writeFileSync(join(dir, 'release'), '');
  await build(platform, ['gate/1']);
  const { unlinkSync } = await import('node:fs');
  unlinkSync(join(dir, 'release'));
  t.true((await platform.createTaint({ partitions: ['gate/1'], reason: '', downstream: false })).ok);
  const a = await platform.createWant({ partitions: ['gate/1'], comment: 'a', data_timestamp: 0, ttl_seconds: 0, sla_seconds: 0 });
  if (!a.ok) return t.fail(a.error);
  const s = await waitFor(platform, (st) => runsFor(st, 'gate/1').some((r) => r.status === 'running'), 'the rebuild to run');
  const rebuild = runsFor(s, 'gate/1').find((r) => r.status === 'running')!;
  const b = await platform.createWant({ partitions: ['gate/1'], comment: 'b', data_timestamp: 0, ttl_seconds: 0, sla_seconds: 0 });
  if (!b.ok) return t.fail(b.error);
  t.deepEqual(listArray(platform.state().wants.get(b.want_id)!.job_run_ids), [rebuild.job_run_id], 'b joined the run in flight');
  writeFileSync(join(dir, 'release'), '');
  await waitForWant(platform, b.want_id, ['successful']);
  t.deepEqual(lines(dir, 'gate.txt'), ['run', 'run'], 'built once more, not twice');
});

test('editing a job version makes its partitions stale; history and lineage survive a restart and a snapshot', async (t) => {
  const dir = makeWorkspace(t);
  writeFileSync(join(dir, 'platform.json'), JSON.stringify(chain('1')));
  const first = await openFromFile(t, dir);
  await build(first, ['report/4']);
  t.false(detail(first, 'raw/4').stale);
  writeFileSync(join(dir, 'platform.json'), JSON.stringify(chain('2')));
  await first.refreshGraph();
  first.orchestrator.scanAll();
  await waitFor(first, (s) => (s.partitions.get('raw/4')?.stale_reasons.length ?? 0) > 0, 'raw/4 to turn stale');
  t.regex(detail(first, 'raw/4').stale_reasons[0]!, /^job raw changed since this build/);
  t.deepEqual(detail(first, 'clean/4').stale_reasons, ['input raw/4 is stale']);
  const before = ['raw/4', 'clean/4', 'report/4'].map((ref) => detail(first, ref));
  const tree = lineage(first.state(), 'report/4', 'upstream', 5);
  const viaSnapshot = fromSnapshot(JSON.parse(JSON.stringify(toSnapshot(first.state()))));
  t.deepEqual(
    ['raw/4', 'clean/4', 'report/4'].map((ref) => partitionDetail(viaSnapshot, ref, { builds_offset: 0, builds_limit: 20, downstream_limit: 100 })),
    before,
    'a snapshot keeps history, lineage and staleness',
  );
  t.deepEqual(lineage(viaSnapshot, 'report/4', 'upstream', 5), tree);
  await first.close();
  const second = await openFromFile(t, dir);
  t.deepEqual(['raw/4', 'clean/4', 'report/4'].map((ref) => detail(second, ref)), before, 'a restart replays the same');
  t.deepEqual(lineage(second.state(), 'report/4', 'upstream', 5), tree);
});

test('a job renamed alone leaves what it built fresh; renamed with an edit, or edited after, what it built turns stale', async (t) => {
  const dir = makeWorkspace(t);
  const renamed = (label: string, exec: string) => {
    const g = chain('1');
    g.jobs[0] = { ...g.jobs[0]!, label, exec: bash(exec) };
    return g;
  };
  writeFileSync(join(dir, 'platform.json'), JSON.stringify(chain('1')));
  const platform = await openFromFile(t, dir);
  await build(platform, ['clean/6']);
  const edit = async (graph: object) => {
    writeFileSync(join(dir, 'platform.json'), JSON.stringify(graph));
    await platform.refreshGraph();
    platform.orchestrator.scanAll();
  };
  // The same definition under a new label: nothing changed in what it makes.
  await edit(renamed('raw_v2', 'echo "raw $1" >> runs.txt'));
  await waitFor(platform, (s) => s.last_event_id > 0, 'a step');
  await new Promise((r) => setTimeout(r, 300));
  t.false(detail(platform, 'raw/6').stale, 'a rename alone');
  // Then its exec changes: what the old label built is held to the job that now makes it.
  await edit(renamed('raw_v2', 'echo "raw v2 $1" >> runs.txt'));
  await waitFor(platform, (s) => (s.partitions.get('raw/6')?.stale_reasons.length ?? 0) > 0, 'raw/6 to turn stale');
  t.regex(detail(platform, 'raw/6').stale_reasons[0]!, /^job raw changed since this build/);
  t.deepEqual(detail(platform, 'clean/6').stale_reasons, ['input raw/6 is stale']);
  // build --stale rebuilds it with the job that makes it now.
  await build(platform, ['clean/6'], 'stale');
  t.false(detail(platform, 'raw/6').stale);
  t.deepEqual(lines(dir, 'runs.txt').slice(2), ['raw v2 6', 'clean 6']);
});

test('a job split in two, one part as it was and the other edited: all it built turns stale, whichever part comes first', async (t) => {
  const dir = makeWorkspace(t);
  const split = (low: string, high: string) => {
    const g = chain('1');
    const raw = g.jobs[0]!;
    g.jobs.splice(0, 1, { ...raw, label: 'raw_low', outputs: ['raw/(?<n>[0-4])'], exec: bash(low) }, { ...raw, label: 'raw_high', outputs: ['raw/(?<n>[5-9])'], exec: bash(high) });
    return g;
  };
  writeFileSync(join(dir, 'platform.json'), JSON.stringify(chain('1')));
  const platform = await openFromFile(t, dir);
  await build(platform, ['clean/2', 'clean/8']);
  t.false(detail(platform, 'raw/2').stale);
  // raw/2 (first of what raw built) is now made by a job defined as raw was; raw/8 by an edited one.
  writeFileSync(join(dir, 'platform.json'), JSON.stringify(split('echo "raw $1" >> runs.txt', 'echo "raw v2 $1" >> runs.txt')));
  await platform.refreshGraph();
  platform.orchestrator.scanAll();
  await waitFor(platform, (s) => (s.partitions.get('raw/8')?.stale_reasons.length ?? 0) > 0, 'raw/8 to turn stale');
  t.regex(detail(platform, 'raw/8').stale_reasons[0]!, /^job raw changed since this build \(fingerprint \w+ -> \w+\+\w+\)/);
  t.deepEqual(detail(platform, 'clean/8').stale_reasons, ['input raw/8 is stale']);
  t.true(detail(platform, 'raw/2').stale, 'held to both parts: conservative');
  // The edited part rebuilt: the part left stays held to both, now and after a restart (no flip with the daemon's age).
  await build(platform, ['clean/8'], 'stale');
  t.false(detail(platform, 'raw/8').stale);
  t.true(lines(dir, 'runs.txt').includes('raw v2 8'));
  platform.orchestrator.scanAll();
  await new Promise((r) => setTimeout(r, 300));
  t.true(detail(platform, 'raw/2').stale, 'still held to both parts');
  await platform.close();
  const again = await openFromFile(t, dir);
  again.orchestrator.scanAll();
  await new Promise((r) => setTimeout(r, 300));
  t.true(detail(again, 'raw/2').stale, 'the same after a restart');
  await build(again, ['clean/2'], 'stale');
  t.false(detail(again, 'clean/2').stale);
});

/** The chain with an env on raw, its keys in the order given: what a platform.json's author may write in any order. */
const withEnv = (env: Array<[string, string]>) => {
  const g = chain('1');
  return { ...g, jobs: [{ ...g.jobs[0]!, env: Object.fromEntries(env) }, ...g.jobs.slice(1)] };
};

/** Edits platform.json under a platform reading it, and lets it see the edit (a housekeeping step). */
async function editGraph(platform: Platform, dir: string, graph: object): Promise<void> {
  writeFileSync(join(dir, 'platform.json'), JSON.stringify(graph));
  await platform.refreshGraph();
  platform.orchestrator.scanAll();
  // A step that changes nothing emits nothing to wait for: a while for one that would.
  await new Promise((r) => setTimeout(r, 300));
}

test("a job's env keys reordered leave what it built live; an env value changed makes it stale", async (t) => {
  const dir = makeWorkspace(t);
  writeFileSync(join(dir, 'platform.json'), JSON.stringify(withEnv([['ZONE', 'eu'], ['MODE', 'full']])));
  const platform = await openFromFile(t, dir);
  await build(platform, ['clean/3']);
  await editGraph(platform, dir, withEnv([['MODE', 'full'], ['ZONE', 'eu']]));
  t.deepEqual(detail(platform, 'raw/3').stale_reasons, [], 'the same env, its keys in another order');
  t.deepEqual(detail(platform, 'clean/3').stale_reasons, []);
  await editGraph(platform, dir, withEnv([['MODE', 'full'], ['ZONE', 'us']]));
  await waitFor(platform, (s) => (s.partitions.get('raw/3')?.stale_reasons.length ?? 0) > 0, 'raw/3 to turn stale');
  t.regex(detail(platform, 'raw/3').stale_reasons[0]!, /^job raw changed since this build \(fingerprint \w+ -> \w+\)$/);
  t.deepEqual(detail(platform, 'clean/3').stale_reasons, ['input raw/3 is stale']);
});

test('a build recorded under the fingerprint of before session 31 (env hashed in file order) stays live, then and after a reorder and a restart', async (t) => {
  // The fingerprint as the code before session 31 computed it: the env object hashed in the file's order.
  const graph = withEnv([['ZONE', 'eu'], ['MODE', 'full']]);
  const raw = chain('1').jobs[0]!;
  const legacy = createHash('sha256')
    .update(JSON.stringify([raw.exec, raw.args, { ZONE: 'eu', MODE: 'full' }, [], null, raw.version]))
    .digest('hex')
    .slice(0, 16);
  // A log of then: built by a platform of now in another workspace, its runs' fingerprints put back to that one.
  const then = makeWorkspace(t);
  writeFileSync(join(then, 'platform.json'), JSON.stringify(graph));
  const first = await openFromFile(t, then);
  await build(first, ['clean/1']);
  t.not(first.state().job_runs.get(first.state().partitions.get('raw/1')!.job_run_id)!.job_fingerprint, legacy, 'the fingerprint moved');
  await first.close();
  const events = await (async () => {
    const log = await EventLog.open(join(then, '.platform', 'bel'));
    try {
      return await log.list(0, log.latestId());
    } finally {
      await log.close();
    }
  })();
  const dir = makeWorkspace(t);
  const log = await EventLog.open(join(dir, '.platform', 'bel'));
  for (const { event_id: _id, timestamp, ...payload } of events) {
    if (payload.type === 'job_run_queued' && payload.job_run_queued.job_label === 'raw') payload.job_run_queued.job_fingerprint = legacy;
    await log.append([payload as EventPayload], timestamp);
  }
  await log.close();
  writeFileSync(join(dir, 'platform.json'), JSON.stringify(graph));
  const platform = await openFromFile(t, dir);
  t.is(platform.state().job_fingerprints.get('raw'), legacy, 'the log holds the legacy fingerprint');
  await editGraph(platform, dir, graph);
  t.deepEqual(detail(platform, 'raw/1').stale_reasons, [], 'the upgrade made nothing stale');
  t.deepEqual(detail(platform, 'clean/1').stale_reasons, []);
  // A build of now (the canonical fingerprint) and the build of then, side by side, through a reorder and a restart.
  await build(platform, ['clean/2']);
  await editGraph(platform, dir, withEnv([['MODE', 'full'], ['ZONE', 'eu']]));
  for (const ref of ['raw/1', 'raw/2', 'clean/1', 'clean/2']) t.deepEqual(detail(platform, ref).stale_reasons, [], ref);
  await platform.close();
  const again = await openFromFile(t, dir);
  again.orchestrator.scanAll();
  await new Promise((r) => setTimeout(r, 300));
  for (const ref of ['raw/1', 'raw/2']) t.deepEqual(detail(again, ref).stale_reasons, [], `${ref} after a restart`);
  // A change of value still makes both stale.
  await editGraph(again, dir, withEnv([['MODE', 'delta'], ['ZONE', 'eu']]));
  await waitFor(again, (s) => ['raw/1', 'raw/2'].every((ref) => (s.partitions.get(ref)?.stale_reasons.length ?? 0) > 0), 'raw/1 and raw/2 to turn stale');
  t.pass();
});

test('a want not successful by its sla deadline gets want_sla_missed once, counted from its data timestamp', async (t) => {
  const dir = makeWorkspace(t);
  const platform = await openPlatform(t, dir, {
    jobs: [{ label: 'gate', outputs: ['gate/(?<n>\\d+)'], exec: bash('while [ ! -f release ]; do sleep 0.02; done') }],
  });
  // Its data is from 1.5 s ago and its sla is 2 s: due in half a second, not two.
  const dataTimestamp = Date.now() - 1500;
  const r = await platform.createWant({ partitions: ['gate/1'], comment: '', data_timestamp: dataTimestamp, ttl_seconds: 0, sla_seconds: 2 });
  if (!r.ok) return t.fail(r.error);
  const s = await waitFor(platform, (st) => st.wants.get(r.want_id)?.sla_missed === true, 'the sla miss', 5000);
  t.true(s.wants.get(r.want_id)!.sla_missed);
  const events = await platform.log.list(0, 1000);
  const missed = events.filter((e) => e.type === 'want_sla_missed');
  t.is(missed.length, 1);
  const deadline = dataTimestamp + 2000;
  t.is(missed[0]!.type === 'want_sla_missed' ? missed[0]!.want_sla_missed.deadline : 0, deadline);
  t.true(missed[0]!.timestamp >= deadline, 'not before the deadline');
  t.true(missed[0]!.timestamp < deadline + 1500, `on time (${missed[0]!.timestamp - deadline} ms late)`);
  // Once: no later step records it again.
  t.false((await planAt(platform, LATER())).events.some((e) => e.type === 'want_sla_missed'));
  writeFileSync(join(dir, 'release'), '');
  await waitForWant(platform, r.want_id, ['successful']);
});

test('an active want whose built partition is tainted rebuilds it (event-driven, no tick)', async (t) => {
  const dir = makeWorkspace(t);
  const platform = await openPlatform(t, dir, {
    jobs: [
      {
        label: 'gate',
        outputs: ['gate/(?<n>\\d+)'],
        args: ['${n}'],
        exec: bash('echo "gate $1" >> runs.txt; if [ "$1" = 2 ]; then while [ ! -f release ]; do sleep 0.02; done; fi'),
      },
    ],
  });
  const r = await platform.createWant({ partitions: ['gate/1', 'gate/2'], comment: '', data_timestamp: 0, ttl_seconds: 0, sla_seconds: 0 });
  if (!r.ok) return t.fail(r.error);
  await waitFor(platform, (s) => s.partitions.get('gate/1')?.status === 'live', 'gate/1 to be built');
  t.true((await platform.createTaint({ partitions: ['gate/1'], reason: '', downstream: false })).ok);
  await waitFor(platform, (s) => runsFor(s, 'gate/1').length === 2, 'gate/1 to be rebuilt for the want still active');
  writeFileSync(join(dir, 'release'), '');
  const s = await waitForWant(platform, r.want_id, ['successful']);
  t.is(s.partitions.get('gate/1')!.status, 'live');
  t.deepEqual(lines(dir, 'runs.txt').filter((l) => l === 'gate 1'), ['gate 1', 'gate 1']);
});
