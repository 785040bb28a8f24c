/**
 * The methods the API serves on a path, read from the operation table (api-operations.ts): a request of another
 * method on a path the API has is a 405 with `Allow` (RFC 9110), not the 404 of a path it does not have.
 */
import { OPERATIONS, type Operation } from './api-operations.js';

const ORDER = ['GET', 'HEAD', 'POST', 'DELETE'] as const;

/**
 * Each operation's path as it is matched: express's routes take a `:param` as one segment and let a trailing slash and
 * case through; the RPCs (service-routes.ts) are matched by their exact path, case and all, so another spelling is no
 * RPC for any method (a 405 there named a POST that is a 404).
 */
const ROUTES = OPERATIONS.map((op) => {
  const path = op.path.split('/').map((s) => (s.startsWith(':') ? '[^/]+' : s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('/');
  return { op, method: op.method.toUpperCase(), pattern: op.connect ? new RegExp(`^${path}$`) : new RegExp(`^${path}/?$`, 'i') };
});

/** The methods served on `path` (HEAD wherever GET is, as express answers it), in a fixed order; none: no such path. */
export function allowedMethods(path: string): string[] {
  const methods = new Set<string>();
  for (const route of ROUTES) if (route.pattern.test(path)) methods.add(route.method);
  if (methods.has('GET')) methods.add('HEAD');
  return ORDER.filter((m) => methods.has(m));
}

/** The JSON API's operation (not an RPC's) a request of `method` on `path` reaches, as express matches it. */
export function jsonOperationAt(method: string, path: string): Operation | undefined {
  return ROUTES.find((route) => route.method === method && !route.op.connect && route.pattern.test(path))?.op;
}

/** `/api/wants/`, ...: a collection's path with the '/' an id follows, and no id. */
const ID_LEFT_EMPTY: ReadonlySet<string> = new Set(
  OPERATIONS.filter((op) => /\/:[A-Za-z_]+$/.test(op.path)).map((op) => op.path.replace(/:[A-Za-z_]+$/, '')),
);

/** `path` is a collection's with a trailing '/' where an id goes, and none: express would serve it as the list. */
export function idLeftEmpty(path: string): boolean {
  return ID_LEFT_EMPTY.has(path);
}
