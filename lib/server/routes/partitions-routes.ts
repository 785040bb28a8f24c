import { Router } from 'express';
import type { Page } from '../../api/page.js';
import type { PartitionView } from '../../api/views.js';
import type { LineageReply, PartitionDetailView } from '../../api/partitions-change.js';
import { PARTITION_LOOKUP_EXAMPLE, type PartitionLookupReply } from '../../api/partition-lookup.js';
import { LineageQuerySchema, PartitionDetailQuerySchema, PartitionListQuerySchema, PartitionLookupBodySchema } from '../../api/schemas/partitions.js';
import { listPartitions, lookupPartitions } from '../queries.js';
import { lineage, LINEAGE_MAX_NODES, partitionDetail } from '../lineage-queries.js';
import { HttpError } from '../http-error.js';
import { toPageQuery } from '../request-parsing.js';
import { DEFAULT_PAGE } from '../../api/schemas/pages.js';
import { validateBody, validateQuery } from '../validate.js';
import type { ServerContext } from '../server-context.js';
import { activeWantsOn, type BuildState } from '../../state/build-state.js';

export function partitionsRoutes({ platform }: ServerContext): Router {
  const router = Router();
  router.get('/api/partitions', (req, res) => {
    const q = validateQuery(PartitionListQuerySchema, req.query);
    res.json(
      listPartitions(platform.state(), {
        ...toPageQuery(q),
        ...(q.status ? { status: q.status } : {}),
        ...(q.prefix ? { prefix: q.prefix } : {}),
      }) satisfies Page<PartitionView>,
    );
  });

  // A read, though a POST: a page's worth of refs does not fit in a URL.
  router.post('/api/partitions/lookup', (req, res) => {
    const { refs } = validateBody(PartitionLookupBodySchema, req.body, { what: 'a lookup', example: PARTITION_LOOKUP_EXAMPLE });
    res.json(lookupPartitions(platform.state(), refs) satisfies PartitionLookupReply);
  });

  // The ref is one path segment, URL-encoded ('/' as %2F): express decodes it.
  router.get('/api/partitions/:ref', (req, res) => {
    const q = validateQuery(PartitionDetailQuerySchema, req.query);
    const detail = partitionDetail(platform.state(), req.params.ref, {
      builds_offset: q.builds_offset ?? 0,
      builds_limit: q.builds_limit ?? 20,
      downstream_limit: q.downstream_limit ?? DEFAULT_PAGE,
    });
    if (!detail) throw new HttpError(404, unknownRef(platform.state(), req.params.ref));
    res.json(detail satisfies PartitionDetailView);
  });

  router.get('/api/partitions/:ref/lineage', (req, res) => {
    const { direction = 'upstream', depth = 3 } = validateQuery(LineageQuerySchema, req.query);
    const tree = lineage(platform.state(), req.params.ref, direction, depth);
    if (!tree) throw new HttpError(404, unknownRef(platform.state(), req.params.ref));
    res.json({ direction, depth, max_nodes: LINEAGE_MAX_NODES, root: tree } satisfies LineageReply);
  });
  return router;
}

/** Wants named in a 404 of a ref they want, before "and more". */
const WANTING_SHOWN = 3;

function unknownRef(state: BuildState, ref: string): string {
  // No hint to encode a '/' here: a ref that was not encoded is more than one segment, and reaches no partition route
  // (app.ts's last 404 says how to encode it).
  // Its wants may have ended before a run for it began: canceled, or failed because an input of it failed (their
  // status says which; no index of ended wants by ref is kept, so they are pointed at, not listed).
  const unseen =
    `No partition '${ref}' has been seen: nothing has built it, nor begun to. A want for it that ended before its run ` +
    `began leaves none: canceled, or upstream_failed (an input of it failed); see platform want list --status upstream_failed.`;
  // Wanted and not begun: its run waits (on inputs being built, a cap, a config); the want says on what.
  const wanting: string[] = [];
  for (const id of activeWantsOn(state, ref)) if (wanting.push(id) > WANTING_SHOWN) break;
  if (wanting.length === 0) return unseen;
  const more = wanting.length > WANTING_SHOWN ? ' and more' : '';
  const named = wanting.slice(0, WANTING_SHOWN).join(', ');
  return `${unseen} It is wanted by ${named}${more}, whose run for it has not begun: see what it waits on with GET /api/wants/${wanting[0]}/tree (platform want tree ${wanting[0]}).`;
}
