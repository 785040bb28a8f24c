/**
 * The dashboard, served by the daemon itself: the static assets `npm run build` puts in dist/ui, and its
 * index.html for any other GET a browser makes outside the API (deep links like /wants/w-1 work after a reload).
 * The API's paths are never shadowed: /api, /health, /metrics and the RPCs answer as before.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import express, { Router } from 'express';

/** dist/lib/server -> dist/ui. */
export const UI_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'ui');

const API_PREFIXES = ['/api/', '/api', '/health', '/metrics', '/platform.v1.'];

/** Only what the page itself ships: no inline script, no other origin. */
const CSP = "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'";

export function dashboardRoutes(uiDir = UI_DIR): Router {
  const router = Router();
  const index = join(uiDir, 'index.html');
  router.use(
    '/assets',
    (_req, res, next) => {
      res.setHeader('Content-Security-Policy', CSP);
      next();
    },
    express.static(join(uiDir, 'assets'), { index: false, maxAge: '1h', fallthrough: false }),
  );
  router.get(/.*/, (req, res, next) => {
    if (API_PREFIXES.some((p) => req.path === p || req.path.startsWith(p))) return next();
    if (!req.accepts('html')) return next();
    if (!existsSync(index)) {
      res.status(503).type('text/plain').send(`The dashboard is not built (no ${index}): run 'npm run build' in the platform checkout, then reload.`);
      return;
    }
    res.setHeader('Content-Security-Policy', CSP);
    res.setHeader('Cache-Control', 'no-cache');
    res.type('html').send(readFileSync(index, 'utf8'));
  });
  return router;
}
