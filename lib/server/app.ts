/** The express app: loopback guard, CORS for a local dashboard dev server, JSON bodies up to 1 MiB (json-body.ts), the routes, the dashboard, errors. */
import { gcRoutes } from './routes/gc-routes.js';
import { openApiRoutes } from './routes/openapi-routes.js';
import { originGuard, tokenGuard } from './access-guard.js';
import { loginRoutes } from './routes/login-routes.js';
import cors from 'cors';
import express, { type Express } from 'express';
import { jsonBody } from './json-body.js';
import { errorHandler } from './error-handler.js';
import { HttpError } from './http-error.js';
import { shuttingDown } from './command-reply.js';
import { allowedMethods, idLeftEmpty, jsonOperationAt } from './allowed-methods.js';
import { refuseUnknownQuery, type Query } from './validate.js';
import { loopbackGuard } from './loopback-guard.js';
import { eventsRoutes } from './routes/events-routes.js';
import { jobRunsRoutes } from './routes/job-runs-routes.js';
import { metricsRoutes } from './routes/metrics-routes.js';
import { partitionsRoutes } from './routes/partitions-routes.js';
import { statusRoutes } from './routes/status-routes.js';
import { taintsRoutes } from './routes/taints-routes.js';
import { backfillsRoutes } from './routes/backfills-routes.js';
import { schedulesRoutes } from './routes/schedules-routes.js';
import { wantsRoutes } from './routes/wants-routes.js';
import { serviceRoutes } from './connect/service-routes.js';
import type { ServerContext } from './server-context.js';
import { dashboardRoutes } from './dashboard.js';

export const DASHBOARD_ORIGIN = 'http://localhost:3000';

export { MAX_BODY_BYTES } from './json-body.js';

export function createApp(ctx: ServerContext, logError: (m: string) => void): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  app.use(loopbackGuard);
  if (ctx.access.token) app.use(tokenGuard(ctx.access.token, [DASHBOARD_ORIGIN]));
  app.use(originGuard([DASHBOARD_ORIGIN]));
  // express answers an OPTIONS itself with the methods of the routes whose paths match, and the dashboard's catch-all
  // GET matches every path: an /api path the API does not have said "Allow: GET, HEAD" where a GET is a 404. Before
  // cors, which answers every preflight from the dashboard's origin itself, whatever the path.
  app.use((req, _res, next) => {
    if (req.method === 'OPTIONS' && /^\/api(\/|$)/i.test(req.path) && allowedMethods(req.path).length === 0) throw noRoute(req.method, req.path);
    next();
  });
  // Only the dashboard's origin gets CORS headers; any other origin gets none, so browsers refuse it.
  app.use(cors({ origin: (origin, cb) => cb(null, origin === DASHBOARD_ORIGIN), methods: ['GET', 'POST', 'DELETE'] }));
  app.get('/health', (_req, res) => {
    res.type('text/plain').send('OK');
  });
  // Express takes '/api/wants/' for '/api/wants': a client whose id came out empty (an unset variable in
  // `curl .../api/wants/$W`) would be answered every want, or have its DELETE refused as a method of the list.
  app.use((req, _res, next) => {
    if (idLeftEmpty(req.path)) {
      throw new HttpError(404, `No route ${req.method} ${req.path}: the path ends in '/', where an id or a name goes (left empty?). See README.md for the API.`);
    }
    next();
  });
  // Once the platform closed (the daemon's stop, or an embedder's close with the server left running), every express
  // route would meet the closed log's error: a 500 from gc, "could not write" from a read. Said as the fast lanes say it.
  app.use((_req, _res, next) => {
    if (ctx.platform.closed) throw shuttingDown();
    next();
  });
  // Every operation of the JSON API refuses a query parameter it does not read, writes included (before any body is
  // read): here those that read none. Not the dashboard's pages (their state is in their query), /health or /metrics (probes and scrapers add
  // what they add); the RPCs are left to Connect's rules, which put the message in the query of a GET.
  app.use((req, _res, next) => {
    // Most requests carry no query: they pay no look through the operation table.
    const op = req.url.includes('?') && /^\/api\//i.test(req.path) ? jsonOperationAt(req.method === 'HEAD' ? 'GET' : req.method, req.path) : undefined;
    // One that reads a query checks it itself (validateQuery), some with words of their own.
    if (op && !op.query) refuseUnknownQuery(undefined, req.query as Query);
    next();
  });
  // The RPCs read their own bodies (JSON or protobuf); every other write's body is JSON or none.
  app.use(serviceRoutes(ctx, logError));
  app.use(jsonBody());
  app.use(loginRoutes(ctx));
  app.use(wantsRoutes(ctx));
  app.use(partitionsRoutes(ctx));
  app.use(taintsRoutes(ctx));
  app.use(backfillsRoutes(ctx));
  app.use(schedulesRoutes(ctx));
  app.use(jobRunsRoutes(ctx));
  app.use(eventsRoutes(ctx));
  app.use(metricsRoutes(ctx));
  app.use(gcRoutes(ctx));
  app.use(statusRoutes(ctx));
  app.use(openApiRoutes());
  app.use(dashboardRoutes());
  app.use((req, _res) => {
    const allow = allowedMethods(req.path);
    if (allow.length > 0 && !allow.includes(req.method)) {
      throw new HttpError(405, `${req.method} is not served on ${req.path}: it takes ${allow.join(', ')}. See README.md for the API.`, undefined, {
        Allow: allow.join(', '),
      });
    }
    throw noRoute(req.method, req.path);
  });
  app.use(errorHandler(logError));
  return app;
}

function noRoute(method: string, path: string): HttpError {
  return new HttpError(404, `No route ${method} ${path}.${unencodedRefHint(path)} See README.md for the API.`);
}

/**
 * A partition's ref holds '/': sent unencoded it is several path segments and matches no partition route, so the
 * 404 says the path to use, its `/lineage` kept after the ref. A path whose ref came encoded already is not that
 * (an unknown path below a partition): no hint, which would encode it twice.
 */
function unencodedRefHint(path: string): string {
  const m = /^\/api\/partitions\/(.+?)(\/lineage)?$/.exec(path);
  if (!m || !m[1]!.includes('/') || /%2f/i.test(m[1]!)) return '';
  let ref: string;
  try {
    ref = decodeURIComponent(m[1]!);
  } catch {
    return '';
  }
  return ` A partition ref is one path segment: encode its '/' as %2F (/api/partitions/${encodeURIComponent(ref)}${m[2] ?? ''}).`;
}
