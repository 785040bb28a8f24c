// raw/orders/date=<date>: the day's orders as CSV. Stands in for an extract from a shop database: the orders are
// pseudo-random but deterministic (seeded by the date), so a rebuild gives the same file.
import { DATE, dataFile, fail, writeAtomic } from './common.mjs';

const [date] = process.argv.slice(2);
if (!date || !DATE.test(date)) fail(`usage: raw_orders.mjs <YYYY-MM-DD>, got ${JSON.stringify(date)}`);

// FNV-1a of the seed and date, then mulberry32: small, fast, the same on every machine.
function seedOf(text) {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}
function mulberry32(a) {
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const random = mulberry32(seedOf(`${process.env.ORDERS_SEED ?? ''}/${date}`));
const count = 20 + Math.floor(random() * 30);
const rows = ['order_id,customer_id,amount_cents'];
for (let i = 1; i <= count; i++) {
  const customer = `c-${String(1 + Math.floor(random() * 50)).padStart(3, '0')}`;
  const amount = 500 + Math.floor(random() * 19_500);
  rows.push(`${date.replaceAll('-', '')}-${String(i).padStart(4, '0')},${customer},${amount}`);
}
const ref = `raw/orders/date=${date}`;
writeAtomic(dataFile(ref, 'csv'), `${rows.join('\n')}\n`);
console.log(`${ref}: ${count} orders`);
