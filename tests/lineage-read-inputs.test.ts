/**
 * What a build consumed is what its job read (found by QA, session 33): a QUERY input that is tainted (or being
 * rebuilt) when the run is queued is still read, and an input a run reported missing is read by the attempt that
 * follows. Both were left out of the build's lineage, so the consumer said "stale: no" and a downstream taint of the
 * input passed it by. Real jobs through the embedding API, then a restart: the lineage is the fold's, kept.
 */
import test from 'ava';
import { Platform } from '../lib/platform.js';
import { parseGraph } from '../lib/graph/parse-graph.js';
import type { BuildState } from '../lib/state/build-state.js';
import { bash, makeWorkspace, openPlatform, want, waitFor, waitForWant } from './helpers/jobs-fixture.js';

const consumed = (s: BuildState, ref: string): string[] => {
  const p = s.partitions.get(ref);
  const build = p?.build_id ? s.builds.get(p.build_id) : undefined;
  const run = build ? s.job_runs.get(build.job_run_id) : undefined;
  return run ? run.input_builds.map((b) => `${b.partition_ref}@${b.build_id}`) : [];
};

const QUERY_GRAPH = {
  jobs: [
    { label: 'src', outputs: ['src/(?<n>\\d+)'], exec: ['true'] },
    { label: 'mid', outputs: ['mid/(?<n>\\d+)'], inputs: [{ partition_ref: 'src/${n}', dep_type: 'MATERIALIZE' }], exec: ['true'] },
    {
      label: 'top',
      outputs: ['top/(?<n>\\d+)'],
      inputs: [
        { partition_ref: 'mid/${n}', dep_type: 'MATERIALIZE' },
        { partition_ref: 'src/1', dep_type: 'QUERY' },
      ],
      exec: ['true'],
    },
  ],
};

test('a build that read a tainted QUERY input consumed its build: it is stale for it, and a downstream taint reaches it', async (t) => {
  const dir = makeWorkspace(t);
  const platform = await openPlatform(t, dir, QUERY_GRAPH);
  await waitForWant(platform, await want(platform, ['top/1']), ['successful']);
  const src = platform.state().partitions.get('src/1')!.build_id;
  const taint = await platform.createTaint({ partitions: ['src/1'], reason: 'late rows' });
  t.true(taint.ok, JSON.stringify(taint));
  await waitFor(platform, (s) => s.partitions.get('src/1')?.status === 'tainted', 'src/1 tainted');

  const s = await waitForWant(platform, await want(platform, ['top/3']), ['successful']);
  t.true(consumed(s, 'top/3').includes(`src/1@${src}`), consumed(s, 'top/3').join(', '));
  t.deepEqual(s.partitions.get('top/3')!.stale_reasons, ['input src/1 is tainted']);

  // Rebuilt: what top/3 read was replaced.
  await waitForWant(platform, await want(platform, ['src/1']), ['successful']);
  const after = await waitFor(platform, (x) => x.partitions.get('src/1')?.status === 'live', 'src/1 rebuilt');
  t.deepEqual(after.partitions.get('top/3')!.stale_reasons, [`input src/1 was rebuilt since ${src}`]);
  // A taint of the new build downstream reaches top/3's next build, which read it.
  await waitForWant(platform, await want(platform, ['top/4']), ['successful']);
  const down = await platform.createTaint({ partitions: ['src/1'], reason: 'again', downstream: true });
  if (!down.ok) return t.fail(down.error);
  t.true(down.taint!.partitions.includes('top/4'), down.taint!.partitions.join(', '));
});

/** dyn/N reports src/N missing the first time only, then reads it without a word (it is there). */
const DYN_GRAPH = {
  jobs: [
    { label: 'src', outputs: ['src/(?<n>\\d+)'], exec: ['true'] },
    {
      label: 'dyn',
      outputs: ['dyn/(?<n>\\d+)'],
      exec: bash('if [ ! -f "$PLATFORM_WORKSPACE/.seen-$1" ]; then touch "$PLATFORM_WORKSPACE/.seen-$1"; echo "PLATFORM_MISSING_DEPS {\\"missing\\": [\\"src/$1\\"]}"; exit 1; fi'),
      args: ['${n}'],
    },
  ],
};

test('an input a run reported missing is consumed by the attempt that built the output, across a restart', async (t) => {
  const dir = makeWorkspace(t);
  const graph = DYN_GRAPH;
  let platform = await openPlatform(t, dir, graph);
  const s = await waitForWant(platform, await want(platform, ['dyn/7']), ['successful']);
  const src = s.partitions.get('src/7')!.build_id;
  t.truthy(src);
  t.deepEqual(consumed(s, 'dyn/7'), [`src/7@${src}`]);
  t.is([...s.job_runs.values()].filter((r) => r.status === 'dep_missed').length, 1);

  await platform.close();
  platform = await Platform.open(dir, { graph: parseGraph(graph, 'test'), tickMs: 60_000, cancelRunsOnClose: true });
  t.teardown(() => platform.close());
  t.deepEqual(consumed(platform.state(), 'dyn/7'), [`src/7@${src}`], 'after a restart');
  const down = await platform.createTaint({ partitions: ['src/7'], reason: 'bad', downstream: true });
  if (!down.ok) return t.fail(down.error);
  t.deepEqual([...down.taint!.partitions].sort(), ['dyn/7', 'src/7']);
});

test('an input found missing once is read by every later build of the output: a rebuild that finds it live still lists it', async (t) => {
  const dir = makeWorkspace(t);
  const graph = DYN_GRAPH;
  let platform = await openPlatform(t, dir, graph);
  let s = await waitForWant(platform, await want(platform, ['dyn/3']), ['successful']);
  const first = s.partitions.get('dyn/3')!.build_id;
  const src = s.partitions.get('src/3')!.build_id;
  // Rebuilt on its own (its input untouched): the job reports nothing missing this time.
  const again = await platform.createWant({ partitions: ['dyn/3'], rebuild: 'all' });
  if (!again.ok) return t.fail(again.error);
  s = await waitForWant(platform, again.want_id, ['successful']);
  const second = s.partitions.get('dyn/3')!.build_id;
  t.not(second, first, 'dyn/3 was built again');
  t.is(s.partitions.get('src/3')!.build_id, src, 'src/3 was not');
  t.deepEqual(consumed(s, 'dyn/3'), [`src/3@${src}`], 'the new build read src/3 too');

  await platform.close();
  platform = await Platform.open(dir, { graph: parseGraph(graph, 'test'), tickMs: 60_000, cancelRunsOnClose: true });
  t.teardown(() => platform.close());
  const down = await platform.createTaint({ partitions: ['src/3'], reason: 'bad', downstream: true });
  if (!down.ok) return t.fail(down.error);
  t.deepEqual([...down.taint!.partitions].sort(), ['dyn/3', 'src/3'], "a downstream taint of src/3 reaches dyn/3's new build");
});
