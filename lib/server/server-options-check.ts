/**
 * What `startHttpServer` refuses of its options before it binds. A port given as a string was taken by node as the
 * path of a Unix socket (the server "listened" at http://127.0.0.1:undefined, a socket file in the current
 * directory), `idleTimeoutMs: 0` shut the server down at once where an app meant none (leave it out for that), and
 * `token: ''` served the API without one.
 */
import { MAX_TIMER_MS } from '../system/timer-ceiling.js';
import type { HttpServerOptions } from './http-server.js';

export function serverOptionsProblem(options: HttpServerOptions): string | undefined {
  // Left out by a JavaScript caller, it failed in the destructuring below with a TypeError naming no option.
  if (typeof options !== 'object' || options === null) {
    return `startHttpServer takes an options object ({port: 0} for any free port), got ${options === null ? 'null' : options === undefined ? 'nothing' : `a ${typeof options}`}`;
  }
  const { port, idleTimeoutMs, drainMs, token } = options;
  if (port !== undefined && !(Number.isInteger(port) && port >= 0 && port <= 65535)) {
    return `HttpServerOptions.port must be a whole number from 0 to 65535 (0: any free port), got ${JSON.stringify(port) ?? String(port)}`;
  }
  if (idleTimeoutMs !== undefined && !(typeof idleTimeoutMs === 'number' && idleTimeoutMs > 0)) {
    return `HttpServerOptions.idleTimeoutMs must be a number of milliseconds above 0 (leave it out for no idle timeout), got ${String(idleTimeoutMs)}`;
  }
  // Past a timer's ceiling node fires it after 1 ms: every connection would be dropped at once.
  if (drainMs !== undefined && !(typeof drainMs === 'number' && Number.isFinite(drainMs) && drainMs >= 0 && drainMs <= MAX_TIMER_MS)) {
    return `HttpServerOptions.drainMs must be a number of milliseconds from 0 to ${MAX_TIMER_MS}, got ${String(drainMs)}`;
  }
  // An empty token (an unset variable, say) was taken as none: the API served to anyone on the machine, silently,
  // where the app meant to require one. A number failed in Buffer.from with a TypeError naming no option.
  if (token !== undefined && !(typeof token === 'string' && token.length > 0)) {
    return `HttpServerOptions.token must be a non-empty string (what clients send as 'Authorization: Bearer <token>'); leave it out for an API without a token, got ${JSON.stringify(token) ?? String(token)}`;
  }
  return undefined;
}
