import { Router } from 'express';
import { LIST_WANTS } from '../../api/list-them.js';
import { notFoundReason } from '../pruned-ids.js';
import type { CreateWantReply } from '../../api/create-want.js';
import type { Page } from '../../api/page.js';
import type { WantView } from '../../api/views.js';
import { WantListQuerySchema, WantTreeQuerySchema } from '../../api/schemas/wants.js';
import { WANT_TREE_DEFAULT, type WantTreeReply } from '../../api/want-tree.js';
import { wantTree } from '../want-tree-queries.js';
import { listWants } from '../queries.js';
import { wantView } from '../views.js';
import { awaitCommand } from '../command-reply.js';
import { HttpError } from '../http-error.js';
import { checkGraph } from '../graph-problem.js';
import { parseCreateWant, toPageQuery } from '../request-parsing.js';
import { validateQuery } from '../validate.js';
import type { ServerContext } from '../server-context.js';
import type { Platform } from '../../platform.js';

/** POST /api/wants: the body checked, its refs known to the graph, the want created once its event is durable. */
export async function createWant(platform: Platform, body: unknown): Promise<CreateWantReply> {
  const request = parseCreateWant(body);
  await checkGraph(platform);
  const result = await awaitCommand(() => platform.createWant(request));
  const want = result.state.wants.get(result.want_id);
  if (!want) throw new Error(`orchestrator replied with unknown want ${result.want_id}`);
  return { want_id: result.want_id, want: wantView(result.state, want) };
}

export function wantsRoutes({ platform }: ServerContext): Router {
  const router = Router();

  router.get('/api/wants', (req, res) => {
    const q = validateQuery(WantListQuerySchema, req.query);
    res.json(listWants(platform.state(), { ...toPageQuery(q), ...(q.status ? { status: q.status } : {}) }) satisfies Page<WantView>);
  });

  // Most creates take the fast path in front of express (fast-create-want.ts); this one serves the rest.
  router.post('/api/wants', async (req, res) => {
    res.status(201).json(await createWant(platform, req.body));
  });

  router.get('/api/wants/:id', (req, res) => {
    const state = platform.state();
    const want = state.wants.get(req.params.id);
    if (!want) throw new HttpError(404, unknownWant(req.params.id, state.created.wants), req.params.id);
    res.json(wantView(state, want) satisfies WantView);
  });

  router.get('/api/wants/:id/tree', (req, res) => {
    const { limit = WANT_TREE_DEFAULT } = validateQuery(WantTreeQuerySchema, req.query);
    const state = platform.state();
    const tree = wantTree(state, req.params.id, limit);
    if (!tree) throw new HttpError(404, unknownWant(req.params.id, state.created.wants), req.params.id);
    res.json(tree satisfies WantTreeReply);
  });

  router.delete('/api/wants/:id', async (req, res) => {
    const result = await awaitCommand(() => platform.cancelWant(req.params.id));
    const want = result.state.wants.get(result.want_id);
    if (!want) throw new Error(`orchestrator replied with unknown want ${result.want_id}`);
    res.status(200).json(wantView(result.state, want) satisfies WantView);
  });

  return router;
}

function unknownWant(id: string, created: number): string {
  return `No want with id '${id}'${notFoundReason(id, 'w-', created)}. ${LIST_WANTS}`;
}
