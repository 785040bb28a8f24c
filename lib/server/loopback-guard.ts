/**
 * Refuses requests whose Host is not a loopback name: a page on another site that rebinds its DNS name to
 * 127.0.0.1 would otherwise reach the daemon with the browser's blessing.
 */
import type { NextFunction, Request, Response } from 'express';
import { HttpError } from './http-error.js';

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

/** Whether a request's Host header names this machine's loopback. */
export function isLoopbackHost(hostHeader: string | undefined): boolean {
  return LOOPBACK_HOSTS.has((hostHeader ?? '').toLowerCase().replace(/:\d+$/, ''));
}

export function loopbackGuard(req: Request, _res: Response, next: NextFunction): void {
  if (isLoopbackHost(req.headers.host)) return next();
  throw new HttpError(403, `Host '${req.headers.host ?? ''}' is not a loopback name; this server answers only on 127.0.0.1 and localhost.`);
}
