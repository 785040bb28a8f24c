import { Router } from 'express';
import { GcBodySchema } from '../../api/schemas/gc.js';
import type { GcReport } from '../../api/gc.js';
import { validateOptionalBody } from '../validate.js';
import type { ServerContext } from '../server-context.js';

/**
 * `POST /api/gc` `{"dry_run"?: boolean}`: removes what `retention` in platform.json lets go (the logs of finished
 * runs older than `job_logs_days`, the events before the newest `events_keep`), or with `dry_run` says what it
 * would; the daemon also does it every hour.
 */
export function gcRoutes({ platform }: ServerContext): Router {
  const router = Router();
  router.post('/api/gc', async (req, res) => {
    // No body at all is a real pass: `curl -X POST /api/gc`.
    const { dry_run: dryRun = false } = validateOptionalBody(GcBodySchema, req.body, { what: 'POST /api/gc', example: '{"dry_run": true}' });
    res.json((await platform.gc({ dryRun })) satisfies GcReport);
  });
  return router;
}
