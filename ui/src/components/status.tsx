import { useNow } from '../clock.js';
import { progressPercent } from '../../../lib/api/backfills.js';

/** A status as a coloured badge; the word is always there, so colour is never the only signal. */
export function Status({ status }: { status: string }) {
  return <span class={`status status-${status}`}>{status}</span>;
}

export function ErrorNote({ error }: { error: string | undefined }) {
  return error ? (
    <p class="error" role="alert">
      {error}
    </p>
  ) : null;
}

export function Progress({ value, label }: { value: number; label: string }) {
  // Rounded down, as the CLI has it: 9,950 of 10,000 settled is 99%, not a 100% that is still building.
  const pct = progressPercent(value);
  return (
    <div class="progress" role="progressbar" aria-valuemin={0} aria-valuemax={100} aria-valuenow={pct} aria-label={label}>
      <div class="progress-fill" style={{ width: `${pct}%` }} />
      <span class="progress-text">{pct}%</span>
    </div>
  );
}

const units: Array<[number, string]> = [
  [86_400_000, 'd'],
  [3_600_000, 'h'],
  [60_000, 'm'],
  [1000, 's'],
];

/** 3h 20m, 42s, 120ms: the two largest units. */
export function duration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || ms < 0) return '';
  if (ms < 1000) return `${Math.round(ms)}ms`;
  const parts: string[] = [];
  let rest = ms;
  for (const [size, unit] of units) {
    if (rest >= size && parts.length < 2) {
      parts.push(`${Math.floor(rest / size)}${unit}`);
      rest %= size;
    }
  }
  return parts.join(' ');
}

export function age(iso: string | null | undefined, now = Date.now()): string {
  return iso ? duration(now - Date.parse(iso)) : '';
}

/** {@link age} as the lists show it, counting on each second (the page clock), not only when an event re-reads the list. */
export function Age({ iso }: { iso: string | null | undefined }) {
  const now = useNow(Boolean(iso));
  return <>{age(iso, now)}</>;
}

/** 3m ago, in 2h: how far a moment is from now. */
export function relative(iso: string, now = Date.now()): string {
  const diff = now - Date.parse(iso);
  return diff >= 0 ? `${duration(diff)} ago` : `in ${duration(-diff)}`;
}

/** A moment on a page's facts: the API's ISO time and, dimmed, how far it is from now; nothing without one. */
export function When({ iso }: { iso: string | null | undefined }) {
  const now = useNow(Boolean(iso));
  if (!iso) return null;
  return (
    <time dateTime={iso}>
      {iso} <span class="dim">({relative(iso, now)})</span>
    </time>
  );
}
