/**
 * The Connect protocol for unary RPCs (https://connectrpc.com/docs/protocol), server side, on express: content
 * types, the request body (limit, compression), timeouts, message (de)serialization with protobufjs, and the error
 * shape. Knows nothing about the platform: a method is a name, its request/response types and an async function
 * from a plain request object to a plain response object.
 *
 * - `POST /<package>.<Service>/<Method>` only. Content-Type `application/json` (canonical proto3 JSON; charset, if
 *   given, must be UTF-8) or `application/proto` (binary); the response uses the request's codec. Anything else
 *   (e.g. `text/plain`, or the streaming `application/connect+json`) is 415 with `Accept-Post`.
 * - Request bodies above {@link MAX_RPC_BODY_BYTES} (compressed or not) are `resource_exhausted`, as in the stock
 *   Connect servers (connect-go, connect-es), which map the read limit to that code.
 * - `Content-Encoding: gzip` request bodies are accepted; any other encoding is `unimplemented` (as the protocol
 *   asks) with `Accept-Encoding: gzip`. Responses are never compressed (allowed: Accept-Encoding is a hint).
 * - `Connect-Protocol-Version`, when sent, must be `1`; it is not required, so that plain curl works.
 * - `Connect-Timeout-Ms` is honoured: past it the reply is `deadline_exceeded`, and the signal `invoke` was given
 *   is aborted (with that error), as it is with `canceled` when the client disconnects before the answer: the
 *   method stops where it next looks at the signal.
 * - Every failure is a Connect error: HTTP status from {@link CONNECT_HTTP_STATUS}, JSON body
 *   `{"code": "...", "message": "..."}` and `Content-Type: application/json`, whatever the request's codec.
 */
import type { NextFunction, Request, Response } from 'express';
import { gunzip } from 'node:zlib';
import { errorMessage } from '../../errors.js';
import { duplicateKey, duplicateKeyMessage } from '../duplicate-keys.js';
import protojson from 'protobufjs/ext/protojson.js';
import type { IConversionOptions, Message, Type } from 'protobufjs';
import type { ConnectCode, ConnectErrorBody } from '../../api/error-body.js';

/** HTTP status of each code (Connect protocol, "Error Codes"). */
export const CONNECT_HTTP_STATUS: Readonly<Record<ConnectCode, number>> = {
  canceled: 499,
  unknown: 500,
  invalid_argument: 400,
  deadline_exceeded: 504,
  not_found: 404,
  already_exists: 409,
  permission_denied: 403,
  resource_exhausted: 429,
  failed_precondition: 400,
  aborted: 409,
  out_of_range: 400,
  unimplemented: 501,
  internal: 500,
  unavailable: 503,
  data_loss: 500,
  unauthenticated: 401,
};

/** Largest request body accepted, before and after decompression: 1 MiB, as for the JSON API. */
export const MAX_RPC_BODY_BYTES = 1024 * 1024;

/** Largest Connect-Timeout-Ms a timer can wait for; longer timeouts are treated as none. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export const CONTENT_TYPE_JSON = 'application/json';
export const CONTENT_TYPE_PROTO = 'application/proto';
const ACCEPT_POST = `${CONTENT_TYPE_JSON}, ${CONTENT_TYPE_PROTO}`;

/**
 * A failure to report to the client as a Connect error. `status` overrides the code's HTTP status where the
 * protocol asks for a specific one (404 for an unknown method, 405 for a wrong HTTP method, 415 for a media type).
 */
export class RpcError extends Error {
  override readonly name = 'RpcError';
  constructor(
    readonly code: ConnectCode,
    message: string,
    readonly status: number = CONNECT_HTTP_STATUS[code],
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
  }
}

export type Codec = 'json' | 'proto';

/** A unary method: protobufjs request/response types and the implementation on plain (camelCase) objects. */
export interface UnaryMethod {
  /** Fully qualified, e.g. `platform.v1.PlatformService/GetJobConfigs` (for messages). */
  readonly path: string;
  readonly requestType: Type;
  readonly responseType: Type;
  /**
   * Gets the request as a plain object with camelCase names, every field present (defaults filled, arrays empty,
   * enums by name); returns the response in the shape `responseType.fromObject` takes. `signal` is aborted when
   * the answer is no longer wanted (deadline, disconnect); its reason is the RpcError that says which.
   */
  readonly invoke: (request: Record<string, unknown>, signal: AbortSignal) => Promise<object>;
}

export interface UnaryOptions {
  /** Turns an error of `invoke` into an RpcError; undefined = not recognised, i.e. `internal` and logged. */
  mapError?: (err: unknown) => RpcError | undefined;
  logError: (message: string) => void;
}

const TO_OBJECT: IConversionOptions = { defaults: true, arrays: true, objects: true, enums: String, longs: String };

/** The codec of a unary Content-Type header, or undefined if it is not one Connect unary uses. */
export function unaryCodec(contentType: string | undefined): Codec | undefined {
  if (contentType === undefined) return undefined;
  const [essence = '', ...params] = contentType.split(';').map((p) => p.trim().toLowerCase());
  if (essence === CONTENT_TYPE_PROTO) return params.length === 0 ? 'proto' : undefined;
  if (essence !== CONTENT_TYPE_JSON) return undefined;
  for (const param of params) {
    const [key, value = ''] = param.split('=').map((s) => s.trim());
    if (key !== 'charset' || !/^"?utf-?8"?$/.test(value)) return undefined;
  }
  return 'json';
}

