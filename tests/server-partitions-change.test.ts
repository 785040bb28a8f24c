/**
 * Partitions that change over HTTP, against the real server and real job processes: partition detail (ref as one
 * %2F-encoded segment), lineage, taints as a resource, rebuild policies on POST /api/wants, the new list and
 * detail fields, the metrics counters, and clear 400/404s for bad input.
 */
import test from 'ava';
import { createWant, startServer, waitForWant } from './helpers/server-fixture.js';

const CHAIN = {
  jobs: [
    { label: 'raw', outputs: ['raw/(?<n>\\d+)'], exec: ['bash', '-c', 'true'] },
    { label: 'clean', outputs: ['clean/(?<n>\\d+)'], inputs: [{ partition_ref: 'raw/${n}', dep_type: 'MATERIALIZE' }], exec: ['bash', '-c', 'true'] },
    { label: 'report', outputs: ['report/(?<n>\\d+)'], inputs: [{ partition_ref: 'clean/${n}', dep_type: 'MATERIALIZE' }], exec: ['bash', '-c', 'true'] },
  ],
};

const enc = encodeURIComponent;

test('a ref wanted but not begun: its 404 names the wants that want it and where to see what they wait on', async (t) => {
  const graph = {
    jobs: [
      { label: 'slow', outputs: ['slow/(?<n>\\d+)'], exec: ['sleep', '30'] },
      { label: 'after', outputs: ['after/(?<n>\\d+)'], inputs: [{ partition_ref: 'slow/${n}', dep_type: 'MATERIALIZE' }], exec: ['true'] },
    ],
  };
  const f = await startServer(t, { graph });
  const unwanted = ((await (await f.api(`/api/partitions/${encodeURIComponent('after/2')}`)).json()) as { error: string }).error;
  t.notRegex(unwanted, /wanted by/, 'no want, no word of one');
  // A want that ended before its run began (canceled, or its input failed) is pointed at, both ways.
  t.regex(unwanted, /A want for it that ended before its run began leaves none: canceled, or upstream_failed \(an input of it failed\); see platform want list --status upstream_failed\.$/);
  const id = await createWant(f, ['after/1']);
  await waitForWant(f, id, ['upstream_building']);
  const res = await f.api(`/api/partitions/${encodeURIComponent('after/1')}`);
  t.is(res.status, 404);
  const error = ((await res.json()) as { error: string }).error;
  t.regex(error, new RegExp(`It is wanted by ${id}, whose run for it has not begun: see what it waits on with GET /api/wants/${id}/tree \\(platform want tree ${id}\\)`));
});

