/**
 * A lineage larger than one answer holds (500 nodes): a fan-in whose inputs each have hundreds of their own is cut
 * breadth first, so every input of the root is shown before any input's inputs, and `platform lineage` says why a
 * node's children stop (its cap, with how many are left and where to see them; or the depth). Real jobs, real
 * server, the real CLI.
 */
import test from 'ava';
import { lineage, LINEAGE_MAX_NODES } from '../lib/server/lineage-queries.js';
import type { LineageNode } from '../lib/api/partitions-change.js';
import { cliAgainst } from './helpers/cli-against.js';
import { lineageTree } from '../lib/cli/commands/lineage-command.js';
import { colors } from '../lib/cli/output.js';

colors.level = 0;
import { makeWorkspace, openPlatform, startServer, waitForWant, want } from './helpers/jobs-fixture.js';

/** leaf/<n> in batches; part/<k> consumes leaf/<k>00..<k>99 +100 more (200 leaves, by its config program); top the 4 parts. */
const PARTS = 4;
const LEAVES = 200;
const configProgram =
  `const refs = process.argv.slice(1);` +
  `process.stdout.write(JSON.stringify({ configs: refs.map((r) => { const k = Number(r.split('/')[1]);` +
  ` return { outputs: [r], inputs: Array.from({ length: ${LEAVES} }, (_, i) => ({ partition_ref: 'leaf/' + (k * 1000 + i), dep_type: 'MATERIALIZE' })), args: [], env: {} }; }) }));`;
const graph = {
  max_concurrent_job_runs: 4,
  jobs: [
    { label: 'leaf', outputs: ['leaf/\\d+'], exec: ['true'], batch: { max_partitions: 400 } },
    { label: 'part', outputs: ['part/\\d+'], config: ['node', '-e', configProgram], exec: ['true'] },
    {
      label: 'top',
      outputs: ['top'],
      inputs: Array.from({ length: PARTS }, (_, k) => ({ partition_ref: `part/${k + 1}`, dep_type: 'MATERIALIZE' })),
      exec: ['true'],
    },
  ],
};

const count = (n: LineageNode): number => 1 + n.children.reduce((sum, c) => sum + count(c), 0);

test('a lineage over 500 nodes shows every input of the root first, counts what it left out, and the CLI says how to see it', async (t) => {
  const dir = makeWorkspace(t);
  const platform = await openPlatform(t, dir, graph);
  const id = await want(platform, ['top']);
  const s = await waitForWant(platform, id, ['successful', 'failed'], 60_000);
  t.is(s.wants.get(id)!.status, 'successful');

  const up = lineage(platform.state(), 'top', 'upstream', 3)!;
  t.is(count(up), LINEAGE_MAX_NODES, 'the answer is full');
  t.deepEqual(up.children.map((c) => c.partition_ref), ['part/1', 'part/2', 'part/3', 'part/4'], 'every input of the root, not the first one and its tree');
  t.false(up.truncated);
  t.is(up.children_total, PARTS);
  for (const part of up.children) t.is(part.children_total, LEAVES);
  const shown = up.children.map((c) => c.children.length);
  t.is(shown.reduce((a, b) => a + b, 0), LINEAGE_MAX_NODES - 1 - PARTS, 'the rest of the answer goes to the next level');
  t.true(up.children.at(-1)!.truncated, 'the last part has leaves left out');
  t.is(up.children[0]!.children[0]!.children_total, 0, 'a leaf consumed nothing');

  const deep = lineage(platform.state(), 'top', 'upstream', 1)!;
  t.true(deep.children.every((c) => c.truncated && c.children.length === 0 && c.children_total === LEAVES), 'cut by depth: counted, none listed');

  const down = lineage(platform.state(), 'leaf/1000', 'downstream', 5)!;
  t.like(down, { children_total: 1, truncated: false });
  t.like(down.children[0], { partition_ref: 'part/1', children_total: 1 });

  const server = await startServer(t, platform);
  const cli = cliAgainst(() => server.url);
  const tree = await cli('lineage', 'top');
  t.is(tree.code, 0, tree.stderr);
  const lines = tree.stdout.split('\n');
  t.true(lines.some((l) => l.startsWith('├─ part/1 ')) && lines.some((l) => l.startsWith('└─ part/4 ')), tree.stdout.slice(0, 500));
  const left = LEAVES - up.children.at(-1)!.children.length;
  t.true(
    lines.some((l) => l.includes(`… ${left} more of its 200 inputs (a lineage shows at most 500 partitions; its own: platform lineage part/4 --depth 1)`)),
    lines.slice(-3).join('\n'),
  );
  t.false(tree.stdout.includes('raise --depth'), 'nothing was cut by the depth');
  const shallow = await cli('lineage', 'top', '--depth', '1');
  t.is(shallow.stdout.split('\n').filter((l) => l.includes('… 200 inputs deeper (raise --depth)')).length, PARTS, shallow.stdout);
  const json = JSON.parse((await cli('--json', 'lineage', 'top')).stdout);
  t.is(json.root.children.length, PARTS);
  t.is(json.root.children[0].children_total, LEAVES);
});

test("a root cut by the cap is said without sending the user to the command they ran", (t) => {
  const leaf = (n: number): LineageNode => ({ partition_ref: `use/${n}`, build_id: `b-${n + 1}`, status: 'live', stale: false, rebuilt_since: false, children: [], children_total: 0, truncated: false });
  const root: LineageNode = { partition_ref: 'cfg', build_id: 'b-1', status: 'live', stale: false, rebuilt_since: false, children: [leaf(1), leaf(2)], children_total: 3_000, truncated: true };
  t.deepEqual(lineageTree(root, 1, 500, 'downstream').slice(-1), ['└─ … 2,998 more of its 3,000 consumers (a lineage shows at most 500 partitions)']);
});
