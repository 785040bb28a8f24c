/**
 * The last middleware: every error becomes JSON `{"error", "want_id"?}`; a disk that refused a write is a 507 (full)
 * or a 503; only real faults are 500s, and logged.
 */
import type { NextFunction, Request, Response } from 'express';
import { HttpError, errorBody } from './http-error.js';
import { errorMessage } from '../errors.js';
import { storageFault } from '../system/storage-fault.js';
import { EventsCompactedError } from '../events/events-compacted-error.js';

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
    if (err instanceof HttpError) {
      res.set(err.headers).status(err.status).json(errorBody(err.message, err.wantId));
      return;
    }
    if (err instanceof EventsCompactedError) {
      res.status(410).json({ ...errorBody(`${err.message[0]!.toUpperCase()}${err.message.slice(1)}.`), first_event_id: err.firstId });
      return;
    }
    if (isBodyParserError(err)) {
      switch (err.type) {
        case 'entity.too.large':
          res.status(413).json(errorBody(`The request body is larger than the limit of ${err.limit !== undefined ? `${err.limit} bytes` : '1 MiB'}; send less per request.`));
          return;
        case 'entity.parse.failed':
          res.status(400).json(errorBody(`The body is not valid JSON: ${err.message}.`));
          return;
        case 'encoding.unsupported':
        case 'charset.unsupported':
          res.status(415).json(errorBody(`Unsupported body encoding: ${err.message}. Send UTF-8 JSON.`));
          return;
        default:
          if (err.status && err.status >= 400 && err.status < 500) {
            res.status(400).json(errorBody(`Bad request: ${err.message}.`));
            return;
          }
      }
    }
    // Client faults flagged by express's own layers without a body-parser `type`: a corrupt gzip/deflate body
    // (zlib's error, given status 400 by body-parser), a path parameter that is not valid percent-encoding, ...
    const status = clientErrorStatus(err);
    if (status !== undefined) {
      res.status(status === 413 ? 413 : 400).json(errorBody(`Bad request: ${errorMessage(err)}.`));
      return;
    }
    const storage = storageFault(err);
    if (storage) {
      logError(`${req.method} ${req.originalUrl}: ${storage.message} (${errorMessage(err)})`);
      if (storage.retryAfterSeconds !== undefined) res.set('Retry-After', String(storage.retryAfterSeconds));
      res.status(storage.status).json(errorBody(storage.message));
      return;
    }
    logError(`${req.method} ${req.originalUrl} failed: ${err instanceof Error ? err.stack : String(err)}`);
    res.status(500).json(errorBody('Internal error; the server log has the details.'));
  };
}

/** The 4xx status an http-errors style error carries (`status` or `statusCode`), if any. */
function clientErrorStatus(err: unknown): number | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const e = err as { status?: unknown; statusCode?: unknown };
  const status = typeof e.status === 'number' ? e.status : typeof e.statusCode === 'number' ? e.statusCode : undefined;
  return status !== undefined && status >= 400 && status < 500 ? status : undefined;
}
