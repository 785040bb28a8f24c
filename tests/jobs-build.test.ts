/**
 * Wants built into job runs with real processes: dependency order over three levels, derived wants, a
 * config-program job, joins (a ref wanted twice is built once), QUERY inputs, concurrency limits, and the
 * 400 for a ref no job produces.
 */
import { listArray } from '../lib/state/append-list.js';
import test from 'ava';
import { LATER, planAt } from './helpers/plan-at.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  bash,
  lines,
  makeWorkspace,
  openPlatform,
  runs,
  runsFor,
  startServer,
  waitFor,
  waitForWant,
  want,
  wants,
} from './helpers/jobs-fixture.js';

/** raw/<d> -> daily/<d> -> weekly/<w> (weekly/<w> needs daily/<w>1..3). Each job logs start and end to order.txt. */
function threeLevelGraph() {
  const step = (label: string, check: string) =>
    bash(
      `set -e
       echo "start ${label}/$1" >> order.txt
       ${check}
       sleep 0.05
       mkdir -p out && echo "${label} $1" > "out/${label}-$1"
       echo "end ${label}/$1" >> order.txt`,
      label,
    );
  return {
    max_concurrent_job_runs: 8,
    jobs: [
      { label: 'raw', outputs: ['raw/(?<d>\\d+)'], exec: step('raw', 'true'), args: ['${d}'] },
      {
        label: 'daily',
        outputs: ['daily/(?<d>\\d+)'],
        inputs: [{ partition_ref: 'raw/${d}', dep_type: 'MATERIALIZE' }],
        // The job checks its input really is there: a run before its input would fail.
        exec: step('daily', 'test -f "out/raw-$1"'),
        args: ['${d}'],
      },
      {
        label: 'weekly',
        outputs: ['weekly/(?<w>\\d)'],
        inputs: [1, 2, 3].map((k) => ({ partition_ref: `daily/\${w}${k}`, dep_type: 'MATERIALIZE' })),
        exec: step('weekly', 'for k in 1 2 3; do test -f "out/daily-$1$k"; done'),
        args: ['${w}'],
      },
    ],
  };
}

test('a three-level graph is built in dependency order; derived wants carry parent and root', async (t) => {
  const dir = makeWorkspace(t);
  const platform = await openPlatform(t, dir, threeLevelGraph());
  const root = await want(platform, ['weekly/1']);
  const state = await waitForWant(platform, root);
  t.is(state.wants.get(root)!.status, 'successful');

  // The order file proves the order: every input ended before the job that needs it started.
  const order = lines(dir, 'order.txt');
  const at = (line: string) => {
    const i = order.indexOf(line);
    t.true(i >= 0, `order.txt has "${line}": ${order.join(' | ')}`);
    return i;
  };
  for (const d of ['11', '12', '13']) {
    t.true(at(`end raw/${d}`) < at(`start daily/${d}`), `raw/${d} before daily/${d}`);
    t.true(at(`end daily/${d}`) < at('start weekly/1'), `daily/${d} before weekly/1`);
  }
  // Seven refs, each built exactly once.
  t.is(order.filter((l) => l.startsWith('start ')).length, 7, order.join(' | '));
  t.is(new Set(order).size, order.length, 'no ref started twice');
  t.is(runs(state).length, 7);
  t.true(runs(state).every((r) => r.status === 'succeeded' && r.attempt === 1));
  for (const ref of ['raw/11', 'raw/12', 'raw/13', 'daily/11', 'daily/12', 'daily/13', 'weekly/1']) {
    t.is(state.partitions.get(ref)?.status, 'live', ref);
  }

  // Derived wants: one for the dailies (child of the user's want), one or more for the raws (children of the
  // want that needed them); all share the root and all ended successful.
  const all = wants(state);
  const derived = all.filter((w) => w.want_id !== root);
  t.true(derived.length >= 2, `derived wants: ${derived.map((w) => w.partitions.join(',')).join(' / ')}`);
  for (const w of derived) {
    t.is(w.source, 'derived');
    t.is(w.root_want_id, root);
    t.truthy(w.parent_want_id);
    t.not(w.parent_want_id, w.want_id);
    t.is(w.status, 'successful', w.want_id);
    // The chain of parents reaches the root.
    let cur = w;
    for (let hops = 0; cur.parent_want_id && hops < 10; hops++) cur = state.wants.get(cur.parent_want_id)!;
    t.is(cur.want_id, root);
  }
  const dailyWant = derived.find((w) => w.partitions.some((p) => p.startsWith('daily/')))!;
  t.is(dailyWant.parent_want_id, root);
  t.deepEqual([...dailyWant.partitions].sort(), ['daily/11', 'daily/12', 'daily/13']);
  const rawWants = derived.filter((w) => w.partitions.some((p) => p.startsWith('raw/')));
  t.deepEqual(rawWants.flatMap((w) => w.partitions).sort(), ['raw/11', 'raw/12', 'raw/13']);
  for (const w of rawWants) t.is(w.parent_want_id, dailyWant.want_id);
  t.deepEqual(listArray(state.wants.get(root)!.child_want_ids), [dailyWant.want_id]);
});