test('partition detail, lineage and list items show builds, lineage and staleness; unknown refs are 404', async (t) => {
  const f = await startServer(t, { graph: CHAIN });
  await waitForWant(f, await createWant(f, ['report/1']), ['successful']);
  const raw = await f.getJson(`/api/partitions/${enc('raw/1')}`);
  t.is(raw.partition_ref, 'raw/1');
  t.is(raw.status, 'live');
  t.false(raw.stale);
  t.regex(raw.current_build.build_id, /^b-\d+$/);
  t.deepEqual(raw.downstream, ['clean/1']);
  t.is(raw.builds_total, 1);

  // Rebuild the bottom: the two above turn stale, and say why.
  const force = await createWant(f, ['raw/1'], { rebuild: 'all' });
  t.is((await waitForWant(f, force, ['successful'])).rebuild, 'all');
  const clean = await f.getJson(`/api/partitions/${enc('clean/1')}`);
  t.true(clean.stale);
  t.deepEqual(clean.stale_reasons, [`input raw/1 was rebuilt since ${raw.current_build.build_id}`]);
  t.deepEqual(clean.current_build.inputs, [{ partition_ref: 'raw/1', build_id: raw.current_build.build_id }]);
  const history = await f.getJson(`/api/partitions/${enc('raw/1')}?builds_limit=1`);
  t.is(history.builds_total, 2);
  t.is(history.builds.length, 1);
  t.is(history.builds[0].build_id, history.current_build.build_id, 'newest first');
  const list = await f.getJson('/api/partitions?prefix=report/');
  t.true(list.data[0].stale);
  t.regex(list.data[0].build_id, /^b-/);

  const tree = await f.getJson(`/api/partitions/${enc('report/1')}/lineage?depth=5`);
  t.is(tree.direction, 'upstream');
  t.is(tree.root.children[0].partition_ref, 'clean/1');
  t.is(tree.root.children[0].children[0].partition_ref, 'raw/1');
  t.true(tree.root.children[0].children[0].rebuilt_since, 'clean consumed a build of raw that has been replaced');
  // Downstream, what consumed raw's current build (nothing yet), then its builds before: clean took the replaced one,
  // and is stale for it (it said nothing was below raw: what a rebuild made stale could not be found from it).
  const downBefore = await f.getJson(`/api/partitions/${enc('raw/1')}/lineage?direction=downstream`);
  t.deepEqual(
    downBefore.root.children.map((c: { partition_ref: string; stale: boolean; rebuilt_since: boolean }) => [c.partition_ref, c.stale, c.rebuilt_since]),
    [['clean/1', true, true]],
  );
  t.is(downBefore.root.children_total, 1);

  // A stale rebuild of the top brings the chain up to date; the want says what it rebuilt.
  const stale = await createWant(f, ['report/1'], { rebuild: 'stale' });
  const done = await waitForWant(f, stale, ['successful']);
  t.deepEqual([...done.rebuilt].sort(), ['clean/1', 'report/1']);
  t.false((await f.getJson(`/api/partitions/${enc('report/1')}`)).stale);
  const down = await f.getJson(`/api/partitions/${enc('raw/1')}/lineage?direction=downstream&depth=5`);
  t.deepEqual(down.root.children.map((c: { partition_ref: string }) => c.partition_ref), ['clean/1']);
  t.false(down.root.children[0].rebuilt_since, 'rebuilt, clean took the current build of raw');
  t.deepEqual(down.root.children[0].children.map((c: { partition_ref: string }) => c.partition_ref), ['report/1']);

  const missing = await f.api(`/api/partitions/${enc('raw/404')}`);
  t.is(missing.status, 404);
  const missingError = ((await missing.json()) as { error: string }).error;
  t.regex(missingError, /raw\/404/);
  t.notRegex(missingError, /%2F/, 'a ref that came encoded gets no hint to encode it (the CLI shows this message)');
  const noSlash = ((await (await f.api('/api/partitions/raw')).json()) as { error: string }).error;
  t.notRegex(noSlash, /%2F/, 'a ref without a slash is a ref: no hint to encode one (the CLI shows this message)');
  const unencoded = await f.api('/api/partitions/raw/1');
  t.is(unencoded.status, 404);
  t.regex(((await unencoded.json()) as { error: string }).error, /encode its '\/' as %2F \(\/api\/partitions\/raw%2F1\)/, 'a ref sent unencoded is told how to send it');
  t.is((await f.api(`/api/partitions/${enc('raw/404')}/lineage`)).status, 404);
  // The lineage of a ref sent unencoded: the hint keeps /lineage after the ref, and decodes what came encoded in it.
  const lineage = ((await (await f.api('/api/partitions/raw/d%3D1/lineage')).json()) as { error: string }).error;
  t.regex(lineage, /encode its '\/' as %2F \(\/api\/partitions\/raw%2Fd%3D1\/lineage\)/);
  // Below an encoded ref, an unknown path: no hint (it would encode the ref twice, naming another).
  const below = ((await (await f.api(`/api/partitions/${enc('raw/1')}/lineage/extra`)).json()) as { error: string }).error;
  t.regex(below, /^No route GET /);
  t.notRegex(below, /%252F|encode its/);
  const badLimit = await f.api(`/api/partitions/${enc('raw/1')}?builds_limit=0`);
  t.is(badLimit.status, 400);
  const badRebuild = await f.postWant({ partitions: ['raw/1'], rebuild: 'everything' });
  t.is(badRebuild.status, 400);
  t.regex(((await badRebuild.json()) as { error: string }).error, /rebuild.*missing, stale, all/);
});

