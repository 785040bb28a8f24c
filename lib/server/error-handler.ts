/**
 * The last middleware: every error becomes JSON `{"error", "want_id"?}` (a PlatformService path's a Connect error); a disk that refused a write is a 507 (full)
 * or a 503; only real faults are 500s, and logged.
 */
import type { NextFunction, Request, Response } from 'express';
import { HttpError, errorBody } from './http-error.js';
import type { ErrorBody } from '../api/error-body.js';
import { errorMessage } from '../errors.js';
import { storageFault } from '../system/storage-fault.js';
import { EventsCompactedError } from '../events/events-compacted-error.js';
import { writeRpcError } from './connect/connect-unary.js';
import { isServicePath, refusalAsRpcError } from './connect/refusal-as-rpc-error.js';

interface BodyParserError {
  type: string;
  status?: number;
  limit?: number;
  message: string;
}

function isBodyParserError(err: unknown): err is BodyParserError {
  return typeof err === 'object' && err !== null && typeof (err as { type?: unknown }).type === 'string';
}

export function errorHandler(logError: (message: string) => void) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction): void => {
    if (res.headersSent) {
      res.end();
      return;
    }
    const reply = errorReply(err, `${req.method} ${req.originalUrl}`, logError);
    if (isServicePath(req.path)) {
      writeRpcError(res, refusalAsRpcError(reply.status, reply.body.error, reply.headers));
      return;
    }
    res.set(reply.headers).status(reply.status).json(reply.body);
  };
}

export interface ErrorReply {
  status: number;
  headers: Record<string, string>;
  body: ErrorBody & { first_event_id?: number };
}

/** The response an error becomes (`request` names it in the server log when it is a fault of ours). */
export function errorReply(err: unknown, request: string, logError: (message: string) => void): ErrorReply {
  const reply = (status: number, body: ErrorReply['body'], headers: Record<string, string> = {}): ErrorReply => ({ status, headers, body });
  if (err instanceof HttpError) return reply(err.status, errorBody(err.message, err.wantId), err.headers);
  if (err instanceof EventsCompactedError) {
    return reply(410, { ...errorBody(`${err.message[0]!.toUpperCase()}${err.message.slice(1)}.`), first_event_id: err.firstId });
  }
  if (isBodyParserError(err)) {
    switch (err.type) {
      case 'entity.too.large':
        return reply(413, errorBody(`The request body is larger than the limit of ${err.limit !== undefined ? `${err.limit} bytes` : '1 MiB'}; send less per request.`));
      case 'entity.parse.failed':
        return reply(400, errorBody(`The body is not valid JSON: ${err.message}.`));
      case 'encoding.unsupported':
      case 'charset.unsupported':
        return reply(415, errorBody(`Unsupported body encoding: ${err.message}. Send UTF-8 JSON.`));
      default:
        if (err.status && err.status >= 400 && err.status < 500) return reply(400, errorBody(`Bad request: ${err.message}.`));
    }
  }
  // Client faults flagged by express's own layers without a body-parser `type`: a corrupt gzip/deflate body
  // (zlib's error, given status 400 by body-parser), a path parameter that is not valid percent-encoding, ...
  const status = clientErrorStatus(err);
  // The router's URIError for a path segment whose percent-encoding is not UTF-8 ("Failed to decode param '%FF'").
  if (status === 400 && err instanceof URIError) {
    const segment = /'(.*)'/.exec(err.message)?.[1];
    return reply(400, errorBody(`The path segment ${segment !== undefined ? `'${segment}' ` : ''}is not percent-encoded UTF-8: encode an id or ref as UTF-8, then percent-encode it (encodeURIComponent).`));
  }
  if (status !== undefined) return reply(status === 413 ? 413 : 400, errorBody(`Bad request: ${errorMessage(err)}.`));
  const storage = storageFault(err);
  if (storage) {
    logError(`${request}: ${storage.message} (${errorMessage(err)})`);
    const headers: Record<string, string> = storage.retryAfterSeconds !== undefined ? { 'Retry-After': String(storage.retryAfterSeconds) } : {};
    return reply(storage.status, errorBody(storage.message), headers);
  }
  logError(`${request} failed: ${err instanceof Error ? err.stack : String(err)}`);
  return reply(500, errorBody('Internal error; the server log has the details.'));
}

/** The 4xx status an http-errors style error carries (`status` or `statusCode`), if any. */
function clientErrorStatus(err: unknown): number | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const e = err as { status?: unknown; statusCode?: unknown };
  const status = typeof e.status === 'number' ? e.status : typeof e.statusCode === 'number' ? e.statusCode : undefined;
  return status !== undefined && status >= 400 && status < 500 ? status : undefined;
}
