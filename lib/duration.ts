/** Durations as people type them on a command line or in an environment variable. */

/** Milliseconds in one of each unit a duration may be written in. */
const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * `90` (seconds), `90s`, `5m`, `3h`, `1d`, `250ms` -> milliseconds; throws a message naming `option` otherwise. Days
 * because a want's ttl is often one (`--ttl 1d`), as a schedule's offset (`-1d`) is written.
 */
export function parseDuration(text: string, option: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)?$/.exec(text.trim());
  if (!m) throw new Error(`${option} must be a duration like 90, 90s, 5m, 3h or 1d; got '${text}'.`);
  const n = Number(m[1]);
  const factor = UNIT_MS[m[2] ?? 's']!;
  const ms = Math.round(n * factor);
  if (ms <= 0) throw new Error(`${option} must be more than zero; got '${text}'.`);
  return ms;
}

/**
 * A duration as a table or a progress line shows it: `250ms` (or `0.3s` with `tenths`, a clock that ticks), `4.2s`,
 * `3m07s`, `2h05m`. Negative or absent: empty.
 */
export function formatDuration(ms: number | null | undefined, { tenths = false } = {}): string {
  if (ms === null || ms === undefined || ms < 0) return '';
  if (ms < 1000 && !tenths) return `${ms}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  // A clock that ticks counts whole seconds passed; a table rounds.
  const s = tenths ? Math.floor(ms / 1000) : Math.round(ms / 1000);
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}
