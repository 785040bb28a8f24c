import { Router } from 'express';
import type { Page } from '../../api/page.js';
import type { ScheduleView } from '../../api/schedules.js';
import { HttpError } from '../http-error.js';
import { pageQuery } from '../request-parsing.js';
import { listSchedules, scheduleView } from '../schedule-queries.js';
import type { ServerContext } from '../server-context.js';

export function schedulesRoutes({ platform }: ServerContext): Router {
  const router = Router();

  router.get('/api/schedules', async (req, res) => {
    await platform.refreshGraph();
    res.json(listSchedules(platform.state(), platform.resolver.graph.schedules, pageQuery(req.query), Date.now()) satisfies Page<ScheduleView>);
  });

  router.get('/api/schedules/:name', async (req, res) => {
    await platform.refreshGraph();
    const s = platform.resolver.graph.schedules.find((x) => x.name === req.params.name);
    if (!s) throw new HttpError(404, `No schedule named '${req.params.name}' in platform.json. List them: platform schedules (GET /api/schedules).`);
    res.json(scheduleView(platform.state(), s, Date.now()) satisfies ScheduleView);
  });

  return router;
}
