/**
 * The example workspace examples/revenue, copied to a temp dir and built through the Platform: the weekly revenue
 * of an ISO week is the sum of its 7 daily revenues, each the sum of that day's raw orders.
 */
import test from 'ava';
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadGraph } from '../lib/graph/load-graph.js';
import { Platform } from '../lib/platform.js';
import { makeWorkspace, runs, waitForWant, want } from './helpers/jobs-fixture.js';

const EXAMPLE = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'examples', 'revenue');
// ISO week 2026-W02 runs from Monday 5 to Sunday 11 January 2026.
const WEEK_DATES = ['2026-01-05', '2026-01-06', '2026-01-07', '2026-01-08', '2026-01-09', '2026-01-10', '2026-01-11'];

/** A fresh copy of the example: its sources only, no outputs or state of an earlier local run. */
function copyExample(t: Parameters<typeof makeWorkspace>[0]): string {
  const dir = makeWorkspace(t);
  cpSync(EXAMPLE, dir, {
    recursive: true,
    filter: (src) => {
      const rel = relative(EXAMPLE, src);
      const top = rel.split(sep)[0];
      if (top === 'data') return false;
      if (top === '.platform') return rel === '.platform' || rel === join('.platform', '.gitignore');
      return true;
    },
  });
  return dir;
}

/** Sum of amount_cents of a raw orders CSV, read here independently of the jobs. */
function rawTotal(dir: string, date: string): { orders: number; cents: number } {
  const [header, ...rows] = readFileSync(join(dir, 'data', 'raw', 'orders', `date=${date}.csv`), 'utf8').trim().split('\n');
  const col = header!.split(',').indexOf('amount_cents');
  let cents = 0;
  for (const row of rows) cents += Number(row.split(',')[col]);
  return { orders: rows.length, cents };
}

test('the example workspace has the marker, a .gitignore for data/ and a valid graph', async (t) => {
  const graph = await loadGraph(EXAMPLE);
  t.deepEqual(
    graph.jobs.map((j) => j.label),
    ['raw_orders', 'daily_revenue', 'weekly_revenue'],
  );
  t.regex(readFileSync(join(EXAMPLE, '.platform', '.gitignore'), 'utf8'), /^\*$/m);
  t.regex(readFileSync(join(EXAMPLE, '.gitignore'), 'utf8'), /^\/?data\/?$/m);
  for (const job of ['raw_orders', 'daily_revenue', 'weekly_revenue', 'common']) {
    t.true(existsSync(join(EXAMPLE, 'jobs', `${job}.mjs`)), job);
  }
});

test('building weekly/revenue/week=2026-W02 of the example: weekly = sum of dailies = sum of raw orders', async (t) => {
  const dir = copyExample(t);
  // The graph comes from the workspace's own platform.json.
  const platform = await Platform.open(dir, { tickMs: 60_000, logError: (m) => t.log(m) });
  t.teardown(() => platform.close());
  const ref = 'weekly/revenue/week=2026-W02';
  const w = await want(platform, [ref]);
  const state = await waitForWant(platform, w, undefined, 12_000);
  t.is(state.wants.get(w)!.status, 'successful');

  // 7 raw + 7 daily + 1 weekly, each built once.
  const all = runs(state);
  t.is(all.length, 15);
  t.true(all.every((r) => r.status === 'succeeded'));
  const weeklyRun = runs(state, 'weekly_revenue')[0]!;
  t.deepEqual(
    weeklyRun.config.inputs,
    WEEK_DATES.map((d) => ({ dep_type: 'MATERIALIZE', partition_ref: `daily/revenue/date=${d}` })),
  );
  for (const d of WEEK_DATES) {
    t.is(state.partitions.get(`raw/orders/date=${d}`)?.status, 'live');
    t.is(state.partitions.get(`daily/revenue/date=${d}`)?.status, 'live');
  }

  let weekCents = 0;
  let weekOrders = 0;
  const perDay: Array<{ date: string; revenue_cents: number }> = [];
  for (const date of WEEK_DATES) {
    const daily = JSON.parse(readFileSync(join(dir, 'data', 'daily', 'revenue', `date=${date}.json`), 'utf8')) as {
      date: string;
      orders: number;
      revenue_cents: number;
    };
    const raw = rawTotal(dir, date);
    t.is(daily.date, date);
    t.is(daily.revenue_cents, raw.cents, `daily ${date} = sum of its raw orders`);
    t.is(daily.orders, raw.orders);
    t.true(raw.orders > 0 && raw.cents > 0);
    weekCents += daily.revenue_cents;
    weekOrders += daily.orders;
    perDay.push({ date, revenue_cents: daily.revenue_cents });
  }
  const weekly = JSON.parse(readFileSync(join(dir, 'data', 'weekly', 'revenue', 'week=2026-W02.json'), 'utf8')) as {
    week: string;
    days: Array<{ date: string; revenue_cents: number }>;
    orders: number;
    revenue_cents: number;
  };
  t.is(weekly.week, '2026-W02');
  t.is(weekly.revenue_cents, weekCents);
  t.is(weekly.orders, weekOrders);
  t.deepEqual(weekly.days, perDay);
  // Different days have different orders (the generator is seeded by the date).
  t.true(new Set(perDay.map((d) => d.revenue_cents)).size > 1);

  // Deterministic: the raw job run again by hand elsewhere writes the same file.
  const again = makeWorkspace(t);
  cpSync(join(dir, 'jobs'), join(again, 'jobs'), { recursive: true });
  execFileSync(process.execPath, ['jobs/raw_orders.mjs', WEEK_DATES[0]!], {
    cwd: again,
    env: { ...process.env, ORDERS_SEED: 'revenue-example' },
    stdio: 'ignore',
  });
  t.is(
    readFileSync(join(again, 'data', 'raw', 'orders', `date=${WEEK_DATES[0]}.csv`), 'utf8'),
    readFileSync(join(dir, 'data', 'raw', 'orders', `date=${WEEK_DATES[0]}.csv`), 'utf8'),
  );
});
