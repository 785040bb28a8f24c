import { Router } from 'express';
import { openApiDocument } from '../openapi.js';

/** `GET /api/openapi.json`: the API's OpenAPI 3.1 document, printed once from the schemas the routes validate with. */
export function openApiRoutes(): Router {
  const router = Router();
  const document = JSON.stringify(openApiDocument());
  router.get('/api/openapi.json', (_req, res) => {
    res.type('application/json').send(document);
  });
  return router;
}
