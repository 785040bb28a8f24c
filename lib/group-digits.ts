/**
 * A count as `toLocaleString('en-US')` writes it, `1234567` -> `1,234,567` (rounded to an integer), without it: its
 * first call loads ICU's number formats, ~18 ms on this machine, and the daemon made one at every start (its API
 * document's descriptions, its start line) before it answered.
 */
export function groupDigits(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  const digits = String(Math.abs(Math.round(n))).replace(/\B(?=(\d{3})+$)/g, ',');
  return n <= -0.5 ? `-${digits}` : digits;
}