/** Writes a Connect error. Never throws; does nothing once a response has started. */
export function writeRpcError(res: Response, err: RpcError): void {
  if (res.headersSent) {
    if (!res.writableEnded) res.end();
    return;
  }
  const body = Buffer.from(JSON.stringify({ code: err.code, message: err.message } satisfies ConnectErrorBody));
  res.status(err.status);
  for (const [name, value] of Object.entries(err.headers)) res.setHeader(name, value);
  res.setHeader('Content-Type', CONTENT_TYPE_JSON);
  res.setHeader('Content-Length', String(body.length));
  res.end(body);
}

/** Express handler serving `method` over the Connect unary protocol (the HTTP method must already be POST). */
export function unaryHandler(method: UnaryMethod, options: UnaryOptions) {
  return (req: Request, res: Response, _next: NextFunction): void => {
    const fail = (err: unknown): void => writeRpcError(res, toRpcError(err, method, req, options));
    let timeoutMs: number | undefined;
    try {
      timeoutMs = parseTimeout(req.header('connect-timeout-ms'));
    } catch (err) {
      fail(err);
      return;
    }
    const work = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    if (timeoutMs !== undefined && timeoutMs <= MAX_TIMER_MS) {
      const ms = timeoutMs;
      timer = setTimeout(() => {
        // The answer is due now, and `invoke` is told to stop (a config program already running finishes: the
        // resolver shares and caches its result). An unread body is not read on.
        const headers: Record<string, string> = req.complete ? {} : { Connection: 'close' };
        const message = `${method.path} did not finish within the ${ms} ms of Connect-Timeout-Ms.`;
        const err = new RpcError('deadline_exceeded', message, CONNECT_HTTP_STATUS.deadline_exceeded, headers);
        fail(err);
        work.abort(err);
      }, ms);
    }
    // A client that goes away before the answer no longer wants it: the work stops rather than run for no one.
    const onClose = (): void => {
      if (!res.writableFinished) work.abort(new RpcError('canceled', `The client of ${method.path} disconnected.`));
    };
    res.on('close', onClose);
    serve(method, req, res, work.signal)
      .catch(fail)
      .finally(() => {
        clearTimeout(timer);
        res.off('close', onClose);
      });
  };
}

async function serve(method: UnaryMethod, req: Request, res: Response, signal: AbortSignal): Promise<void> {
  const codec = unaryCodec(req.header('content-type'));
  if (codec === undefined) {
    const given = req.header('content-type');
    throw new RpcError(
      'unimplemented',
      `Content-Type ${given === undefined ? '(none)' : JSON.stringify(given)} is not supported by ${method.path}; ` +
        `send ${CONTENT_TYPE_JSON} (proto3 JSON) or ${CONTENT_TYPE_PROTO} (binary protobuf).`,
      415,
      { 'Accept-Post': ACCEPT_POST },
    );
  }
  const version = req.header('connect-protocol-version');
  if (version !== undefined && version !== '1') {
    throw new RpcError('invalid_argument', `Connect-Protocol-Version must be "1", got ${JSON.stringify(version)}.`);
  }
  const encoding = (req.header('content-encoding') ?? 'identity').trim().toLowerCase();
  if (encoding !== 'identity' && encoding !== 'gzip') {
    throw new RpcError(
      'unimplemented',
      `Content-Encoding ${JSON.stringify(encoding)} is not supported; send gzip or identity.`,
      CONNECT_HTTP_STATUS.unimplemented,
      { 'Accept-Encoding': 'gzip' },
    );
  }

  let body = await readBody(req, MAX_RPC_BODY_BYTES);
  if (encoding === 'gzip') body = await gunzipLimited(body, MAX_RPC_BODY_BYTES);
  const request = decodeRequest(method.requestType, codec, body);
  signal.throwIfAborted();
  const response = await method.invoke(request, signal);
  if (res.headersSent) return; // timed out meanwhile

  const message = method.responseType.fromObject(response as Record<string, unknown>);
  const bytes =
    codec === 'proto'
      ? Buffer.from(method.responseType.encode(message).finish())
      : Buffer.from(JSON.stringify(protojson.toJson(method.responseType, message)));
  res.status(200);
  res.setHeader('Content-Type', codec === 'proto' ? CONTENT_TYPE_PROTO : CONTENT_TYPE_JSON);
  res.setHeader('Content-Length', String(bytes.length));
  res.end(bytes);
}

/** `Connect-Timeout-Ms`: a positive whole number of at most 10 digits (protocol); undefined when absent. */
function parseTimeout(header: string | undefined): number | undefined {
  if (header === undefined) return undefined;
  // 0 is no timeout the protocol knows: a client meaning none leaves the header out.
  if (!/^\d{1,10}$/.test(header) || Number(header) === 0) {
    throw new RpcError(
      'invalid_argument',
      `Connect-Timeout-Ms must be a positive whole number of milliseconds (at most 10 digits; leave it out for none), got ${JSON.stringify(header)}.`,
    );
  }
  return Number(header);
}

