/**
 * `want tree` and `lineage` on a narrow terminal (COLUMNS=40, 60): a long line wraps under its own branch with the
 * guides above carried on, not by the terminal into column 0 where the tree is lost; in a pipe (no width) a node is
 * one line. Pure, then the real CLI against a real server with COLUMNS set.
 */
import test from 'ava';
import type { WantTreeReply } from '../lib/api/want-tree.js';
import { wantTreeLines } from '../lib/cli/commands/want-command.js';
import { colors } from '../lib/cli/output.js';
import { visibleWidth } from '../lib/cli/table-layout.js';
import { cliAgainst } from './helpers/cli-against.js';
import { sharedServer } from './helpers/shared-server.js';
import { until } from './helpers/until.js';

const node = (want_id: string, parent_want_id: string | null, depth: number, prefix: string, children_total: number) => ({
  want_id,
  parent_want_id,
  depth,
  status: 'successful' as const,
  source: parent_want_id === null ? 'user' : 'derived',
  partitions: [1, 2, 3].map((d) => `${prefix}/date=2010-01-0${d}`),
  partitions_total: 5_000,
  job_runs_total: 5_000,
  children_total,
});
const reply: WantTreeReply = {
  want_id: 'w-1',
  nodes: [node('w-1', null, 0, 'agg', 3), node('w-2', 'w-1', 1, 'daily', 1), node('w-3', 'w-1', 1, 'daily', 0)],
  truncated: true,
  limit: 3,
};

test('a want tree wraps its lines to the width under their own branch, in colour too', (t) => {
  for (const level of [0, 1] as const) {
    const was = colors.level;
    colors.level = level;
    try {
      for (const width of [40, 60]) {
        const lines = wantTreeLines(reply, width);
        for (const l of lines) t.true(visibleWidth(l) <= width, `${width}, colour ${level}: ${JSON.stringify(l)}`);
        const plain = lines.map((l) => l.replace(/\x1b\[[0-9;]*m/g, ''));
        // Every line after the root's first starts with a guide: the tree reads down its left edge.
        for (const l of plain.slice(1)) t.regex(l, /^(│  |├─ |└─ |   )/, `${width}: ${l}`);
        t.is(plain.filter((l) => /^(├─|└─) /.test(l)).length, 3, 'w-2, w-3 and the note of the one left out');
        t.true(plain.join(' ').replace(/\s+/g, ' ').includes('(derived, 5,000 job runs)'));
      }
    } finally {
      colors.level = was;
    }
  }
  colors.level = 0;
  t.deepEqual(wantTreeLines(reply, 40), [
    'w-1 successful agg/date=2010-01-01,',
    '│  agg/date=2010-01-02,',
    '│  agg/date=2010-01-03 +4,997 more',
    '│  (user, 5,000 job runs)',
    '├─ w-2 successful',
    '│  │  daily/date=2010-01-01,',
    '│  │  daily/date=2010-01-02,',
    '│  │  daily/date=2010-01-03 +4,997 more',
    '│  │  (derived, 5,000 job runs)',
    '│  └─ … 1 more derived want (raise',
    '│     --limit)',
    '├─ w-3 successful',
    '│     daily/date=2010-01-01,',
    '│     daily/date=2010-01-02,',
    '│     daily/date=2010-01-03 +4,997 more',
    '│     (derived, 5,000 job runs)',
    '└─ … 1 more derived want (raise --limit)',
  ]);
  t.is(wantTreeLines(reply).length, 5, 'no width (a pipe): a node a line');
});

const GRAPH = {
  jobs: [
    { label: 'raw', outputs: ['raw/date=(?<date>[0-9-]+)'], exec: ['true'] },
    { label: 'daily', outputs: ['daily/revenue/date=(?<date>[0-9-]+)'], inputs: [{ partition_ref: 'raw/date=${date}', dep_type: 'MATERIALIZE' }], exec: ['true'] },
  ],
};
const shared = sharedServer(GRAPH, 'platform-tree-width-');

test('the CLI wraps lineage and want tree to COLUMNS', async (t) => {
  const created = await fetch(`${shared.url()}/api/wants`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ partitions: ['daily/revenue/date=2026-01-05'] }),
  });
  const { want_id } = (await created.json()) as { want_id: string };
  await until(() => fetch(`${shared.url()}/api/wants/${want_id}`).then((r) => r.json() as Promise<{ status: string }>), (w) => w.status === 'successful', 'the want', 30_000);
  const cli = cliAgainst(shared.url);
  const narrow = (...args: string[]) => {
    process.env.COLUMNS = '30';
    try {
      return cli(...args);
    } finally {
      delete process.env.COLUMNS;
    }
  };
  const lineage = await narrow('lineage', 'daily/revenue/date=2026-01-05');
  t.is(lineage.code, 0, lineage.stderr);
  const lines = lineage.stdout.trimEnd().split('\n');
  for (const l of lines) t.true(visibleWidth(l) <= 30, JSON.stringify(l));
  for (const l of lines.slice(1)) t.regex(l, /^(│  |└─ |   )/, l);
  t.regex(lines.map((l) => l.replace(/^(│  |└─ |   )+/, '')).join(' '), /^daily\/revenue\/date=2026-01- 05 b-\d+ live raw\/date=2026-01-05 b-\d+ live$/);
  const tree = await narrow('want', 'tree', want_id);
  for (const l of tree.stdout.trimEnd().split('\n')) t.true(visibleWidth(l) <= 30, JSON.stringify(l));
  const wide = await cli('lineage', 'daily/revenue/date=2026-01-05');
  t.regex(wide.stdout, /^daily\/revenue\/date=2026-01-05 b-\d+ live\n└─ raw\/date=2026-01-05 b-\d+ live\n$/, 'a pipe without COLUMNS: a node a line');
});

test('a colour span cut by the wrap does not colour the guides of the next line: each line starts with no colour open', (t) => {
  const was = colors.level;
  colors.level = 1;
  try {
    for (const width of [30, 40, 60]) {
      const lines = wantTreeLines(reply, width);
      // As a terminal keeps it: the codes still open where each line starts.
      let open = 0;
      for (const l of lines) {
        t.is(open, 0, `${width}: a colour is open where ${JSON.stringify(l)} starts`);
        // eslint-disable-next-line no-control-regex
        for (const m of l.matchAll(/\x1b\[([0-9;]*)m/g)) {
          const code = m[1] || '0';
          if (code === '0') open = 0;
          else if (['22', '23', '24', '27', '28', '29', '39', '49'].includes(code)) open = Math.max(0, open - 1);
          else open++;
        }
      }
      t.is(open, 0, `${width}: a colour is left open after the tree`);
      // The words of a cut span are still in its colour on their next line, after its guides (dim, as chalk has it).
      if (width === 30) t.true(lines.some((l) => /^(│  )+\x1b\[2m5,000 job runs\)/.test(l)), lines.join('\n'));
    }
  } finally {
    colors.level = was;
  }
});