test('taints: 201 with every ref tainted (downstream included), listed and shown; bad bodies and never-built refs are 400', async (t) => {
  const f = await startServer(t, { graph: CHAIN });
  await waitForWant(f, await createWant(f, ['report/2']), ['successful']);
  const post = (body: unknown) => f.api('/api/taints', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

  const never = await post({ partitions: ['raw/2', 'raw/77'] });
  t.is(never.status, 400);
  t.regex(((await never.json()) as { error: string }).error, /raw\/77.*never built.*want it instead: platform build raw\/77\.$/);
  // Many: five named, the rest counted; a ref no job produces is not to be wanted, but checked.
  const many = await post({ partitions: Array.from({ length: 1_207 }, (_, i) => `raw/${1000 + i}`) });
  t.is(((await many.json()) as { error: string }).error, "Cannot taint 'raw/1000', 'raw/1001', 'raw/1002', 'raw/1003', 'raw/1004' and 1,202 more: never built, so there is nothing to rebuild yet; want them instead: platform build <the refs, or a pattern>.");
  const typo = await post({ partitions: ['rwa/2'] });
  t.is(typo.status, 400);
  t.regex(((await typo.json()) as { error: string }).error, /'rwa\/2': never built, .*no one job in platform\.json produces it either: check the ref/);
  t.is((await post({ partitions: [] })).status, 400);
  t.is((await post({ partitions: ['raw/2'], downstream: 'yes' })).status, 400);
  t.is((await post({ partitions: ['raw/2'], because: 'x' })).status, 400);
  t.is((await f.getJson(`/api/partitions/${enc('raw/2')}`)).status, 'live', 'a refused taint changed nothing');

  const res = await post({ partitions: ['raw/2'], reason: 'bad load', downstream: true });
  t.is(res.status, 201);
  const taint = (await res.json()) as { taint_id: string; partitions: string[] };
  t.regex(taint.taint_id, /^t-\d+$/);
  t.deepEqual(taint.partitions, ['raw/2', 'clean/2', 'report/2']);
  for (const ref of taint.partitions) t.is((await f.getJson(`/api/partitions/${enc(ref)}`)).status, 'tainted');
  const shown = await f.getJson(`/api/taints/${taint.taint_id}`);
  t.is(shown.reason, 'bad load');
  t.true(shown.downstream);
  t.is(shown.still_tainted, 3);
  // Its partitions a page at a time (a downstream taint may hold a hundred thousand); the count is over all of them.
  const paged = await f.getJson(`/api/taints/${taint.taint_id}?partitions_offset=1&partitions_limit=1`);
  t.deepEqual(paged.partitions, [taint.partitions[1]]);
  t.like(paged, { partitions_total: 3, still_tainted: 3 });
  t.is((await f.api(`/api/taints/${taint.taint_id}?partitions_limit=0`)).status, 400);
  t.is((await f.api(`/api/taints/${taint.taint_id}?partitions_limit=10001`)).status, 400);
  const list = await f.getJson('/api/taints');
  t.is(list.total, 1);
  t.is(list.data[0].taint_id, taint.taint_id);
  t.is(list.data[0].still_tainted, 3, 'a list counts them too');
  const noTaint = await f.api('/api/taints/t-99');
  t.is(noTaint.status, 404);
  t.regex(((await noTaint.json()) as { error: string }).error, /platform taints list \(GET \/api\/taints\)/);

  // A want rebuilds what the taint marked; the taint's detail then counts none still tainted.
  await waitForWant(f, await createWant(f, ['report/2']), ['successful']);
  t.is((await f.getJson(`/api/taints/${taint.taint_id}`)).still_tainted, 0);
  t.is((await f.getJson('/api/taints')).data[0].still_tainted, 0);
  const metrics = await (await f.api('/metrics')).text();
  t.regex(metrics, /^platform_taints_total 1$/m);
  t.regex(metrics, /^platform_builds_total 6$/m);
  t.regex(metrics, /^platform_wants_sla_missed_total 0$/m);
});

test('POST /api/partitions/lookup reads many partitions in one request, as the list shows them; unknown refs are named; bad bodies are 400', async (t) => {
  const f = await startServer(t, { graph: CHAIN });
  await waitForWant(f, await createWant(f, ['report/3']), ['successful']);
  const post = (body: unknown) => f.api('/api/partitions/lookup', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

  const res = await post({ refs: ['report/3', 'nowhere/1', 'raw/3', 'report/3'] });
  t.is(res.status, 200);
  const reply = (await res.json()) as { data: Array<{ partition_ref: string }>; unknown: string[] };
  const listed = await f.getJson('/api/partitions?prefix=r');
  t.deepEqual(
    reply.data,
    ['report/3', 'raw/3'].map((ref) => listed.data.find((p: { partition_ref: string }) => p.partition_ref === ref)),
    'in the order asked, each once, as the list shows them',
  );
  t.deepEqual(reply.unknown, ['nowhere/1']);

  const refused = async (body: unknown, said: RegExp) => {
    const r = await post(body);
    t.is(r.status, 400, JSON.stringify(body).slice(0, 80));
    t.regex(((await r.json()) as { error: string }).error, said);
  };
  await refused({ refs: [] }, /refs/);
  await refused({}, /Field 'refs' is required/);
  await refused({ refs: ['raw/3'], extra: 1 }, /Unknown field 'extra'/);
  await refused({ refs: Array.from({ length: 1001 }, (_, i) => `raw/${i}`) }, /refs/);
  await refused({ refs: ['bad\u0001ref'] }, /refs/);
  // Without a body it says what to send.
  const bare = await f.api('/api/partitions/lookup', { method: 'POST' });
  t.is(bare.status, 400);
  t.regex(((await bare.json()) as { error: string }).error, /"refs"/);
});
