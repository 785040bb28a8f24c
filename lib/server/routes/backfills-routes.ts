import { Router } from 'express';
import type { BackfillView, CreateBackfillReply } from '../../api/backfills.js';
import type { Page } from '../../api/page.js';
import { backfillView, backfillWant, listBackfills } from '../backfill-queries.js';
import { awaitCommand } from '../command-reply.js';
import { HttpError } from '../http-error.js';
import { checkGraph } from '../graph-problem.js';
import { notFoundReason } from '../pruned-ids.js';
import { pageQuery, parseCreateBackfill } from '../request-parsing.js';
import type { ServerContext } from '../server-context.js';

export function backfillsRoutes({ platform }: ServerContext): Router {
  const router = Router();
  const notFound = (id: string) =>
    new HttpError(404, `No backfill with id '${id}'${notFoundReason(id, 'bf-', platform.state().created.backfills)}. List them: platform backfills list (GET /api/backfills).`);

  router.get('/api/backfills', (req, res) => {
    res.json(listBackfills(platform.state(), pageQuery(req.query)) satisfies Page<BackfillView>);
  });

  router.post('/api/backfills', async (req, res) => {
    const request = parseCreateBackfill(req.body);
    await checkGraph(platform);
    const result = await awaitCommand(() => platform.createBackfill(request));
    if (!result.backfill) throw new Error('orchestrator replied to a backfill without one');
    res.status(201).json({ backfill_id: result.backfill.backfill_id, want_id: result.want_id, partitions: result.backfill.partitions } satisfies CreateBackfillReply);
  });

  router.get('/api/backfills/:id', (req, res) => {
    const state = platform.state();
    const want = backfillWant(state, req.params.id);
    if (!want) throw notFound(req.params.id);
    res.json(backfillView(state, want) satisfies BackfillView);
  });

  /** Cancels the backfill's want: its queued runs are dropped, its running ones killed unless someone else needs them. */
  router.delete('/api/backfills/:id', async (req, res) => {
    const want = backfillWant(platform.state(), req.params.id);
    if (!want) throw notFound(req.params.id);
    const result = await awaitCommand(() => platform.cancelWant(want.want_id, `backfill ${req.params.id} canceled by request`)).catch(
      (err: unknown) => {
        // The refusal names the backfill the caller asked about, not the want behind it.
        if (err instanceof HttpError && err.status === 409) {
          const ended = platform.state().wants.get(want.want_id)?.status ?? 'ended';
          throw new HttpError(409, `Backfill '${req.params.id}' already ended (${ended}); only a backfill that is still building can be canceled.`, want.want_id);
        }
        throw err;
      },
    );
    const after = result.state.wants.get(want.want_id)!;
    res.status(200).json(backfillView(result.state, after) satisfies BackfillView);
  });

  return router;
}
