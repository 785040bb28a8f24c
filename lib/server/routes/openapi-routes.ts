import { Router } from 'express';
import { openApiDocument } from '../openapi.js';

/** `GET /api/openapi.json`: the API's OpenAPI 3.1 document, printed once from the schemas the routes validate with. */
export function openApiRoutes(): Router {
  const router = Router();
  // Built at the first request, not at every start (13 ms of it): few daemons are ever asked for it.
  let document: string | undefined;
  router.get('/api/openapi.json', (_req, res) => {
    res.type('application/json').send((document ??= JSON.stringify(openApiDocument())));
  });
  return router;
}
