/**
 * The CLI of partitions that change, as a user runs it: the real binary against a real server (one per file:
 * the tests use distinct partitions) with real job processes. `build --force` and `--stale`, `partitions get`,
 * `lineage` (a tree, or --json), `taint` and `taints list|get`, and their errors.
 */
import test from 'ava';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cliAgainst } from './helpers/cli-against.js';
import { sharedServer } from './helpers/shared-server.js';


/** raw/<n> -> clean/<n> -> report/<n>; each run appends "<job> <n>" to runs.txt in the workspace. */
const GRAPH = {
  jobs: [
    { label: 'raw', outputs: ['raw/(?<n>\\d+)'], args: ['${n}'], exec: ['bash', '-c', 'echo "raw $1" >> runs.txt', 'raw'] },
    {
      label: 'clean',
      outputs: ['clean/(?<n>\\d+)'],
      inputs: [{ partition_ref: 'raw/${n}', dep_type: 'MATERIALIZE' }],
      args: ['${n}'],
      exec: ['bash', '-c', 'echo "clean $1" >> runs.txt', 'clean'],
    },
    {
      label: 'report',
      outputs: ['report/(?<n>\\d+)'],
      inputs: [{ partition_ref: 'clean/${n}', dep_type: 'MATERIALIZE' }],
      args: ['${n}'],
      exec: ['bash', '-c', 'echo "report $1" >> runs.txt', 'report'],
    },
    {
      label: 'peek',
      outputs: ['peek/(?<n>\\d+)'],
      inputs: [{ partition_ref: 'clean/${n}', dep_type: 'QUERY' }],
      args: ['${n}'],
      exec: ['bash', '-c', 'echo "peek $1" >> runs.txt', 'peek'],
    },
  ],
};

const shared = sharedServer(GRAPH, 'platform-cli-change-');

const cli = cliAgainst(shared.url);

const runs = (n: number) =>
  readFileSync(join(shared.ws(), 'runs.txt'), 'utf8')
    .split('\n')
    .filter((l) => l.endsWith(` ${n}`));

test('build --force rebuilds the bottom; partitions get and lineage show why the rest is stale; build --stale fixes exactly that', async (t) => {
  t.is((await cli('build', 'report/1')).code, 0);
  const forced = await cli('build', '--force', 'raw/1');
  t.is(forced.code, 0, forced.stderr);
  t.deepEqual(runs(1), ['raw 1', 'clean 1', 'report 1', 'raw 1']);

  const got = await cli('partitions', 'get', 'clean/1');
  t.is(got.code, 0, got.stderr);
  t.regex(got.stdout, /stale\s+│?\s*input raw\/1 was rebuilt since b-\d+/);
  t.regex(got.stdout, /consumed\s+│?\s*raw\/1 @ b-\d+/);
  const json = JSON.parse((await cli('--json', 'partitions', 'get', 'report/1')).stdout);
  t.deepEqual(json.stale_reasons, ['input clean/1 is stale']);
  t.is(json.builds_total, 1);

  const tree = await cli('lineage', 'report/1');
  t.is(tree.code, 0, tree.stderr);
  const lines = tree.stdout.trimEnd().split('\n');
  t.regex(lines[0]!, /^report\/1 b-\d+ live stale$/);
  t.regex(lines[1]!, /^└─ clean\/1 b-\d+ live stale$/);
  t.regex(lines[2]!, /^   └─ raw\/1 b-\d+ live rebuilt since$/);
  const down = JSON.parse((await cli('--json', 'lineage', 'raw/1', '--downstream', '--depth', '2')).stdout);
  t.is(down.direction, 'downstream');
  // Clean's current build consumed the replaced build of raw: found under it, stale since.
  t.like(down.root.children[0], { partition_ref: 'clean/1', stale: true, rebuilt_since: true });
  // Its detail lists its current build's consumers (none yet), and says where those of its earlier builds are.
  t.regex((await cli('partitions', 'get', 'raw/1')).stdout, /nothing consumed this build\) \(what consumed its earlier builds: platform lineage raw\/1 --downstream\)/);
  const downText = (await cli('lineage', 'raw/1', '--downstream')).stdout.trimEnd().split('\n');
  t.regex(downText[1]!, /^└─ clean\/1 b-\d+ live stale took an earlier build$/);
  t.regex(downText[2]!, /^   └─ report\/1 b-\d+ live stale$/);

  const stale = await cli('build', '--stale', 'report/1');
  t.is(stale.code, 0, stale.stderr);
  t.deepEqual(runs(1).slice(4), ['clean 1', 'report 1']);
  t.false(JSON.parse((await cli('--json', 'partitions', 'get', 'report/1')).stdout).stale);
  const list = await cli('partitions', 'list', '--prefix', 'report/');
  t.regex(list.stdout, /report\/1\s+│ live\s+│ r-\d+\s+│ b-\d+\s+│\s+│/);
});

