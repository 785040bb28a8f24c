/**
 * A count as `toLocaleString('en-US')` writes it, `1234567` -> `1,234,567` (rounded to an integer), without it: its
 * first call loads ICU's number formats, ~18 ms on this machine, and the daemon made one at every start (its API
 * document's descriptions, its start line) before it answered.
 */
export function groupDigits(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  const whole = Math.round(n);
  const digits = plainDigits(Math.abs(whole)).replace(/\B(?=(\d{3})+$)/g, ',');
  return whole < 0 ? `-${digits}` : digits;
}

/** An integer's shortest digits, as toLocaleString takes them: its string is in exponent notation from 1e21 on. */
function plainDigits(n: number): string {
  const text = String(n);
  const e = text.indexOf('e+');
  if (e < 0) return text;
  const [int, fraction = ''] = text.slice(0, e).split('.');
  return int! + fraction + '0'.repeat(Number(text.slice(e + 2)) - fraction.length);
}
