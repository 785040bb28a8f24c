/** Redis URLs as the CLI checks and prints them (no Redis client loaded: every CLI call imports this). */

/**
 * Whether `value` is a redis:// (or rediss://) URL with a host and, after it, at most a database number, so a typo is
 * refused before anything connects. A path that is no number (`/2x`, `/abc`) was taken for database 0 by the Redis
 * client: a worker given it took from another database than its daemon's, and waited in silence.
 */
export function isRedisUrl(value: string): boolean {
  try {
    const u = new URL(value);
    return (u.protocol === 'redis:' || u.protocol === 'rediss:') && u.hostname !== '' && /^\/?(\d+)?$/.test(u.pathname);
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
