import { Router } from 'express';
import type { ServerContext } from '../server-context.js';

// Placeholder until the Connect binding lands.
export function serviceRoutes(_ctx: ServerContext): Router {
  return Router();
}
