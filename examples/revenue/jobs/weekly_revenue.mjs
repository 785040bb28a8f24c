// weekly/revenue/week=<YYYY-Www>: a config-program job.
//
//   weekly_revenue.mjs config <ref>...   prints a JobConfigResponse: each week needs the 7 daily partitions of
//                                        its ISO week (Monday to Sunday) as MATERIALIZE inputs
//   weekly_revenue.mjs exec              reads its JobConfig on stdin and sums the daily revenue of those inputs
import { existsSync, readFileSync } from 'node:fs';
import { dataFile, fail, missingDeps, writeAtomic } from './common.mjs';

const WEEK_REF = /^weekly\/revenue\/week=(\d{4})-W(\d{2})$/;
const DAY = 86_400_000;

/** The 7 dates (YYYY-MM-DD) of ISO week `week` of ISO year `year`; undefined when the year has no such week. */
function isoWeekDates(year, week) {
  // January 4th is always in week 1; its week's Monday starts the ISO year.
  const jan4 = Date.UTC(year, 0, 4);
  const mondayOfWeek1 = jan4 - ((new Date(jan4).getUTCDay() + 6) % 7) * DAY;
  const weeksInYear = Math.round((isoYearStart(year + 1) - mondayOfWeek1) / (7 * DAY));
  if (week < 1 || week > weeksInYear) return undefined;
  const monday = mondayOfWeek1 + (week - 1) * 7 * DAY;
  return Array.from({ length: 7 }, (_, i) => new Date(monday + i * DAY).toISOString().slice(0, 10));
}

function isoYearStart(year) {
  const jan4 = Date.UTC(year, 0, 4);
  return jan4 - ((new Date(jan4).getUTCDay() + 6) % 7) * DAY;
}

function config(refs) {
  const configs = refs.map((ref) => {
    const m = WEEK_REF.exec(ref);
    if (!m) fail(`not a weekly revenue ref: ${JSON.stringify(ref)}`);
    const dates = isoWeekDates(Number(m[1]), Number(m[2]));
    if (!dates) fail(`${ref}: ${m[1]} has no ISO week ${m[2]}`);
    return {
      outputs: [ref],
      inputs: dates.map((d) => ({ partition_ref: `daily/revenue/date=${d}`, dep_type: 'MATERIALIZE' })),
      args: [`${m[1]}-W${m[2]}`],
      env: {},
    };
  });
  process.stdout.write(`${JSON.stringify({ configs })}\n`);
}

function exec() {
  const job = JSON.parse(readFileSync(0, 'utf8'));
  const [output] = job.outputs;
  const inputs = job.inputs.map((d) => d.partition_ref);
  const missing = inputs.filter((ref) => !existsSync(dataFile(ref, 'json')));
  if (missing.length > 0) missingDeps(missing);
  const days = inputs.map((ref) => JSON.parse(readFileSync(dataFile(ref, 'json'), 'utf8')));
  const revenue = days.reduce((sum, d) => sum + d.revenue_cents, 0);
  const week = WEEK_REF.exec(output);
  writeAtomic(
    dataFile(output, 'json'),
    `${JSON.stringify({
      week: `${week[1]}-W${week[2]}`,
      days: days.map((d) => ({ date: d.date, revenue_cents: d.revenue_cents })),
      orders: days.reduce((sum, d) => sum + d.orders, 0),
      revenue_cents: revenue,
    })}\n`,
  );
  console.log(`${output}: ${(revenue / 100).toFixed(2)} over ${days.length} days`);
}

const [mode, ...rest] = process.argv.slice(2);
if (mode === 'config') config(rest);
else if (mode === 'exec') exec();
else if (mode !== undefined) fail(`usage: weekly_revenue.mjs config <ref>... | exec   (got ${JSON.stringify(mode)})`);
