/**
 * The body of every write the JSON API serves: JSON (`application/json`, UTF-8) up to 1 MiB, or none at all. A
 * write (POST, PUT, PATCH, DELETE) that sends a body of another media type (`text/plain`, the form that `curl -d`
 * sends, none named) is refused with a 415 that says what to send, before any route sees it: express.json leaves such
 * a body unread, so a route that takes an optional body would have read it as none and done something else than
 * asked (`POST /api/gc` with the form `dry_run=true` ran a real pass).
 *
 * A write with no body (no Content-Length and no Transfer-Encoding, Content-Length 0, or a chunked body that turns
 * out empty) goes through when it names no Content-Type (or JSON's); one that names another is refused as a body of
 * that type would be (a page's empty form). Paths the operation table does not list go through too, to
 * their 404. The Connect RPCs are mounted before this and read their own bodies (application/proto included); the
 * fast path for `POST /api/wants` (fast-create-want.ts) takes only UTF-8 JSON and leaves anything else to express.
 */
import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import iconv from 'iconv-lite';
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import type { Operation } from './api-operations.js';
import { jsonOperationAt } from './allowed-methods.js';
import { HttpError } from './http-error.js';
import { duplicateKey, duplicateKeyMessage } from './duplicate-keys.js';

export const MAX_BODY_BYTES = 1024 * 1024;

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Refuses a write's body that is not JSON, then parses the JSON ones into `req.body` (express.json), then refuses
 * one that gives a key twice in an object (duplicate-keys.ts).
 */
export function jsonBody(): RequestHandler[] {
  const parse = express.json({ limit: MAX_BODY_BYTES, strict: false, verify: keepWellFormed });
  const parseJson: RequestHandler = (req, res, next) => parse(req, res, (err?: unknown) => next(err === undefined ? undefined : undecodable(req, err)));
  return [refuseOtherBodies, parseJson, refuseDuplicateKeys];
}

/**
 * body-parser passes on the decompressor's own error ('incorrect header check', 'Decompression failed') as a 400
 * without a `type`; every error of its own, and raw-body's, has one. So such an error of a compressed body is that
 * the body was not compressed as its Content-Encoding says.
 */
function undecodable(req: IncomingMessage, err: unknown): unknown {
  const encoding = (req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
  if (encoding === 'identity' || typeof err !== 'object' || err === null || 'type' in err) return err;
  const why = err instanceof Error ? ` (${err.message})` : '';
  return new HttpError(
    400,
    `The request body is not ${encoding}-compressed as its Content-Encoding: ${encoding} says${why}: ` +
      `send it compressed with ${encoding}, or uncompressed without a Content-Encoding header. Nothing was done.`,
  );
}

/** The raw body of each JSON body parsed (its text, when not UTF-8), until its keys are checked. */
const rawBodies = new WeakMap<IncomingMessage, Buffer | string>();

/**
 * A UTF-8 body whose bytes are not UTF-8 (Latin-1 text, say) is refused: decoded, each bad byte would become U+FFFD
 * and be recorded as that, so 'caf\xe9' and 'caf\xe8' would be one and the same ref.
 */
function keepWellFormed(req: IncomingMessage, _res: unknown, buf: Buffer, encoding: string): void {
  if (/^utf-?8$/i.test(encoding)) {
    checkUtf8(buf);
    rawBodies.set(req, buf);
    return;
  }
  // body-parser takes any utf-* charset and decodes it with iconv-lite: the same decoder, so the text checked is the
  // text parsed (TextDecoder('utf-16') is always little-endian where iconv-lite tells big-endian from the bytes).
  // body-parser checked the charset exists before calling verify.
  rawBodies.set(req, iconv.decode(buf, encoding));
}

function refuseDuplicateKeys(req: Request, _res: Response, next: NextFunction): void {
  const raw = rawBodies.get(req);
  if (raw === undefined) return next();
  rawBodies.delete(req);
  const twice = duplicateKey(raw, req.body);
  next(twice === undefined ? undefined : new HttpError(400, duplicateKeyMessage(twice)));
}

/** Throws the 400 of a body that is not well-formed UTF-8, naming the first bad byte. */
export function checkUtf8(buf: Buffer): void {
  if (isUtf8(buf)) return;
  const at = firstBadByte(buf);
  throw new HttpError(
    400,
    `The body is not valid UTF-8 (a byte that is not, 0x${(buf[at] ?? 0).toString(16).padStart(2, '0')}, at offset ${at}): send JSON encoded as UTF-8. Nothing was done.`,
  );
}

/** The media type of a Content-Type header is JSON's (`application/json`, any case, any parameters). */
function namesJson(contentType: string): boolean {
  return contentType.split(';', 1)[0]!.trim().toLowerCase() === 'application/json';
}

function refuseOtherBodies(req: Request, _res: Response, next: NextFunction): void {
  if (!WRITES.has(req.method) || req.is('application/json')) return next();
  const op = jsonOperationAt(req.method, req.path);
  if (op === undefined) return next();
  // A type named and not JSON is refused, body or none: an empty form or text/plain POST is what a page's <form> sends
  // without asking first, and the origin check should not be all that stands between it and a write. (`req.is` says
  // nothing of a request without a body, so JSON named on one, `curl -X DELETE -H 'Content-Type: application/json'`,
  // is told apart here by the header itself.)
  const named = req.headers['content-type'];
  if (named !== undefined && !namesJson(named)) return next(refusal(req, op));
  const length = req.headers['content-length'];
  if (length !== undefined) {
    // A malformed length is node's to refuse; 0 is no body.
    return Number(length) > 0 ? next(refusal(req, op)) : next();
  }
  if (req.headers['transfer-encoding'] === undefined) return next();
  // Chunked: refused at its first byte; one that ends with none was no body.
  const onData = (chunk: Buffer): void => {
    if (chunk.length === 0) return;
    done();
    req.resume(); // the rest is read and dropped, so the connection can serve the next request
    next(refusal(req, op));
  };
  const onEnd = (): void => {
    done();
    next();
  };
  const onError = (err: Error): void => {
    done();
    next(err);
  };
  const done = (): void => {
    req.off('data', onData);
    req.off('end', onEnd);
    req.off('error', onError);
  };
  req.on('data', onData);
  req.once('end', onEnd);
  req.once('error', onError);
}

function refusal(req: Request, op: Operation): HttpError {
  const sent = req.headers['content-type'] ? `as ${req.headers['content-type']}` : 'without a Content-Type';
  const what = `${req.method} ${req.path}`;
  const message = op.body
    ? `The body of ${what} must be JSON, sent with Content-Type: application/json, like ${op.body.example}${op.body.required ? '' : ', or no body at all'}`
    : `${what} takes no body: send none (or JSON, with Content-Type: application/json)`;
  return new HttpError(415, `${message}; this one came ${sent}. Nothing was done.`);
}

/** Where the first sequence that is not UTF-8 starts (the buffer is known to hold one). */
function firstBadByte(buf: Buffer): number {
  for (let i = 0; i < buf.length; ) {
    const b = buf[i]!;
    const n = b < 0x80 ? 1 : b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0;
    if (n === 0 || i + n > buf.length || !isUtf8(buf.subarray(i, i + n))) return i;
    i += n;
  }
  return buf.length;
}