test('taint --downstream names every ref it tainted; taints list and get show it; a never-built ref is a clear error', async (t) => {
  t.is((await cli('build', 'report/2')).code, 0);
  const refused = await cli('taint', 'raw/2', 'raw/404');
  t.is(refused.code, 1);
  t.regex(refused.stderr, /raw\/404.*never built/);

  const tainted = await cli('taint', 'raw/2', '--downstream', '--reason', 'bad load');
  t.is(tainted.code, 0, tainted.stderr);
  t.regex(tainted.stdout, /^t-\d+: tainted 3 partitions: raw\/2, clean\/2, report\/2/m);
  const id = /^(t-\d+)/.exec(tainted.stdout)![1]!;
  const shown = await cli('taints', 'get', id);
  t.regex(shown.stdout, /bad load/);
  t.regex(shown.stdout, /3 of 3/);
  const listed = JSON.parse((await cli('--json', 'taints', 'list')).stdout);
  t.true(listed.data.some((x: { taint_id: string }) => x.taint_id === id));
  t.is((await cli('taints', 'get', 't-999')).code, 1);

  t.is((await cli('build', 'report/2')).code, 0);
  t.deepEqual(runs(2), ['raw 2', 'clean 2', 'report 2', 'raw 2', 'clean 2', 'report 2']);
  t.regex((await cli('taints', 'get', id)).stdout, /0 of 3/);
});

test("want wait of a want 'absent' that left a tainted partition as it was says so and how to rebuild it, not that all was live", async (t) => {
  t.is((await cli('build', 'raw/31', 'raw/32')).code, 0);
  t.is((await cli('taint', 'raw/31')).code, 0);
  const made = await cli('--json', 'want', 'create', '-p', 'raw/31', '-p', 'raw/32', '--rebuild', 'absent');
  t.is(made.code, 0, made.stderr);
  const id = (JSON.parse(made.stdout) as { want_id: string }).want_id;
  const waited = await cli('want', 'wait', id);
  t.is(waited.code, 0, waited.stderr);
  t.regex(waited.stdout, new RegExp(`want ${id} successful in .* \\(nothing to build\\)\\.`));
  t.notRegex(waited.stdout, /every partition was already live/);
  t.regex(waited.stdout, /1 partition was left as it was: raw\/31 \(tainted\)\. Rebuild 'absent' builds only what was never built nor attempted; rebuild it: platform build raw\/31$/m);
  t.deepEqual(runs(31), ['raw 31'], 'nothing rebuilt');
});

test('build expands brace patterns into one want; a malformed pattern is a usage error naming what to fix', async (t) => {
  const r = await cli('--json', 'build', '--detach', 'raw/{10..12}', 'raw/{12,13}');
  t.is(r.code, 0, r.stderr);
  t.deepEqual(JSON.parse(r.stdout).want.partitions, ['raw/10', 'raw/11', 'raw/12', 'raw/13']);
  const bad = await cli('build', 'raw/{5..1}');
  t.is(bad.code, 2);
  t.regex(bad.stderr, /raw\/\{5\.\.1\}.*runs backwards; write \{1\.\.5\}/);
});