test('a config-program job builds: one config call, its args/env/inputs reach the job', async (t) => {
  const dir = makeWorkspace(t, {
    'cfg.mjs': `
      import { appendFileSync } from 'node:fs';
      const refs = process.argv.slice(2);
      appendFileSync('config-calls.txt', refs.join(' ') + '\\n');
      const configs = refs.map((ref) => {
        const n = /^report\\/(\\d+)$/.exec(ref)[1];
        return {
          outputs: [ref],
          inputs: [{ partition_ref: 'raw/' + n, dep_type: 'MATERIALIZE' }, { partitionRef: 'lookup/' + n }],
          args: [n, 'from-config'],
          env: { REPORT_N: n },
        };
      });
      process.stdout.write(JSON.stringify({ configs }));
    `,
    'report.mjs': `
      import { existsSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
      const stdin = readFileSync(0, 'utf8');
      const [n] = process.argv.slice(2);
      if (!existsSync('out/raw-' + n)) { console.error('input raw/' + n + ' is missing'); process.exit(7); }
      mkdirSync('out', { recursive: true });
      writeFileSync('out/report-' + n + '.json', JSON.stringify({
        argv: process.argv.slice(2), env_n: process.env.REPORT_N, outputs: process.env.PLATFORM_OUTPUTS,
        run_id: process.env.PLATFORM_JOB_RUN_ID, stdin: JSON.parse(stdin), cwd: process.cwd(),
      }));
    `,
  });
  const platform = await openPlatform(t, dir, {
    jobs: [
      {
        label: 'raw',
        outputs: ['raw/(?<d>\\d+)'],
        exec: bash('mkdir -p out && echo raw > "out/raw-$1"'),
        args: ['${d}'],
      },
      { label: 'report', outputs: ['report/\\d+'], config: ['node', 'cfg.mjs'], exec: ['node', 'report.mjs'] },
      { label: 'lookup', outputs: ['lookup/\\d+'], exec: bash('echo built >> lookup-ran.txt') },
    ],
  });
  const w = await want(platform, ['report/5']);
  const state = await waitForWant(platform, w);
  t.is(state.wants.get(w)!.status, 'successful', JSON.stringify(runs(state)));

  const out = JSON.parse(readFileSync(join(dir, 'out', 'report-5.json'), 'utf8')) as Record<string, unknown>;
  t.deepEqual(out.argv, ['5', 'from-config']);
  t.is(out.env_n, '5');
  t.deepEqual(JSON.parse(out.outputs as string), ['report/5']);
  t.is(out.cwd, dir);
  const [run] = runs(state, 'report');
  t.is(out.run_id, run!.job_run_id);
  t.deepEqual(out.stdin, {
    outputs: ['report/5'],
    inputs: [
      { dep_type: 'MATERIALIZE', partition_ref: 'raw/5' },
      { dep_type: 'QUERY', partition_ref: 'lookup/5' },
    ],
    args: ['5', 'from-config'],
    env: { REPORT_N: '5' },
  });
  t.deepEqual(run!.config.args, ['5', 'from-config']);
  t.is(state.partitions.get('raw/5')?.status, 'live');
  // The QUERY input is not built.
  t.is(state.partitions.get('lookup/5'), undefined);
  t.deepEqual(lines(dir, 'lookup-ran.txt'), []);
  // The config is cached: the program ran once although the ref was resolved on several steps.
  t.deepEqual(lines(dir, 'config-calls.txt'), ['report/5']);
});

const onceGraph = {
  jobs: [
    {
      label: 'once',
      outputs: ['once/(?<n>\\d+)'],
      exec: bash('echo "$1 $$" >> invocations.txt; sleep 0.6; echo done'),
      args: ['${n}'],
    },
  ],
};

