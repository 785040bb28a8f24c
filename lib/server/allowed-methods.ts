/**
 * The methods the API serves on a path, read from the operation table (api-operations.ts): a request of another
 * method on a path the API has is a 405 with `Allow` (RFC 9110), not the 404 of a path it does not have.
 */
import { OPERATIONS } from './api-operations.js';

const ORDER = ['GET', 'HEAD', 'POST', 'DELETE'] as const;

/** Each operation's path as express matches it: a `:param` is one segment, a trailing slash and case are let through. */
const ROUTES = OPERATIONS.map((op) => ({
  method: op.method.toUpperCase(),
  pattern: new RegExp(`^${op.path.split('/').map((s) => (s.startsWith(':') ? '[^/]+' : s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('/')}/?$`, 'i'),
}));

/** The methods served on `path` (HEAD wherever GET is, as express answers it), in a fixed order; none: no such path. */
export function allowedMethods(path: string): string[] {
  const methods = new Set<string>();
  for (const route of ROUTES) if (route.pattern.test(path)) methods.add(route.method);
  if (methods.has('GET')) methods.add('HEAD');
  return ORDER.filter((m) => methods.has(m));
}