test('want tree shows the wants derived from a want level by level, as the API lists them; --limit cuts it and says so', async (t) => {
  const built = await cli('--json', 'build', 'report/{40..41}');
  t.is(built.code, 0, built.stderr);
  const id = (JSON.parse(built.stdout) as { want: { want_id: string } }).want.want_id;
  interface Node { want_id: string; parent_want_id: string | null; depth: number; status: string; partitions: string[]; partitions_total: number; job_runs_total: number; children_total: number }
  const reply = JSON.parse((await cli('--json', 'want', 'tree', id)).stdout) as { want_id: string; nodes: Node[]; truncated: boolean; limit: number };
  t.is(reply.want_id, id);
  t.is(reply.limit, 200);
  t.false(reply.truncated);
  const [root, ...derived] = reply.nodes;
  t.like(root, { want_id: id, parent_want_id: null, depth: 0, status: 'successful', partitions: ['report/40', 'report/41'], partitions_total: 2 });
  // Level by level, each after its parent; the inputs of report are clean's, and of clean raw's.
  const depthOf = new Map(reply.nodes.map((n) => [n.want_id, n.depth]));
  reply.nodes.forEach((n, i) => {
    if (i > 0) t.true(n.depth >= reply.nodes[i - 1]!.depth, `${n.want_id} after a deeper want`);
    if (n.parent_want_id !== null) t.is(n.depth, depthOf.get(n.parent_want_id)! + 1);
  });
  t.deepEqual([...new Set(derived.map((n) => n.depth))], [1, 2]);
  for (const n of derived) t.true(n.partitions.every((p) => p.startsWith(n.depth === 1 ? 'clean/4' : 'raw/4')), `${n.want_id}: ${n.partitions.join(', ')}`);
  // What each node says of its want agrees with the want's own read.
  for (const n of reply.nodes) {
    const w = JSON.parse((await cli('--json', 'want', 'get', n.want_id)).stdout) as { child_want_ids: string[]; job_run_ids: string[]; partitions_total: number; status: string };
    t.is(n.children_total, w.child_want_ids.length);
    t.is(n.job_runs_total, w.job_run_ids.length);
    t.is(n.status, w.status);
    t.deepEqual(reply.nodes.filter((c) => c.parent_want_id === n.want_id).map((c) => c.want_id).sort(), [...w.child_want_ids].sort());
  }

  // The want's own detail points at the tree.
  t.regex((await cli('want', 'get', id)).stdout, new RegExp(`derived wants\\s+│\\s+w-\\d+.*\\(see: platform want tree ${id}\\)`));
  const text = await cli('want', 'tree', id);
  t.is(text.code, 0, text.stderr);
  const lines = text.stdout.trimEnd().split('\n');
  t.is(lines.length, reply.nodes.length);
  t.regex(lines[0]!, new RegExp(`^${id} successful report/40, report/41 \\(user, \\d+ job runs?\\)$`));
  t.true(lines.slice(1).some((l) => /^[├└]─ w-\d+ successful clean\/4/.test(l)), lines.join('\n'));
  t.true(lines.slice(1).some((l) => /^[│ ] {2}[├└]─ w-\d+ successful raw\/4/.test(l)), lines.join('\n'));

  const cut = JSON.parse((await cli('--json', 'want', 'tree', id, '--limit', '1')).stdout) as { nodes: Node[]; truncated: boolean };
  t.deepEqual(cut.nodes.map((n) => n.want_id), [id]);
  t.true(cut.truncated);
  const cutText = await cli('want', 'tree', id, '--limit', '1');
  t.regex(cutText.stdout, new RegExp(`└─ … ${root!.children_total} more derived wants? \\(raise --limit\\)`));

  const usage = await cli('want', 'tree', id, '--limit', '0');
  t.is(usage.code, 2);
  t.regex(usage.stderr, /--limit/);
  const missing = await cli('want', 'tree', 'w-999999');
  t.is(missing.code, 1);
  t.regex(missing.stderr, /No want with id 'w-999999'/);
});