test('the same ref wanted twice at once is built once; both wants join the run', async (t) => {
  const dir = makeWorkspace(t);
  const platform = await openPlatform(t, dir, onceGraph);
  const [a, b] = await Promise.all([want(platform, ['once/1']), want(platform, ['once/1'])]);
  t.not(a, b);
  await waitForWant(platform, a);
  const state = await waitForWant(platform, b);
  t.is(state.wants.get(a)!.status, 'successful');
  t.is(state.wants.get(b)!.status, 'successful');
  const built = runsFor(state, 'once/1');
  t.is(built.length, 1, JSON.stringify(built));
  t.deepEqual(listArray(state.wants.get(a)!.job_run_ids), [built[0]!.job_run_id]);
  t.deepEqual(listArray(state.wants.get(b)!.job_run_ids), [built[0]!.job_run_id]);
  t.is(lines(dir, 'invocations.txt').length, 1);
});

test('a want for a ref being built joins the run; a want for a live ref is successful at once', async (t) => {
  const dir = makeWorkspace(t);
  const platform = await openPlatform(t, dir, onceGraph);
  const first = await want(platform, ['once/2']);
  const running = await waitFor(
    platform,
    (s) => runsFor(s, 'once/2').some((r) => r.status === 'running'),
    'once/2 to be running',
  );
  const runId = runsFor(running, 'once/2')[0]!.job_run_id;
  const second = await want(platform, ['once/2']);
  const joined = platform.state().wants.get(second)!;
  t.deepEqual(listArray(joined.job_run_ids), [runId]);
  t.is(joined.status, 'building');

  await waitForWant(platform, first);
  const done = await waitForWant(platform, second);
  t.is(done.wants.get(first)!.status, 'successful');
  t.is(done.wants.get(second)!.status, 'successful');
  t.is(runsFor(platform.state(), 'once/2').length, 1);

  // Once live, a new want needs no run at all.
  const third = await want(platform, ['once/2']);
  const after = platform.state();
  t.is(after.wants.get(third)!.status, 'successful');
  t.deepEqual(listArray(after.wants.get(third)!.job_run_ids), []);
  // Nothing is due for it at any later moment: a full scan (what a tick does) an hour on schedules nothing.
  const later = await planAt(platform, LATER());
  t.deepEqual(later.events, []);
  t.deepEqual(later.launch, []);
  t.is(runsFor(platform.state(), 'once/2').length, 1);
  t.deepEqual(lines(dir, 'invocations.txt').map((l) => l.split(' ')[0]), ['2']);
});

test('QUERY inputs are recorded but neither built nor waited for', async (t) => {
  const dir = makeWorkspace(t);
  const platform = await openPlatform(t, dir, {
    jobs: [
      {
        label: 'uses',
        outputs: ['uses/(?<n>\\d+)'],
        inputs: [{ partition_ref: 'lookup/${n}', dep_type: 'QUERY' }],
        exec: bash('echo used >> uses-ran.txt'),
      },
      { label: 'lookup', outputs: ['lookup/\\d+'], exec: bash('echo built >> lookup-ran.txt') },
    ],
  });
  const w = await want(platform, ['uses/3']);
  const state = await waitForWant(platform, w, undefined, 5000);
  t.is(state.wants.get(w)!.status, 'successful');
  t.deepEqual(runs(state, 'uses')[0]!.config.inputs, [{ dep_type: 'QUERY', partition_ref: 'lookup/3' }]);
  t.is(runs(state, 'lookup').length, 0);
  t.is(state.partitions.get('lookup/3'), undefined);
  t.deepEqual(listArray(state.wants.get(w)!.child_want_ids), [], 'no derived want for a QUERY input');
  t.is(state.wants.size, 1);
  t.deepEqual(lines(dir, 'lookup-ran.txt'), []);
  t.deepEqual(lines(dir, 'uses-ran.txt'), ['used']);
});

/** Each run writes "<n> start <ns>" and "<n> end <ns>" to `file`. */
function timedJob(file: string, seconds: number): string[] {
  return bash(
    `echo "$1 start $(date +%s%N)" >> ${file}; sleep ${seconds}; echo "$1 end $(date +%s%N)" >> ${file}`,
  );
}

