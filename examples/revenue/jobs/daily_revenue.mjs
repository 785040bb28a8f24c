// daily/revenue/date=<date>: the sum of the day's raw orders.
import { existsSync, readFileSync } from 'node:fs';
import { DATE, dataFile, fail, missingDeps, writeAtomic } from './common.mjs';

const [date] = process.argv.slice(2);
if (!date || !DATE.test(date)) fail(`usage: daily_revenue.mjs <YYYY-MM-DD>, got ${JSON.stringify(date)}`);

const input = `raw/orders/date=${date}`;
const file = dataFile(input, 'csv');
if (!existsSync(file)) missingDeps([input]);

const [header, ...rows] = readFileSync(file, 'utf8').trim().split('\n');
const column = header.split(',').indexOf('amount_cents');
if (column < 0) fail(`${file}: no amount_cents column in ${JSON.stringify(header)}`);
let revenue = 0;
for (const row of rows) {
  const amount = Number(row.split(',')[column]);
  if (!Number.isInteger(amount)) fail(`${file}: bad amount in ${JSON.stringify(row)}`);
  revenue += amount;
}
const ref = `daily/revenue/date=${date}`;
writeAtomic(dataFile(ref, 'json'), `${JSON.stringify({ date, orders: rows.length, revenue_cents: revenue })}\n`);
console.log(`${ref}: ${rows.length} orders, ${(revenue / 100).toFixed(2)}`);
