import { Router } from 'express';
import type { Page } from '../../api/page.js';
import type { PartitionView } from '../../api/views.js';
import { PARTITION_STATUSES } from '../../state/build-state.js';
import { listPartitions } from '../queries.js';
import { enumParam, MAX_REF_LENGTH, pageQuery, stringParam } from '../request-parsing.js';
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
  return router;
}
