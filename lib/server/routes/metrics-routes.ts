import { Router } from 'express';
import { platformMetrics } from '../metrics-registry.js';
import type { ServerContext } from '../server-context.js';

/** Prometheus text exposition from the server's own registry (metrics-registry.ts). */
export function metricsRoutes({ platform, sse, shutdown$ }: ServerContext): Router {
  const registry = platformMetrics(platform, sse, shutdown$);
  const router = Router();
  router.get('/metrics', async (_req, res) => {
    res.type(registry.contentType).send(await registry.metrics());
  });
  return router;
}
