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
