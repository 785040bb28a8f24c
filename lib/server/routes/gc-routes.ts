import { Router } from 'express';
import { HttpError } from '../http-error.js';
import type { ServerContext } from '../server-context.js';

/**
 * `POST /api/gc` `{"dry_run"?: boolean}`: removes what `retention` in platform.json lets go (the logs of finished
 * runs older than `job_logs_days`, the events before the newest `events_keep`), or with `dry_run` says what it
 * would; the daemon also does it every hour.
 */
export function gcRoutes({ platform }: ServerContext): Router {
  const router = Router();
  router.post('/api/gc', async (req, res) => {
    const body: unknown = req.body ?? {};
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new HttpError(400, 'The body must be a JSON object like {"dry_run": true}.');
    const { dry_run: dryRun, ...rest } = body as Record<string, unknown>;
    const extra = Object.keys(rest);
    if (extra.length > 0) throw new HttpError(400, `Unknown field ${JSON.stringify(extra[0])}; POST /api/gc takes "dry_run".`);
    if (dryRun !== undefined && typeof dryRun !== 'boolean') throw new HttpError(400, `dry_run must be true or false, got ${JSON.stringify(dryRun)}.`);
    res.json(await platform.gc({ dryRun: dryRun === true }));
  });
  return router;
}
