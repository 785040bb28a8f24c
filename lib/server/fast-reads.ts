/**
 * The reads clients send by the thousand, in front of express: `GET /health`, `GET /api/wants/:id` and a page of
 * `GET /api/wants`. Express's router allocates ~35 KB a request walking its layers (a third of it promoted by the
 * next scavenge), and those scavenges, not the read, were the p99 of reads (docs/BENCHMARKS.md, session 9). This
 * path does what the layers do for the plain request (fast-lane.ts) and answers as express would, ETag included;
 * every other request goes to express untouched: one with an Origin, a conditional one (express answers its 304),
 * an id that is percent-encoded or not found (express's 404), a query that is not plain `name=value` pairs of
 * letters and digits or that does not validate (express's parsing and its 400), any other method or path.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Page } from '../api/page.js';
import { WantListQuerySchema } from '../api/schemas/wants.js';
import type { WantView } from '../api/views.js';
import { listWants } from './queries.js';
import { toPageQuery } from './request-parsing.js';
import { validateQuery } from './validate.js';
import { wantView } from './views.js';
import type { ServerContext } from './server-context.js';
import { plainRequest, type Listener } from './fast-lane.js';

const WANT_PATH = /^\/api\/wants\/([A-Za-z0-9_.-]+)$/;
/** Where express's query parser and URLSearchParams agree: no encoding, brackets, or repeated names. */
const PLAIN_QUERY = /^(?:[A-Za-z_]+=[A-Za-z0-9_.-]*)(?:&[A-Za-z_]+=[A-Za-z0-9_.-]*)*$/;

export function withFastReads(ctx: ServerContext, rest: Listener): Listener {
  const plain = plainRequest(ctx);
  return (req, res) => {
    const conditional = req.headers['if-none-match'] !== undefined || req.headers['if-modified-since'] !== undefined;
    if (req.method !== 'GET' || conditional || !plain(req)) return rest(req, res);
    const url = req.url ?? '';
    if (url === '/health') return send(res, 'text/plain; charset=utf-8', 'OK');
    if (url.startsWith('/api/wants?') || url === '/api/wants') return list(ctx, url, req, res, rest);
    const id = WANT_PATH.exec(url)?.[1];
    if (id === undefined) return rest(req, res);
    const state = ctx.platform.state();
    const want = state.wants.get(id);
    if (!want) return rest(req, res);
    send(res, 'application/json; charset=utf-8', JSON.stringify(wantView(state, want) satisfies WantView));
  };
}

function list(ctx: ServerContext, url: string, req: IncomingMessage, res: ServerResponse, rest: Listener): void {
  const search = url.slice('/api/wants?'.length);
  if (search !== '' && !PLAIN_QUERY.test(search)) return rest(req, res);
  const query: Record<string, string> = {};
  for (const pair of search === '' ? [] : search.split('&')) {
    const eq = pair.indexOf('=');
    const name = pair.slice(0, eq);
    if (Object.hasOwn(query, name)) return rest(req, res);
    query[name] = pair.slice(eq + 1);
  }
  let q: ReturnType<typeof validateQuery<typeof WantListQuerySchema>>;
  try {
    q = validateQuery(WantListQuerySchema, query);
  } catch {
    return rest(req, res);
  }
  const page: Page<WantView> = listWants(ctx.platform.state(), { ...toPageQuery(q), ...(q.status ? { status: q.status } : {}) });
  send(res, 'application/json; charset=utf-8', JSON.stringify(page));
}

function send(res: ServerResponse, type: string, body: string): void {
  const bytes = Buffer.byteLength(body);
  res.writeHead(200, { 'Content-Type': type, 'Content-Length': bytes, ETag: weakEtag(body, bytes) });
  res.end(body);
}

/** express's ETag (the `etag` package, weak): the body's length and the start of its SHA-1. */
function weakEtag(body: string, bytes: number): string {
  return `W/"${bytes.toString(16)}-${createHash('sha1').update(body, 'utf8').digest('base64').substring(0, 27)}"`;
}
