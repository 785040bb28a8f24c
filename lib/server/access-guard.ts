/**
 * Who gets in (docs/SECURITY.md). With a token (a daemon started by `platform start` or by the CLI), every request
 * but `/health` carries it: `Authorization: Bearer <token>` (the CLI reads it from `.platform/server.json`, which
 * only the owner can read), or the `platform_token` cookie that `platform ui`'s one-time link sets for the
 * dashboard. Whatever the token, a write whose `Origin` is another site's is refused: a page in the owner's browser
 * must not be able to drive the daemon.
 */
import { timingSafeEqual } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { HttpError } from './http-error.js';

export const TOKEN_COOKIE = 'platform_token';

/** Methods that change nothing: no Origin check. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Whether a request's `Authorization` or `Cookie` header carries the token (compared in constant time). */
export function tokenMatcher(token: string): (authorization: string | undefined, cookies: string | undefined) => boolean {
  const expected = Buffer.from(token);
  const matches = (given: string | undefined) => {
    if (given === undefined) return false;
    const g = Buffer.from(given);
    return g.length === expected.length && timingSafeEqual(g, expected);
  };
  return (auth, cookies) => {
    const bearer = auth?.startsWith('Bearer ') ? auth.slice('Bearer '.length).trim() : undefined;
    return matches(bearer) || matches(cookie(cookies, TOKEN_COOKIE));
  };
}

/**
 * `corsOrigins`: the origins CORS answers. A browser sends their preflights (an OPTIONS with `Origin` and
 * `Access-Control-Request-Method`) without credentials, whatever the request after it carries, so a preflight held
 * to the token is a 401 that stops the request it asks for. CORS answers it (app.ts) with headers alone, no route
 * reached; the request it clears is held to the token as any is.
 */
export function tokenGuard(token: string, corsOrigins: readonly string[] = []) {
  const carriesToken = tokenMatcher(token);
  return (req: Request, _res: Response, next: NextFunction): void => {
    if (req.path === '/health' || req.path === '/login') return next();
    if (isPreflight(req) && corsOrigins.includes(req.get('Origin')!)) return next();
    if (carriesToken(req.get('Authorization'), req.get('Cookie'))) return next();
    throw new HttpError(
      401,
      'This daemon requires its token. The platform CLI sends it for you; other clients send `Authorization: Bearer <token>` ' +
        'with the token from .platform/server.json; for the dashboard, run `platform ui`.',
    );
  };
}

/** Writes from a page of another origin are refused; the daemon's own pages (and the dashboard's dev server) are not. */
export function originGuard(allowedExtra: readonly string[]) {
  return (req: Request, _res: Response, next: NextFunction): void => {
    const origin = req.get('Origin');
    if (origin === undefined || SAFE_METHODS.has(req.method)) return next();
    const port = req.socket.localPort;
    // Not [::1]: the daemon listens on 127.0.0.1 alone, and what serves pages at [::1] on its port is someone else.
    const own = [`http://127.0.0.1:${port}`, `http://localhost:${port}`];
    if (own.includes(origin) || allowedExtra.includes(origin)) return next();
    // Said of the request as sent: a Connect RPC that only reads is a POST too, and "a write" misnamed it.
    throw new HttpError(
      403,
      `A ${req.method} from a page of the origin ${JSON.stringify(origin)} is refused: pages of other origins may only GET from this daemon (its own pages, http://127.0.0.1:${port}, may send anything).`,
    );
  };
}

function isPreflight(req: Request): boolean {
  return req.method === 'OPTIONS' && req.get('Origin') !== undefined && req.get('Access-Control-Request-Method') !== undefined;
}

function cookie(header: string | undefined, name: string): string | undefined {
  for (const part of header?.split(';') ?? []) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) {
      try {
        return decodeURIComponent(part.slice(eq + 1).trim());
      } catch {
        return undefined; // not percent-encoding: no token
      }
    }
  }
  return undefined;
}
