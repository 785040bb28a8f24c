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
 * - `too_large`: `resource_exhausted`, as for a body over the limit: the request is well formed but asks for more
 *   than one answer may hold (RPC_GRAPH_BUDGET); the message says how to ask for less. Refused whole, not
 *   answered in part: the spec's reply messages have no field to mark a part, and a client that did not look for
 *   one would take part of a job graph for all of it.
 * Anything else is `internal`, logged, with a generic message.
 *
 * Each call is paced (system/work-pacer.ts): it lets the event loop turn every few thousand refs or inputs, so
 * other requests and the orchestrator's steps go on meanwhile, and stops at the next slice once the request's
 * Connect-Timeout-Ms passes or its client disconnects.
 */
import { Router, type RequestHandler } from 'express';
import type { ConnectCode } from '../../api/error-body.js';
import { RPC_GRAPH_BUDGET } from '../../api/platform-service.js';
import type { GraphBudget } from '../../graph/graph-budget.js';
import { isGraphError, type GraphErrorCode } from '../../graph/graph-error.js';
import { PLATFORM_SERVICE, platformService } from '../../proto/schema.js';
import { refProblem } from '../../orchestrator/request-checks.js';
import { WorkPacer } from '../../system/work-pacer.js';
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
  too_large: 'resource_exhausted',
  config_failed: 'failed_precondition',
  invalid_graph: 'failed_precondition',
};

export function graphErrorToRpc(err: unknown): RpcError | undefined {
  return isGraphError(err) ? new RpcError(GRAPH_ERROR_CODES[err.code], err.message) : undefined;
}

/** The implementations, by RPC name; each takes the request's validated `output_refs` and its pacer. */
type Implementation = (refs: string[], pacer: WorkPacer) => Promise<object>;

export function serviceRoutes(
  ctx: ServerContext,
  logError: (message: string) => void = (m) => process.stderr.write(`${m}\n`),
  budget: GraphBudget = RPC_GRAPH_BUDGET,
): Router {
  const implementations: Record<string, Implementation> = {
    GetJobConfigs: (refs, pacer) => getJobConfigs(ctx.platform.resolver, refs, budget, pacer),
    AnalyzeGraph: (refs, pacer) => analyzeGraph(ctx.platform.resolver, refs, budget, pacer),
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
          invoke: async (request, signal) => {
            const refs = outputRefsOf(request);
            await answerFromTheGraphOnDisk(ctx);
            return implementation(refs, new WorkPacer(signal));
          },
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

/**
 * An answer comes from platform.json as it is now, as a write's does (graph-problem.ts): without this look, a call
 * right after an edit answered from the graph before it ("No job produces" a job just added), and one while the file
 * is broken answered from the last valid graph without a word of it.
 */
async function answerFromTheGraphOnDisk(ctx: ServerContext): Promise<void> {
  const problem = await ctx.platform.refreshGraphAfterTurn();
  if (problem) {
    throw new RpcError('failed_precondition', `${problem.message} (the server goes on with the last valid graph; fix the file and retry)`);
  }
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
    throw new RpcError('invalid_argument', `output_refs has ${refs.length} refs; the limit is ${MAX_OUTPUT_REFS} per request: split them over several requests.`);
  }
  refs.forEach((ref, i) => {
    const problem = refProblem(ref, `output_refs[${i}]`);
    if (problem !== undefined) throw new RpcError('invalid_argument', problem);
  });
  return refs;
}
