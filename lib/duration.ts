/** Durations as people type them on a command line or in an environment variable. */

/** `90` (seconds), `90s`, `5m`, `3h`, `250ms` -> milliseconds; throws a message naming `option` otherwise. */
export function parseDuration(text: string, option: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text.trim());
  if (!m) throw new Error(`${option} must be a duration like 90, 90s, 5m or 3h; got '${text}'.`);
  const n = Number(m[1]);
  const unit = m[2] ?? 's';
  const factor = unit === 'ms' ? 1 : unit === 's' ? 1000 : unit === 'm' ? 60_000 : 3_600_000;
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
