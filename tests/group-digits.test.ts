/** groupDigits writes a count as toLocaleString('en-US') does, without loading ICU at a daemon's start. */
import test from 'ava';
import { groupDigits } from '../lib/group-digits.js';

test('a count is grouped by thousands as en-US writes it, at every length and sign', (t) => {
  const samples = [0, -0, 7, -7, 0.4, -0.4, 0.5, -0.5, -0.6, 12.5, -1234.6, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 1e21, 1e24, -3.5e25];
  for (let digits = 1; digits <= 16; digits++) {
    const n = Number('9'.repeat(digits));
    samples.push(n, -n, Number(`1${'0'.repeat(digits - 1)}`), Math.floor(n / 7));
  }
  for (const n of samples) t.is(groupDigits(n), (Math.round(n) + 0).toLocaleString('en-US'), `for ${n}`); // + 0: a zero has no sign
});

test('what is not a finite number is said as it is', (t) => {
  t.is(groupDigits(Number.NaN), 'NaN');
  t.is(groupDigits(Number.POSITIVE_INFINITY), 'Infinity');
});
