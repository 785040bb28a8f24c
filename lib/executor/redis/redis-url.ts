/** Redis URLs as the CLI checks and prints them (no Redis client loaded: every CLI call imports this). */

/** Whether `value` is a redis:// (or rediss://) URL with a host, so a typo is refused before anything connects. */
export function isRedisUrl(value: string): boolean {
  try {
    const u = new URL(value);
    return (u.protocol === 'redis:' || u.protocol === 'rediss:') && u.hostname !== '';
  } catch {
    return false;
  }
}

/** A URL as it may be printed: without its password. */
export function redacted(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return url;
  }
}
