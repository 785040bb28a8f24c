/**
 * `POST /api/wants` in front of express. Creating wants is the one request clients send by the thousand, and express's
 * layers (routing through every router, body-parser's streams, `res.json`'s ETag) cost more than the want itself:
 * about 0.75 ms of the daemon's 1.5 ms a want under 16 clients (docs/BENCHMARKS.md). This path does what those
 * layers do for the plain request (loopback Host, the token, a UTF-8 JSON body under the limit) and hands every
 * other request, untouched, to express: one with an Origin (CORS and the origin guard), another encoding or type.
 * The want itself is made by the same `createWant` as the express route, and errors become the same replies.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { MAX_BODY_BYTES, checkUtf8 } from './json-body.js';
import { duplicateKey, duplicateKeyMessage } from './duplicate-keys.js';
import { errorReply } from './error-handler.js';
import { HttpError } from './http-error.js';
import { plainRequest, type Listener } from './fast-lane.js';
import { createWant } from './routes/wants-routes.js';
import type { ServerContext } from './server-context.js';

export function withFastCreateWant(ctx: ServerContext, logError: (m: string) => void, rest: Listener): Listener {
  const plain = plainRequest(ctx);
  const fastCreate = (req: IncomingMessage): boolean =>
    req.method === 'POST' &&
    req.url === '/api/wants' &&
    isUtf8Json(req.headers['content-type']) &&
    (req.headers['content-encoding'] === undefined || req.headers['content-encoding'] === 'identity') &&
    plain(req);
  return (req, res) => {
    let fast = false;
    try {
      fast = fastCreate(req);
    } catch {
      // Whatever a header holds, express answers what this path cannot read.
    }
    if (!fast) return rest(req, res);
    void handle(ctx, logError, req, res);
  };
}

async function handle(ctx: ServerContext, logError: (m: string) => void, req: IncomingMessage, res: ServerResponse): Promise<void> {
  try {
    const text = await readBody(req);
    // As body-parser: no body at all is none; an empty one is `{}`.
    let body: unknown = hasBody(req) ? {} : undefined;
    if (text !== '') {
      try {
        // As body-parser: a UTF-8 byte order mark before the JSON is not part of it.
        body = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
      } catch (err) {
        throw Object.assign(new Error((err as Error).message), { type: 'entity.parse.failed' });
      }
      const twice = duplicateKey(text, body);
      if (twice !== undefined) throw new HttpError(400, duplicateKeyMessage(twice));
    }
    send(res, 201, JSON.stringify(await createWant(ctx.platform, body)));
  } catch (err) {
    // A client that went away mid-request hears nothing, and it is not a fault of ours to log.
    if (res.destroyed || req.socket.destroyed) return;
    const reply = errorReply(err, 'POST /api/wants', logError);
    send(res, reply.status, JSON.stringify(reply.body), reply.headers);
  }
}

function send(res: ServerResponse, status: number, json: string, headers: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, { ...headers, 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(json) });
  res.end(json);
}

/** The body as text, refused (413, as express's body-parser does) past the limit without reading the rest. */
function readBody(req: IncomingMessage): Promise<string> {
  // The rest of a body that is too large is not read: the connection closes after the reply.
  const tooLarge = () =>
    new HttpError(413, `The request body is larger than the limit of ${MAX_BODY_BYTES} bytes; send less per request.`, undefined, { Connection: 'close' });
  if (Number(req.headers['content-length'] ?? 0) > MAX_BODY_BYTES) return Promise.reject(tooLarge());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        req.removeAllListeners('data');
        req.pause();
        reject(tooLarge());
        return;
      }
      chunks.push(chunk);
    });
    req.once('end', () => {
      const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
      try {
        checkUtf8(body);
      } catch (err) {
        return reject(err);
      }
      resolve(body.toString('utf8'));
    });
    req.once('error', reject);
    // Closed before its end: the body will never be whole.
    req.once('close', () => {
      if (!req.complete) reject(new Error('the client closed the connection before the body was sent'));
    });
  });
}

function hasBody(req: IncomingMessage): boolean {
  return req.headers['transfer-encoding'] !== undefined || !Number.isNaN(Number.parseInt(req.headers['content-length'] ?? '', 10));
}

/** `application/json`, with no charset or a UTF-8 one (anything else is left to body-parser's 415). */
function isUtf8Json(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  if (contentType === 'application/json') return true; // what nearly every client sends: no split
  const [type, ...params] = contentType.toLowerCase().split(';').map((p) => p.trim());
  if (type !== 'application/json') return false;
  // Anything unusual (an empty or odd parameter) is left to express's own parsing of the header.
  return params.every((p) => p === 'charset=utf-8' || p === 'charset="utf-8"');
}
