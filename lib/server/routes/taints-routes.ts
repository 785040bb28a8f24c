import { Router } from 'express';
import { listTaints, taintView } from '../lineage-queries.js';
import { awaitCommand } from '../command-reply.js';
import { HttpError } from '../http-error.js';
import { pageQuery, parseCreateTaint } from '../request-parsing.js';
import type { ServerContext } from '../server-context.js';
import { validateQuery } from '../validate.js';
import { TaintDetailQuerySchema } from '../../api/schemas/taints.js';
import { TAINT_PARTITIONS_DEFAULT } from '../../api/partitions-change.js';

export function taintsRoutes({ platform }: ServerContext): Router {
  const router = Router();

  router.get('/api/taints', (req, res) => {
    res.json(listTaints(platform.state(), pageQuery(req.query)));
  });

  router.post('/api/taints', async (req, res) => {
    const request = parseCreateTaint(req.body);
    const result = await awaitCommand(() => platform.createTaint(request));
    if (!result.taint) throw new Error('orchestrator replied to a taint without one');
    // A downstream taint may hold a hundred thousand refs: the reply names the first (GET /api/taints/:id pages them).
    res.status(201).json({ ...result.taint, partitions: result.taint.partitions.slice(0, TAINT_PARTITIONS_DEFAULT) });
  });

  router.get('/api/taints/:id', (req, res) => {
    const state = platform.state();
    const taint = state.taints.get(req.params.id);
    if (!taint) throw new HttpError(404, `No taint with id '${req.params.id}'. List them: platform taints list (GET /api/taints).`);
    const q = validateQuery(TaintDetailQuerySchema, req.query);
    res.json(taintView(taint, { offset: q.partitions_offset ?? 0, limit: q.partitions_limit ?? TAINT_PARTITIONS_DEFAULT }));
  });

  return router;
}
