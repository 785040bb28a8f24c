/**
 * What a request must be to skip express (fast-create-want.ts, fast-reads.ts): what express's guards would let
 * through untouched. A loopback Host, no Origin (CORS and the origin guard are express's), and the token where the
 * daemon requires one. Anything else, whatever its headers hold, is express's to answer.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { tokenMatcher } from './access-guard.js';
import { isLoopbackHost } from './loopback-guard.js';
import type { ServerContext } from './server-context.js';

export type Listener = (req: IncomingMessage, res: ServerResponse) => void;

export function plainRequest(ctx: ServerContext): (req: IncomingMessage) => boolean {
  const carriesToken = ctx.access.token ? tokenMatcher(ctx.access.token) : undefined;
  return (req) => {
    try {
      return (
        isLoopbackHost(req.headers.host) &&
        req.headers.origin === undefined &&
        (carriesToken === undefined || carriesToken(req.headers.authorization, req.headers.cookie))
      );
    } catch {
      // Whatever a header holds, express answers what this path cannot read.
      return false;
    }
  };
}