function tooLarge(limit: number, what: string): RpcError {
  // Connection: close, so that the rest of an oversized body is not read just to be thrown away.
  const message = `The request ${what} is larger than the limit of ${limit} bytes; send fewer refs per request.`;
  return new RpcError('resource_exhausted', message, CONNECT_HTTP_STATUS.resource_exhausted, { Connection: 'close' });
}

/** The whole request body, refusing (without reading on) more than `limit` bytes. */
function readBody(req: Request, limit: number): Promise<Buffer> {
  const declared = req.header('content-length');
  if (declared !== undefined && Number(declared) > limit) return Promise.reject(tooLarge(limit, 'body'));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const finish = (err: unknown, value?: Buffer): void => {
      if (settled) return;
      settled = true;
      req.off('data', onData).off('end', onEnd).off('error', onError).off('aborted', onAborted);
      if (err !== undefined) reject(err);
      else resolve(value!);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        req.pause();
        finish(tooLarge(limit, 'body'));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => finish(undefined, Buffer.concat(chunks, size));
    const onError = (err: Error): void => finish(new RpcError('canceled', `The request body could not be read: ${err.message}.`));
    const onAborted = (): void => finish(new RpcError('canceled', 'The client closed the connection before sending the whole body.'));
    req.on('data', onData).on('end', onEnd).on('error', onError).on('aborted', onAborted);
  });
}

function gunzipLimited(body: Buffer, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    gunzip(body, { maxOutputLength: limit }, (err, out) => {
      if (err === null) resolve(out);
      else if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') reject(tooLarge(limit, 'body, decompressed,'));
      else reject(new RpcError('invalid_argument', `The gzip request body cannot be decompressed: ${err.message}.`));
    });
  });
}

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

function decodeRequest(type: Type, codec: Codec, body: Buffer): Record<string, unknown> {
  let message: Message;
  if (codec === 'proto') {
    try {
      message = type.decode(body);
    } catch (err) {
      throw new RpcError('invalid_argument', `The body is not a valid binary ${type.name}: ${sentence(err)}.`);
    }
  } else {
    let text: string;
    let json: unknown;
    try {
      text = UTF8.decode(body);
    } catch {
      throw new RpcError('invalid_argument', 'The JSON body is not valid UTF-8.');
    }
    try {
      json = JSON.parse(text);
    } catch (err) {
      throw new RpcError('invalid_argument', `The body is not valid JSON: ${sentence(err)}.`);
    }
    const twice = duplicateKey(text, json);
    if (twice !== undefined) throw new RpcError('invalid_argument', duplicateKeyMessage(twice));
    const both = fieldGivenTwice(type, json);
    if (both !== undefined) throw new RpcError('invalid_argument', both);
    try {
      message = protojson.fromJson(type, json);
    } catch (err) {
      // protobufjs names the value it refused with JSON.stringify, which overflows the stack on a deeply nested one.
      const why = err instanceof RangeError ? 'it nests arrays or objects too deeply' : sentence(err);
      throw new RpcError('invalid_argument', `The body is not a valid ${type.name} in proto3 JSON: ${why}. ${fieldsOf(type)}`);
    }
  }
  return type.toObject(message, TO_OBJECT);
}

/**
 * A field given under both its names (`outputRefs` and `output_refs`): proto3 JSON takes either, and protobufjs would
 * keep one of them silently, as JSON.parse does a key given twice.
 */
function fieldGivenTwice(type: Type, json: unknown): string | undefined {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return undefined;
  for (const f of type.fieldsArray) {
    const snake = f.name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
    if (snake !== f.name && f.name in json && snake in json) {
      return `The JSON body gives the field ${f.name} twice, as ${JSON.stringify(f.name)} and as ${JSON.stringify(snake)}: send it once, under one of its names (which one was meant is not clear, so nothing was done).`;
    }
  }
  return undefined;
}

/** What a message takes, for a body that misspelled or mistyped a field: "A JobConfigRequest has outputRefs (or output_refs)." */
function fieldsOf(type: Type): string {
  const names = type.fieldsArray.map((f) => {
    const snake = f.name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
    return snake === f.name ? f.name : `${f.name} (or ${snake})`;
  });
  return names.length === 0 ? `A ${type.name} has no fields: send {}.` : `A ${type.name} has ${names.join(', ')}.`;
}

function toRpcError(err: unknown, method: UnaryMethod, req: Request, options: UnaryOptions): RpcError {
  if (err instanceof RpcError) return err;
  const mapped = options.mapError?.(err);
  if (mapped !== undefined) return mapped;
  options.logError(`${req.method} ${req.originalUrl} (${method.path}) failed: ${err instanceof Error ? err.stack : String(err)}`);
  return new RpcError('internal', 'Internal error; the server log has the details.');
}

/** An error message to end a sentence with: without its own final period. */
function sentence(err: unknown): string {
  return errorMessage(err).replace(/\.$/, '');
}
