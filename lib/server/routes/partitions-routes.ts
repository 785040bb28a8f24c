import { Router } from 'express';
import type { Page } from '../../api/page.js';
import type { PartitionView } from '../../api/views.js';
import { PARTITION_STATUSES } from '../../state/build-state.js';
import { listPartitions } from '../queries.js';
import { lineage, LINEAGE_MAX_NODES, partitionDetail } from '../lineage-queries.js';
import { HttpError } from '../http-error.js';
import { DEFAULT_PAGE, enumParam, intParam, MAX_PAGE, MAX_REF_LENGTH, pageQuery, stringParam } from '../request-parsing.js';
import type { ServerContext } from '../server-context.js';

export function partitionsRoutes({ platform }: ServerContext): Router {
  const router = Router();
  router.get('/api/partitions', (req, res) => {
    const status = enumParam(req.query, 'status', PARTITION_STATUSES);
    const prefix = stringParam(req.query, 'prefix', MAX_REF_LENGTH);
    res.json(
      listPartitions(platform.state(), {
        ...pageQuery(req.query),
        ...(status ? { status } : {}),
        ...(prefix ? { prefix } : {}),
      }) satisfies Page<PartitionView>,
    );
  });

  // The ref is one path segment, URL-encoded ('/' as %2F): express decodes it.
  router.get('/api/partitions/:ref', (req, res) => {
    const detail = partitionDetail(platform.state(), req.params.ref, {
      builds_offset: intParam(req.query, 'builds_offset', 0, 0, Number.MAX_SAFE_INTEGER),
      builds_limit: intParam(req.query, 'builds_limit', 20, 1, MAX_PAGE),
      downstream_limit: intParam(req.query, 'downstream_limit', DEFAULT_PAGE, 1, MAX_PAGE),
    });
    if (!detail) throw new HttpError(404, unknownRef(req.params.ref));
    res.json(detail);
  });

  router.get('/api/partitions/:ref/lineage', (req, res) => {
    const direction = enumParam(req.query, 'direction', ['upstream', 'downstream'] as const) ?? 'upstream';
    const depth = intParam(req.query, 'depth', 3, 1, 50);
    const tree = lineage(platform.state(), req.params.ref, direction, depth);
    if (!tree) throw new HttpError(404, unknownRef(req.params.ref));
    res.json({ direction, depth, max_nodes: LINEAGE_MAX_NODES, root: tree });
  });
  return router;
}

function unknownRef(ref: string): string {
  return `No partition '${ref}' has been seen (never wanted or built). Encode the ref as one path segment: '/' as %2F.`;
}