/** Most intervals open at once, from the start/end lines of `timedJob`. */
function maxOverlap(dir: string, file: string): { max: number; runs: number } {
  const points: Array<[bigint, number]> = [];
  const ids = new Set<string>();
  for (const line of lines(dir, file)) {
    const [id, kind, ns] = line.split(' ');
    ids.add(id!);
    points.push([BigInt(ns!), kind === 'start' ? 1 : -1]);
  }
  // At equal times an end counts before a start.
  points.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] - b[1]));
  let open = 0;
  let max = 0;
  for (const [, d] of points) {
    open += d;
    max = Math.max(max, open);
  }
  return { max, runs: ids.size };
}

/** Records the most runs in `running` seen in any state. */
function watchRunning(platform: Awaited<ReturnType<typeof openPlatform>>, label?: string) {
  const seen = { max: 0 };
  const sub = platform.state$.subscribe((s) => {
    let n = 0;
    for (const [, id] of s.job_runs_by_status.running.entries()) {
      if (label === undefined || s.job_runs.get(id)?.job_label === label) n++;
    }
    seen.max = Math.max(seen.max, n);
  });
  return { seen, stop: () => sub.unsubscribe() };
}

test('per-job max_concurrency: 1 runs that job one at a time while other jobs run beside it', async (t) => {
  const dir = makeWorkspace(t);
  const platform = await openPlatform(t, dir, {
    max_concurrent_job_runs: 8,
    jobs: [
      { label: 'serial', outputs: ['serial/(?<n>\\d+)'], exec: timedJob('serial.txt', 0.3), args: ['${n}'], max_concurrency: 1 },
      { label: 'free', outputs: ['free/(?<n>\\d+)'], exec: timedJob('free.txt', 0.6), args: ['${n}'] },
    ],
  });
  const watch = watchRunning(platform, 'serial');
  t.teardown(watch.stop);
  const w = await want(platform, ['serial/1', 'serial/2', 'serial/3', 'serial/4', 'free/1', 'free/2', 'free/3']);
  const state = await waitForWant(platform, w, undefined, 12_000);
  t.is(state.wants.get(w)!.status, 'successful');
  const serial = maxOverlap(dir, 'serial.txt');
  t.is(serial.runs, 4);
  t.is(serial.max, 1, lines(dir, 'serial.txt').join('\n'));
  t.is(watch.seen.max, 1);
  // The limit is per job: the unlimited job did run in parallel.
  t.is(maxOverlap(dir, 'free.txt').max, 3, lines(dir, 'free.txt').join('\n'));
});

test('the graph-wide max_concurrent_job_runs bounds the runs at once', async (t) => {
  const dir = makeWorkspace(t);
  const platform = await openPlatform(t, dir, {
    max_concurrent_job_runs: 2,
    jobs: [{ label: 'par', outputs: ['par/(?<n>\\d+)'], exec: timedJob('par.txt', 0.4), args: ['${n}'] }],
  });
  const watch = watchRunning(platform);
  t.teardown(watch.stop);
  const w = await want(platform, ['par/1', 'par/2', 'par/3', 'par/4', 'par/5']);
  const state = await waitForWant(platform, w, undefined, 12_000);
  t.is(state.wants.get(w)!.status, 'successful');
  const par = maxOverlap(dir, 'par.txt');
  t.is(par.runs, 5);
  t.true(par.max <= 2, lines(dir, 'par.txt').join('\n'));
  t.is(par.max, 2, 'the limit is used, not just respected');
  t.true(watch.seen.max <= 2);
});

test('POST /api/wants for a ref no job produces is a 400 naming the ref, and creates nothing', async (t) => {
  const dir = makeWorkspace(t);
  const platform = await openPlatform(t, dir, threeLevelGraph());
  const server = await startServer(t, platform);
  const post = (body: unknown) =>
    fetch(`${server.url}/api/wants`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  const res = await post({ partitions: ['monthly/2026-01'] });
  t.is(res.status, 400);
  const body = (await res.json()) as { error: string };
  t.regex(body.error, /monthly\/2026-01/);

  // One unknown ref among known ones refuses the whole want.
  const mixed = await post({ partitions: ['raw/1', 'nope/x'] });
  t.is(mixed.status, 400);
  t.regex(((await mixed.json()) as { error: string }).error, /nope\/x/);
  t.is(platform.state().wants.size, 0);

  // A known ref is accepted and built.
  const ok = await post({ partitions: ['raw/1'] });
  t.is(ok.status, 201);
  const created = (await ok.json()) as { want_id: string };
  const state = await waitForWant(platform, created.want_id);
  t.is(state.wants.get(created.want_id)!.status, 'successful');
});