test('a build that ends on stale partitions says so and what would help: a live one, and one stale through an input it only QUERYs', async (t) => {
  t.is((await cli('build', 'report/7')).code, 0);
  // After clean/7 exists: a QUERY input is not waited for, and peek records the build it read.
  const first = await cli('build', 'peek/7');
  t.is(first.code, 0, first.stderr);
  t.notRegex(first.stdout, /stale/, 'nothing is stale after a first build');
  t.is((await cli('build', '--force', 'raw/7')).code, 0);

  // Live, so nothing is built, but not up to date: said, with the command that rebuilds it.
  const live = await cli('build', 'report/7');
  t.is(live.code, 0, live.stderr);
  t.regex(live.stdout, /1 partition is stale after this build:\n\s+report\/7: input clean\/7 is stale; taken as it was\n'platform build --stale report\/7' rebuilds it/);

  // Rebuilt, and stale at once: its QUERY input is stale and a want does not build it.
  const query = await cli('build', '--stale', 'peek/7');
  t.is(query.code, 0, query.stderr);
  t.deepEqual(runs(7).filter((r) => r.startsWith('peek')), ['peek 7', 'peek 7'], 'peek was rebuilt');
  t.regex(query.stdout, /1 partition is stale after this build:\n\s+peek\/7: input clean\/7 is stale; rebuilt by this build/);
  t.regex(query.stdout, /A want never builds an input its job only QUERYs: bring it up to date first \('platform build --stale clean\/7'\), then 'platform build --stale peek\/7'/);
  t.notRegex(query.stdout, /rebuilds it and what is stale/, 'no advice that would not help');
  const json = JSON.parse((await cli('--json', 'build', '--stale', 'peek/7')).stdout);
  t.like(json.still_stale[0], { partition_ref: 'peek/7', stale_reasons: ['input clean/7 is stale'], stale_reasons_total: 1, rebuilt: true, query_inputs: ['clean/7'] });
  t.is(json.still_stale_checked, 1);

  // A live one stale through its QUERY input gets the same advice, not a rebuild of itself alone.
  const again = await cli('build', 'peek/7');
  t.regex(again.stdout, /peek\/7: input clean\/7 is stale; taken as it was\nA want never builds an input its job only QUERYs/);

  // Doing what it says ends it. With its QUERY input now newer than what it read (not stale itself), a rebuild of
  // peek alone is the advice.
  t.is((await cli('build', '--stale', 'clean/7')).code, 0);
  const newer = await cli('build', 'peek/7');
  t.regex(newer.stdout, /peek\/7: input clean\/7 was rebuilt since b-\d+; taken as it was\n'platform build --stale peek\/7' rebuilds it/);
  t.notRegex(newer.stdout, /never builds an input/);
  const after = await cli('build', '--stale', 'peek/7');
  t.is(after.code, 0, after.stderr);
  t.notRegex(after.stdout, /stale/);
});

test('partitions lookup shows many partitions at once and names the refs never seen; --json is the API\'s answer; over 1,000 refs is a usage error', async (t) => {
  t.is((await cli('build', 'report/9')).code, 0);
  const got = await cli('partitions', 'lookup', '{raw,clean,report}/9', 'nowhere/9');
  t.is(got.code, 0, got.stderr);
  t.regex(got.stdout, /raw\/9\s+│?\s*live/);
  t.regex(got.stdout, /report\/9\s+│?\s*live/);
  t.regex(got.stdout, /never seen.*nowhere\/9/);
  const json = JSON.parse((await cli('--json', 'partitions', 'lookup', 'report/9', 'nowhere/9')).stdout);
  t.deepEqual(json.data.map((p: { partition_ref: string }) => p.partition_ref), ['report/9']);
  t.deepEqual(json.unknown, ['nowhere/9']);
  // A thousand refs never seen: the first 20 named, the rest counted (was one line of all of them, 8 KB).
  const unseen = await cli('partitions', 'lookup', 'nowhere/{1..1000}');
  t.is(unseen.code, 0, unseen.stderr);
  t.is(unseen.stdout, `never seen (nothing has built them, nor begun to): 1,000 refs: ${Array.from({ length: 20 }, (_, i) => `nowhere/${i + 1}`).join(', ')} +980 more (--json lists them all)\n`);
  const many = await cli('partitions', 'lookup', 'raw/{1..1001}');
  t.is(many.code, 2);
  t.regex(many.stderr, /1,001 refs given; a lookup takes at most 1,000/);
});
