/**
 * The `platform.v1.PlatformService` binding: Connect protocol, unary, on the same express app as the JSON API.
 *
 *   POST /platform.v1.PlatformService/GetJobConfigs   JobConfigRequest    -> JobConfigResponse
 *   POST /platform.v1.PlatformService/AnalyzeGraph    GraphAnalyzeRequest -> GraphAnalyzeResponse
 *
 * Bodies are `application/json` (canonical proto3 JSON) or `application/proto`; see connect-unary.ts for the
 * protocol details. Mounted before express.json: the handlers read the raw body themselves.
 *
 * Under `/platform.v1.PlatformService/` a method the service does not have is 404 `unimplemented`, and an HTTP method
 * other than POST is 405 `unimplemented` with `Allow: POST` (what connect-go and connect-es answer: the methods are
 * not marked `NO_SIDE_EFFECTS`, so the Connect GET variant does not apply). Both bodies are Connect errors.
 *
 * Errors of the graph become Connect codes:
 * - `unknown_ref`, `ambiguous_ref`, `cycle`: `invalid_argument`; the request names refs the graph cannot build, and
 *   the message names the ref or the cycle. So are an empty `output_refs` and a malformed body.
 * - `config_failed` (and `invalid_graph`): `failed_precondition`. The request is fine and the server is not at fault
 *   (so not `internal`, which is for broken invariants and is logged as a server fault); the workspace is in a state
 *   where the answer cannot be computed (a config program that exits non-zero, times out or prints bad JSON) and
 *   retrying will not help until someone fixes it, which is exactly `failed_precondition`. The message carries the
 *   program's stderr tail.
 * Anything else is `internal`, logged, with a generic message.
 */
import { Router, type RequestHandler } from 'express';
import type { ConnectCode } from '../../api/error-body.js';
import { isGraphError, type GraphErrorCode } from '../../graph/graph-error.js';
import { PLATFORM_SERVICE, platformService } from '../../proto/schema.js';
import { refProblem } from '../../orchestrator/request-checks.js';
import type { ServerContext } from '../server-context.js';
import { analyzeGraph } from './analyze-graph.js';
import { RpcError, unaryHandler, writeRpcError } from './connect-unary.js';
import { getJobConfigs } from './get-job-configs.js';

/** Most refs in one request. */
export const MAX_OUTPUT_REFS = 10_000;

const PREFIX = `/${PLATFORM_SERVICE}/`;

const GRAPH_ERROR_CODES: Readonly<Record<GraphErrorCode, ConnectCode>> = {
  unknown_ref: 'invalid_argument',
  ambiguous_ref: 'invalid_argument',
  cycle: 'invalid_argument',
  config_failed: 'failed_precondition',
  invalid_graph: 'failed_precondition',
};

export function graphErrorToRpc(err: unknown): RpcError | undefined {
  return isGraphError(err) ? new RpcError(GRAPH_ERROR_CODES[err.code], err.message) : undefined;
}

/** The implementations, by RPC name; each takes the request's validated `output_refs`. */
type Implementation = (refs: string[]) => Promise<object>;

export function serviceRoutes(
  ctx: ServerContext,
  logError: (message: string) => void = (m) => process.stderr.write(`${m}\n`),
): Router {
  const implementations: Record<string, Implementation> = {
    GetJobConfigs: (refs) => getJobConfigs(ctx.platform.resolver, refs),
    AnalyzeGraph: (refs) => analyzeGraph(ctx.platform.resolver, refs),
  };

  // One handler per method of the service as the .proto declares it: a method without an implementation (or an
  // implementation without a method) is a programming error found at start-up.
  const service = platformService();
  const handlers = new Map<string, RequestHandler>();
  for (const method of service.methodsArray) {
    const implementation = implementations[method.name];
    if (implementation === undefined) throw new Error(`${PLATFORM_SERVICE}/${method.name} has no implementation`);
    method.resolve();
    const path = `${PLATFORM_SERVICE}/${method.name}`;
    handlers.set(
      method.name,
      unaryHandler(
        {
          path,
          requestType: method.resolvedRequestType!,
          responseType: method.resolvedResponseType!,
          invoke: async (request) => implementation(outputRefsOf(request)),
        },
        { mapError: graphErrorToRpc, logError },
      ),
    );
  }
  for (const name of Object.keys(implementations)) {
    if (!handlers.has(name)) throw new Error(`${PLATFORM_SERVICE} declares no method ${name}`);
  }
  const known = [...handlers.keys()].join(', ');

  const router = Router();
  router.use((req, res, next) => {
    if (!req.path.startsWith(PREFIX)) return next();
    const name = req.path.slice(PREFIX.length);
    const handler = handlers.get(name);
    if (handler === undefined) {
      const message = `${PLATFORM_SERVICE} has no method ${JSON.stringify(name)}; it has ${known}.`;
      writeRpcError(res, new RpcError('unimplemented', message, 404));
      return;
    }
    if (req.method !== 'POST') {
      const message = `${PLATFORM_SERVICE}/${name} is called with POST (Connect unary), not ${req.method}.`;
      writeRpcError(res, new RpcError('unimplemented', message, 405, { Allow: 'POST' }));
      return;
    }
    handler(req, res, next);
  });
  return router;
}

/** `output_refs` of a JobConfigRequest / GraphAnalyzeRequest, checked for shape (the graph checks the rest). */
function outputRefsOf(request: Record<string, unknown>): string[] {
  const refs = request.outputRefs as string[];
  if (refs.length === 0) {
    throw new RpcError(
      'invalid_argument',
      'output_refs is empty; give at least one partition ref, e.g. {"outputRefs": ["daily/revenue/date=2026-01-05"]}.',
    );
  }
  if (refs.length > MAX_OUTPUT_REFS) {
    throw new RpcError('invalid_argument', `output_refs has ${refs.length} refs; the limit is ${MAX_OUTPUT_REFS} per request.`);
  }
  refs.forEach((ref, i) => {
    const problem = refProblem(ref, `output_refs[${i}]`);
    if (problem !== undefined) throw new RpcError('invalid_argument', problem);
  });
  return refs;
}
